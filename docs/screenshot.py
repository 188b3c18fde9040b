"""Take the README's screenshot of the demo site's home page with headless Chromium.

Run after `make demo` (or `papertrail demo --no-serve`):
    .venv/bin/python docs/screenshot.py [.demo/output] [docs/home.png]
Uses Debian's /usr/bin/chromium through Playwright; nothing is downloaded.
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


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main(site: Path, target: Path) -> None:
    handler = functools.partial(_Quiet, directory=str(site))
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1200, "height": 1500})
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
            page.screenshot(path=str(target))
            browser.close()
        server.shutdown()
    print(f"wrote {target}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(Path(args[0] if args else ".demo/output"), Path(args[1] if len(args) > 1
                                                        else "docs/home.png"))
