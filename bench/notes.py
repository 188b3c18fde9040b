"""What the change-note step costs at a year of cs.*. Prints figures; asserts nothing.

On a store of N papers (default 200,000) with unique text, a quarter revised
(bench/_store.py), and every version's reading as an arXiv snapshot (a comment that
changes with each revision), so the step reads the comments as it does for real:
- finding the revisions to note (`revisions`, every run does it), median of three;
- two runs of `papertrail notes` against the model replay at the default limits (20
  notes a run): time and what they did;
- the peak memory of the process (the seed included).

Run: .venv/bin/python bench/notes.py [N]   (--smoke: 2,000 papers)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from _corpus import Corpus
from _store import START, seed

from pipeline import config as config_mod
from pipeline.digest.notes import revisions, run_notes
from pipeline.replay.openai import OpenAIReplay
from pipeline.store import Store

KEY_ENV = "PAPERTRAIL_BENCH_KEY"


def _snapshot(store: Store) -> int:
    """Every stored version as arXiv read it once, its comment growing with the version."""
    versions = store.read("versions").to_pandas()
    papers = store.read("papers", ["arxiv_id", "journal_ref", "doi"]).to_pandas()
    rows = versions.merge(papers, on="arxiv_id")
    rows["comment"] = [f"{10 + v} pages" + (", accepted at ICML 2026" if v > 1 else "")
                       for v in rows["version"]]
    rows["fetched_at"] = rows["first_seen"]
    with store.lock():
        store.write_snapshot("arxiv", "bench-seed", START,
                             pa.Table.from_pandas(rows, preserve_index=False))
    return len(rows)


def bench(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "papertrail.toml").write_text('[store]\npath = "data"\n', encoding="utf-8")
        cfg = config_mod.load(root / "papertrail.toml")
        began = time.perf_counter()
        seed(cfg, Corpus(seed=13), n)
        store = Store(cfg.store_path)
        readings = _snapshot(store)
        print(f"{n:,} papers, {readings:,} readings (seeded in "
              f"{time.perf_counter() - began:.0f} s)", flush=True)
        for selection in ("ai", "all"):
            times, found = [], 0
            for _ in range(3):
                clock = time.perf_counter()
                found = len(revisions(cfg, store, selection))
                times.append(time.perf_counter() - clock)
            print(f"  revisions to note (selection {selection}): {found:,}, median "
                  f"{statistics.median(times):.1f} s", flush=True)
        os.environ[KEY_ENV] = "bench"
        with OpenAIReplay() as llm:
            digest = dataclasses.replace(cfg.digest, base_url=llm.url, model="replay",
                                         api_key_env=KEY_ENV)
            run_cfg = dataclasses.replace(cfg, digest=digest)
            for hour in (1, 2):
                clock = time.perf_counter()
                report = run_notes(run_cfg, store, now=START + dt.timedelta(hours=hour))
                print(f"  run {hour}: {time.perf_counter() - clock:.1f} s · {report.line()}",
                      flush=True)
        hwm = next(int(line.split()[1]) / 1024 for line in
                   Path("/proc/self/status").read_text().splitlines()
                   if line.startswith("VmHWM:"))
        print(f"  peak memory of the process, the seed included: {hwm:,.0f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The change-note step at N papers.")
    parser.add_argument("n", nargs="?", type=int, default=200_000)
    parser.add_argument("--smoke", action="store_true", help="2,000 papers")
    args = parser.parse_args()
    bench(2_000 if args.smoke else args.n)
