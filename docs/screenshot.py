"""Take the README's screenshots of the demo site with headless Chromium, each the first
screen a reader sees: the home page on a desktop (1366×900) and a phone (390×844, light
and dark), a paper page (digest first) and a revision's page, a search, and 为你推荐
from a shared link's seeds.

`make screenshots` builds the demo and runs this; on a built demo:
    .venv/bin/python docs/screenshot.py [.demo/output] [docs]
Uses Debian's /usr/bin/chromium through Playwright (fonts-wqy-microhei for the Chinese);
nothing is downloaded.
"""

from __future__ import annotations

import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PAPER = "2606.20936"  # a sample paper with a real digest and a formula-free abstract
REVISED = "2606.19345"  # one of the demo's simulated v2s: its version history on top
DESKTOP, PHONE = (1366, 900), (390, 844)
# (file, path, a query to type there, viewport, colour scheme)
SHOTS = [("home.png", "", None, DESKTOP, "light"),
         ("home-phone.png", "", None, PHONE, "light"),
         ("home-phone-dark.png", "", None, PHONE, "dark"),
         ("paper.png", f"paper/{PAPER}.html", None, DESKTOP, "light"),
         ("revised-phone.png", f"paper/{REVISED}.html", None, PHONE, "light"),
         ("search.png", "search/", "扩散模型", DESKTOP, "dark"),
         ("foryou.png", "for-you/?seed=2606.19662,2606.19961,2606.20094", None, DESKTOP,
          "light")]
# Pages that fill themselves in: what says they are done.
READY = {"foryou.png": "() => document.getElementById('foryou-results').dataset.ready === '1'"}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main(site: Path, folder: Path) -> None:
    handler = functools.partial(_Quiet, directory=str(site))
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for name, path, query, (width, height), scheme in SHOTS:
                page = browser.new_page(viewport={"width": width, "height": height},
                                        color_scheme=scheme)
                page.goto(base + path)
                if query:
                    page.locator("#q").press_sequentially(query, delay=30)
                    page.wait_for_function(
                        "() => document.querySelectorAll('#results li').length > 0 && "
                        "!document.getElementById('search').dataset.busy")
                if name in READY:
                    page.wait_for_function(READY[name])
                page.screenshot(path=str(folder / name))
                page.close()
                print(f"wrote {folder / name}")
            browser.close()
        server.shutdown()


if __name__ == "__main__":
    args = sys.argv[1:]
    main(Path(args[0] if args else ".demo/output"), Path(args[1] if len(args) > 1 else "docs"))
