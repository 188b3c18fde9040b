"""What each stage costs at 20,000, 200,000 and 1,000,000 papers (docs/SCALE.md). Prints
figures; asserts nothing.

A store of N papers as bench/_store.py seeds it (unique text, 25% revised, 10% HF picks,
10% digests), then each stage in a fresh process, for its wall time and peak memory
(VmHWM):
- read: every table the steps and the build read (papers, versions, digests);
- enrich: classify + the repository's topics over the whole store, written back (the
  seed has no topics, so this is a topic change: every partition rewritten);
- digest planning: select + plan, what the digest step does before its first request;
- search index: the library's load and the index build (bench/search.py has the browser);
- ingest: a daily arXiv run (~1,000 new papers, ~300 revisions) through the local replay;
and the store's bytes, files and largest file. The site build is bench/site.py.
Run: .venv/bin/python bench/scale.py [N ...]   (default 20000 200000 1000000;
`--smoke`: 2,000). A full run appends its figures to bench/results/scale.csv; `--smoke`
appends nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _corpus import Corpus
from _results import Figure, machine_load, record
from _store import START, day_entries, seed

from pipeline import config as config_mod
from pipeline import demo, ingest
from pipeline.derive.enrich import enrich
from pipeline.digest.plan import plan, select
from pipeline.replay.arxiv import ArxivReplay
from pipeline.site.index import search as _search
from pipeline.site.model.views import load
from pipeline.store import Store

STAGES = ("read", "enrich", "digest planning", "search index", "ingest")


def _config(root: Path, api_url: str = "http://127.0.0.1:9/") -> config_mod.Config:
    path = root / "papertrail.toml"
    path.write_text(f'[store]\npath = "data"\n[sources.arxiv]\napi_url = "{api_url}"\n'
                    "delay_seconds = 0\npage_size = 2000\n", encoding="utf-8")
    return config_mod.load(path)


def stage(name: str, root: Path) -> str:
    """Runs one stage; returns what it did, in a few words."""
    cfg = _config(root)
    store = Store(cfg.store_path)
    if name == "read":
        rows = [store.read(t).num_rows for t in ("papers", "versions", "digests")]
        return f"{sum(rows):,} rows"
    if name == "enrich":
        topics = config_mod.load(demo.CONFIG).topics
        result = enrich(dataclasses.replace(cfg, topics=topics), store)
        return f"{len(topics)} topics, {sum(result['topics'].values()):,} matches; " + \
            ("written" if result["written"] else "nothing changed, nothing written")
    if name == "digest planning":
        rows = {(r["arxiv_id"], r["version"], r["language"], r["model"], r["prompt_hash"]): r
                for r in store.read("digests").to_pylist()}
        todo = plan(select(store.read("papers"), store.read("versions"), cfg.digest.selection),
                    rows, cfg.digest_language, "bench", "b", 3, START)  # as seeded
        return f"{len(todo.todo):,} to write, {len(todo.cached):,} cached"
    if name == "search index":
        index = _search.build_index(load(cfg, store, START).papers, START)
        return f"{index.terms:,} terms, {len(index.files):,} files"
    corpus = Corpus(seed=13)
    ids = sorted(store.read("papers").column("arxiv_id").to_pylist())
    entries = day_entries(corpus, 0, ids, {})
    now = START + dt.timedelta(days=1, hours=1)
    with ArxivReplay(entries, as_of=now) as api:
        report = ingest.ingest_arxiv(_config(root, api.url), store, now=now)
    return f"{report.status}: {report.counts.get('new', 0):,} new, " \
           f"{report.counts.get('revised', 0):,} revised"


def _child(name: str, root: str) -> None:
    started = time.perf_counter()
    what = stage(name, Path(root))
    seconds = time.perf_counter() - started
    hwm = next(int(line.split()[1]) / 1024 for line in
               Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
    print(json.dumps({"seconds": seconds, "mib": hwm, "what": what}))


def bench(n: int, keep: bool) -> None:
    """Seeds N papers and times each stage; `keep` appends the figures to
    bench/results/scale.csv."""
    started_at = machine_load()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        began = time.perf_counter()
        seed(_config(root), Corpus(seed=13), n)
        store = Store(root / "data")
        files = store.files()
        sizes = [p.stat().st_size for p in files]
        print(f"{n:,} papers (seeded in {time.perf_counter() - began:.0f} s): store "
              f"{sum(sizes) / 1e6:,.0f} MB in {len(files):,} files, the largest "
              f"{max(sizes) / 1e6:.1f} MB", flush=True)
        figures: list[Figure] = [("store_size", sum(sizes) / 1e6, "MB"),
                                 ("store_files", len(files), "files"),
                                 ("store_largest_file", max(sizes) / 1e6, "MB")]
        for name in STAGES:
            proc = subprocess.run([sys.executable, __file__, "child", name, tmp],
                                  capture_output=True, text=True)
            if proc.returncode:
                print(f"  {name}: failed\n{proc.stderr[-2000:]}", flush=True)
                continue
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"  {name}: {got['seconds']:.1f} s, peak {got['mib']:,.0f} MiB "
                  f"({got['what']})", flush=True)
            metric = name.replace(" ", "_")
            figures += [(f"{metric}_seconds", got["seconds"], "s"),
                        (f"{metric}_peak", got["mib"], "MiB")]
        if keep:
            record("scale", n, figures, started_at, "bench/scale.py")


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        _child(sys.argv[2], sys.argv[3])
    else:
        parser = argparse.ArgumentParser(description="Each stage's cost at N papers.")
        parser.add_argument("sizes", nargs="*", type=int,
                            default=[20_000, 200_000, 1_000_000], metavar="N")
        parser.add_argument("--smoke", action="store_true", help="2,000 papers")
        args = parser.parse_args()
        for size in [2_000] if args.smoke else args.sizes:
            bench(size, keep=not args.smoke)
