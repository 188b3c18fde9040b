"""Search index benchmark. Prints figures; asserts nothing.

Makes N Paper views from the real sample's distributions (titles, abstracts, authors,
categories, Chinese digests for 10%, 5% revised, HF picks and topics for some). So that
the vocabulary grows with N as a real corpus's does, author names mix first and last
names across papers and every abstract carries one rare made-up name. Then, in a fresh
process: index build time and peak memory (VmHWM), total size, the largest shard; then in
headless chromium against the index served on 127.0.0.1: gzip bytes transferred before the
first result of a typical query, ms from keystroke to rendered results (median), and
each query typed as a person types (a key every 30 ms, cold cache): gzip bytes and requests.
Run: .venv/bin/python bench/search.py [N ...]   (default: 20000 200000; `--smoke`: 300)
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from pipeline.config import SiteConfig
from pipeline.replay import sample
from pipeline.site import i18n
from pipeline.site.index import search as _search
from pipeline.site.model.brand import brand
from pipeline.site.model.views import DIGEST_FIELDS, Paper
from pipeline.site.pages import static

REPO = Path(__file__).resolve().parents[1]
T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
TOPICS = ("llm-agents", "diffusion", "robotics", "efficient-inference")
QUERIES = ["diffusion model", "graph neural", "reinforcement learning robot", "transf",
           "language models reasoning", "扩散模型", "benchmark evaluation", "Zhang",
           "image segmentation", "federated"]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def papers(n: int) -> list[Paper]:
    base = [e for e in sample.entries() if e.version == 1]
    digests = sample.digests()
    names = [a.split() for e in base for a in e.authors if len(a.split()) >= 2]
    days = max(1, n // 1000)
    out, per_month = [], {}
    for i in range(n):
        e = base[i % len(base)]
        seen = T0 + dt.timedelta(days=i * days // n, hours=1)
        when = seen - dt.timedelta(hours=8, seconds=i % 3600)
        authors = [f"{names[(i * 31 + k * 7) % len(names)][0]} "
                   f"{names[(i * 17 + k * 13 + 5) % len(names)][-1]}"
                   for k in range(len(e.authors))]
        d = digests.get(e.arxiv_id) if i % 10 == 0 else None
        abstract = f"{e.abstract} We call it Q{_base36(i * 7919)}."
        month = (i * days // n) // 30  # ids as arXiv numbers them: yymm.nnnnn, per month
        per_month[month] = per_month.get(month, 0) + 1
        out.append(Paper(
            arxiv_id=f"26{6 + month:02d}.{per_month[month]:05d}",
            version=2 if i % 20 == 0 else 1, title=e.title, title_html=Markup(""),
            abstract_text=abstract, authors=authors,
            categories=list(e.categories), primary=e.primary_category, comment=None,
            journal_ref=None, doi=None, published=when, updated=when, first_seen=seen,
            version_seen_at=seen, ai_related=any(c in e.categories for c in
                                                 ("cs.AI", "cs.LG", "cs.CL", "cs.CV")),
            ai_reason=(), topics=[(TOPICS[i % 4], ())] if i % 5 == 0 else [],
            hf_upvotes=None, hf_repo=None, hf_day=seen.date() if i % 50 == 0 else None,
            digest={k: d.get("result" if k == "results" else k) for k in DIGEST_FIELDS}
            if d else None))
    return out


def _base36(x: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    while x:
        x, r = divmod(x, 36)
        s = digits[r] + s
    return s or "0"


def child(n: int, out: str) -> None:
    docs = papers(n)
    before = next(int(line.split()[1]) / 1024 for line in
                  Path("/proc/self/status").read_text().splitlines() if line.startswith("VmRSS:"))
    started = time.perf_counter()
    index = _search.build_index(docs, max(p.first_seen for p in docs))
    seconds = time.perf_counter() - started
    hwm = next(int(line.split()[1]) / 1024 for line in
               Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
    root = Path(out)
    for name, text in index.files.items():
        stored, data = _search.stored(name, text)
        path = root / stored
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(json.dumps({"seconds": seconds, "rss": hwm, "papers_rss": before, "shards": index.shards,
                      "terms": index.terms, "categories": index.categories,
                      "topics": index.topics}))


def site(out: Path, info: dict) -> None:
    """The search page as the build renders it, plus the theme's static files."""
    env = Environment(loader=FileSystemLoader(REPO / "theme" / "templates"), autoescape=True)
    env.globals["alternates"] = i18n.Alternates("zh-CN")  # one language: no switch
    strings = i18n.strings("zh-CN")
    html = env.get_template("search.html").render(
        s=strings, lang="zh-CN", root="../", site_title="PaperTrail", feeds=[],
        brand=brand(SiteConfig(), strings),
        title="搜索", nav="search", categories=info["categories"], topics=info["topics"],
        topic_names={}, venues=[])
    (out / "search" / "index.html").write_text(html, encoding="utf-8")
    shutil.copytree(REPO / "theme" / "static", out / "theme")
    # app.js imports ui.js, which the build renders from its template (pages/static.py)
    ui = env.get_template("ui.js").render(s=strings, lang="zh-CN", root=static.ROOT)
    (out / "theme" / "ui.js").write_text(ui, encoding="utf-8")


def gz(path: Path) -> int:
    """Bytes on the wire from a host that gzips JSON (GitHub Pages does); a .gz is sent as
    it is stored."""
    data = path.read_bytes()
    return len(data) if path.suffix == ".gz" else len(gzip.compress(data, 6))


