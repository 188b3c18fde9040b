"""Ingest benchmarks. Prints figures; asserts nothing.

1. parse + normalise throughput: 10,000 entries from the local replay, delays at 0;
2. merging a 2,000-entry batch into a store of 200,000 papers (time and peak memory),
   plus writing the two tables back to disk.

Synthetic entries are the real sample's papers cloned under new ids, so titles,
abstracts, author lists and categories keep the real distributions.
Run: .venv/bin/python bench/ingest.py   (or `make bench`; `--smoke`: 500 entries, a store
of 2,000 papers, one merge run)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from pipeline import config as config_mod
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay, feed_xml
from pipeline.sources import arxiv as source
from pipeline.store import Store

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
NOW = T0 + dt.timedelta(days=30)  # after every synthetic entry: none is dated ahead


def synthetic(n: int, offset: int = 0) -> list[sample.Entry]:
    base = [e for e in sample.entries() if e.version == 1]
    out = []
    for i in range(offset, offset + n):
        e = base[i % len(base)]
        when = T0 + dt.timedelta(seconds=i * 7)
        out.append(dataclasses.replace(
            e, arxiv_id=f"26{1 + i // 99999:02d}.{1 + i % 99999:05d}",  # valid ids: 2601.00001…
            published=when, updated=when, announced=when))
    return out


def bench_parse(n: int) -> None:
    entries = synthetic(n)
    cfg = config_mod.from_dict({}, Path("bench.toml"))
    with ArxivReplay(entries) as api:
        acfg = dataclasses.replace(cfg.sources.arxiv, api_url=api.url, delay_seconds=0.0,
                                   page_size=2000)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            fetch = source.fetch_updates(acfg, T0, NOW)
            times.append(time.perf_counter() - started)
            assert len(fetch.rows) == n, (len(fetch.rows), fetch.error)
    median = statistics.median(times)
    print(f"fetch+parse+normalise over HTTP: {n:,} entries in {median:.2f} s (median of 3) "
          f"= {n / median:,.0f} entries/s, {fetch.stats.requests} requests")

    page = entries[:2000]
    body = feed_xml("bench", page, len(page), 0, len(page), T0)
    from pipeline.sources._atom import parse_page
    started = time.perf_counter()
    for _ in range(5):
        parsed = parse_page(body)
        rows = [source.to_row(r, T0) for r in parsed.results]
    per = (time.perf_counter() - started) / 5
    print(f"parse+normalise only (no HTTP): {len(rows) / per:,.0f} entries/s "
          f"({len(body) / 1e6:.1f} MB per {len(page):,}-entry page)")


def _table(entries: list[sample.Entry]) -> pa.Table:
    rows = [{"arxiv_id": e.arxiv_id, "version": e.version, "title": e.title,
             "abstract": e.abstract, "authors": list(e.authors),
             "categories": list(e.categories), "primary_category": e.primary_category,
             "comment": e.comment, "journal_ref": None, "doi": None,
             "published": e.published, "updated": e.updated, "fetched_at": e.announced}
            for e in entries]
    from pipeline.tables import ARXIV_SNAPSHOT
    return pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT)


def make_store(root: Path, size: int) -> None:
    """A store of `size` papers on disk (built in the parent process)."""
    from pipeline.tables import PAPERS, VERSIONS, empty
    merged = merge_arxiv(empty(PAPERS), empty(VERSIONS), _table(synthetic(size)), ["cs.CV"])
    store = Store(root)
    store.write("papers", merged.papers)
    store.write("versions", merged.new_versions)


def bench_merge_child(root: Path, size: int) -> None:
    """One real ingest step in a fresh process (read → merge → write), so the peak RSS is
    that step's alone; prints one JSON line for the parent."""
    store = Store(root)
    started = time.perf_counter()
    papers = store.read("papers")
    version_keys = store.read("versions", columns=["arxiv_id", "version"])
    read = time.perf_counter() - started
    base = synthetic(1_100)
    now = NOW
    revised = [dataclasses.replace(e, version=2, updated=now, abstract=e.abstract + " v2")
               for e in base[:400]]
    batch = _table(synthetic(1_500, offset=size) + revised + base[1000:1100])
    batch = batch.set_column(batch.schema.get_field_index("fetched_at"), "fetched_at",
                             pa.array([now] * batch.num_rows, batch.schema.field("fetched_at")
                                      .type))
    started = time.perf_counter()
    result = merge_arxiv(papers, version_keys, batch, ["cs.CV"])
    merge = time.perf_counter() - started
    assert (result.new, result.revised) == (1500, 400), result.counts
    del papers
    started = time.perf_counter()
    store.write("papers", result.papers)
    store.append("versions", result.new_versions)
    write = time.perf_counter() - started
    print(json.dumps({"read": read, "merge": merge, "write": write, "rss": _peak_rss_mib()}))


def _peak_rss_mib() -> float:
    # VmHWM, not getrusage: ru_maxrss survives fork+exec, so a child would report the
    # parent's peak (the 200k-store build) instead of its own.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def bench_merge(size: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for _ in range(runs):
            make_store(Path(tmp), size)
            out = subprocess.run([sys.executable, __file__, "merge", tmp, str(size)], check=True,
                                 capture_output=True, text=True).stdout
            results.append(json.loads(out))
        disk_mb = sum(p.stat().st_size for p in Path(tmp).rglob("*.parquet")) / 1e6

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    print(f"merge 2,000 entries (1,500 new, 400 revised, 100 unchanged) into {size:,} papers: "
          f"median {med('merge'):.3f} s (min {min(r['merge'] for r in results):.3f}, "
          f"{runs} runs)")
    print(f"  whole step: read {med('read'):.2f} s + merge {med('merge'):.2f} s + atomic write "
          f"{med('write'):.2f} s = {med('read') + med('merge') + med('write'):.2f} s; "
          f"{disk_mb:.0f} MB on disk")
    print(f"  peak RSS of the step: median {med('rss'):.0f} MiB, max "
          f"{max(r['rss'] for r in results):.0f} MiB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["merge"]:
        bench_merge_child(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        parser = argparse.ArgumentParser(description="Time parsing and merging.")
        parser.add_argument("--smoke", action="store_true",
                            help="500 entries, a 2,000-paper store, one merge run")
        smoke = parser.parse_args().smoke
        bench_parse(500 if smoke else 10_000)
        bench_merge(*((2_000, 1) if smoke else (200_000, 5)))