def browser(out: Path) -> tuple[list[tuple[str, int, int]], list[float]]:
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Quiet, directory=str(out))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.hits = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/search/"
    first, timings = [], []
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
            for q in QUERIES[:1]:  # a cold page: everything fetched before the first result
                page = b.new_page()
                got: list[str] = []
                page.on("request", lambda r, got=got: got.append(urlparse(r.url).path))
                page.goto(url)
                page.locator("#q").fill(q)
                page.wait_for_function("() => !document.getElementById('search').dataset.busy"
                                       " && document.querySelector('#results li')")
                first = [(path, (out / path.lstrip("/")).stat().st_size,
                          gz(out / (path.lstrip("/") or "index.html")))
                         for path in dict.fromkeys(got) if (out / path.lstrip("/")).is_file()]
                first += [("search/ (page)", 0, gz(out / "search" / "index.html"))] if \
                    "/search/" in got else []
                for query in QUERIES[1:]:
                    timings.append(page.evaluate(MEASURE, query))
                page.close()
            typed = [(q, *_typed(b, url, out, server.hits, q)) for q in QUERIES]
            b.close()
    finally:
        server.shutdown()
        server.server_close()
    return first, timings, typed


def _typed(b, url: str, out: Path, hits: list[str], query: str) -> tuple[int, int]:
    """Gzip bytes and requests the server saw for one query typed into a cold page, a
    key every 30 ms, the page itself included; counted once the results of the whole
    query are on screen and the network is quiet."""
    context = b.new_context()  # a cold cache
    page = context.new_page()
    hits.clear()
    page.goto(url)
    page.locator("#q").press_sequentially(query, delay=30)
    page.wait_for_function("q => !document.getElementById('search').dataset.busy && "
                           "new URLSearchParams(location.search).get('q') === q", arg=query)
    page.wait_for_load_state("networkidle")
    context.close()
    files = [out / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))
             for path in hits]
    return sum(gz(f) for f in files if f.is_file()), len(hits)


# Keystroke → results on screen: set the query, fire `input`, resolve on the frame after
# the page clears data-busy (set while a search is pending or running).
MEASURE = """async (q) => {
  const form = document.getElementById('search'), input = form.elements.q;
  return await new Promise(resolve => {
    const t0 = performance.now();
    const obs = new MutationObserver(() => {
      if (form.dataset.busy) return;
      obs.disconnect();
      requestAnimationFrame(() => resolve(performance.now() - t0));
    });
    obs.observe(form, {attributes: true});
    input.value = q;
    input.dispatchEvent(new Event('input', {bubbles: true}));
  });
}"""


class _Quiet(SimpleHTTPRequestHandler):
    """Serves as GitHub Pages does (keep-alive, ten minutes' caching); records each path
    requested in the server's `hits`."""

    protocol_version = "HTTP/1.1"  # keep-alive, as any real static host
    disable_nagle_algorithm = True  # else headers and body wait out delayed ACKs (40 ms)

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def log_message(self, format, *args):  # the figures are the output
        self.server.hits.append(urlparse(self.path).path)  # type: ignore[attr-defined]


def bench(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        proc = subprocess.run([sys.executable, __file__, "child", str(n), tmp],
                              capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(proc.stderr)
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        files = [p for p in (out / "search").rglob("*.json*")]
        total = sum(p.stat().st_size for p in files)
        shards = list((out / "search" / "t").glob("*.json.gz"))
        largest = max(shards, key=lambda p: p.stat().st_size)
        chunks = list((out / "search" / "d").glob("*.json.gz"))
        facets = list((out / "search" / "f").glob("*.json.gz"))
        print(f"{n:,} papers: index build {info['seconds']:.1f} s, peak RSS "
              f"{info['rss']:.0f} MiB (of which {info['papers_rss']:.0f} MiB the papers in memory "
              f"before the build), {info['terms']:,} "
              f"terms in {info['shards']:,} shards")
        print(f"  index size {total / 1e6:.1f} MB stored in {len(files):,} files (shards, "
              f"chunks and facet blocks gzipped); largest shard "
              f"{largest.stat().st_size / 1000:.0f} KB; doc chunk "
              f"≈{chunks[0].stat().st_size / 1000:.1f} KB, facet block "
              f"≈{facets[0].stat().st_size / 1000:.0f} KB, recent.json "
              f"{gz(out / 'search' / 'recent.json') / 1000:.0f} KB gzip")
        site(out, info)
        first, timings, typed = browser(out)
        index_bytes = sum(g for path, _, g in first if path.startswith("/search/") and
                          path.endswith((".json", ".json.gz")))
        js = sum(g for path, _, g in first if path.endswith(".js"))
        everything = sum(g for _, _, g in first)
        print(f"  first query {QUERIES[0]!r}: {everything / 1000:.0f} KB gzip before the first "
              f"result ({index_bytes / 1000:.0f} KB index, {js / 1000:.0f} KB JS, rest page"
              f" and CSS; {len(first)} requests)")
        print("  typed, a key every 30 ms into a cold page (gzip KB, requests): " + ", ".join(
            f"{q!r} {kb / 1000:.0f} KB/{n}" for q, kb, n in typed))
        print(f"  typed: median {statistics.median(t[1] for t in typed) / 1000:.0f} KB "
              f"and {statistics.median(t[2] for t in typed):.0f} requests, max "
              f"{max(t[1] for t in typed) / 1000:.0f} KB and {max(t[2] for t in typed)} requests")
        print(f"  keystroke → rendered results: median {statistics.median(timings):.0f} ms, "
              f"max {max(timings):.0f} ms over {len(timings)} queries")


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(int(sys.argv[2]), sys.argv[3])
    else:
        parser = argparse.ArgumentParser(description="Index size, build time, browser timings.")
        parser.add_argument("sizes", nargs="*", type=int, default=[20_000, 200_000], metavar="N")
        parser.add_argument("--smoke", action="store_true", help="300 papers")
        args = parser.parse_args()
        for size in [300] if args.smoke else args.sizes:
            bench(size)
