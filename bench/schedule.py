"""How long a scheduled run takes on the demo's store: the run after an announcement, and a
run that finds nothing new (most of the hourly runs). Prints figures; asserts nothing.

Each sample day is one run (`papertrail run`'s update, then the site build) against the
local replays of arXiv (export API and OAI-PMH), Hugging Face and a model server, as
`papertrail demo` makes them. Then R runs one hour apart after the last day: arXiv and
Hugging Face have nothing new, and the digest step is off (the demo's model server would
otherwise digest the sample's backlog, which a real store has long done). Each run is
timed whole and by stage; a process's imports (paid once per `papertrail run`) are timed
apart.

Run: .venv/bin/python bench/schedule.py [R]   (default 7; `--smoke`: 1 day, 1 no-op run)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline import demo
from pipeline.replay import sample
from pipeline.run import update
from pipeline.store import Store


def timed_run(cfg: config_mod.Config, store: Store, now: dt.datetime) -> tuple[float, float,
                                                                             list[str]]:
    lines: list[str] = []
    started = time.perf_counter()
    update(cfg, store, lines.append, now=now)
    updated = time.perf_counter()
    lines.append(build_mod.build(cfg, now=now).line())
    return updated - started, time.perf_counter() - updated, lines


def imports() -> float:
    """Seconds a fresh process spends importing what `papertrail run` runs."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import pipeline.cli, pipeline.run, pipeline.build"],
                   check=True)
    return time.perf_counter() - started


def main(days: list[str], noops: int) -> None:
    os.environ.setdefault(demo.DEMO_KEY_ENV, "demo")
    with tempfile.TemporaryDirectory() as tmp, demo.Replays() as replays:
        cfg = demo.demo_config(config_mod.load(demo.CONFIG), Path(tmp), replays, 8000)
        store = Store(cfg.store_path)
        print("run after an announcement (a sample day; update = sources, enrich, similar, "
              "notes, digests)")
        for day in days:
            now = sample.run_at(day)
            replays.at(now)
            up, site, lines = timed_run(cfg, store, now)
            print(f"  {day}: update {up:5.1f} s + site {site:5.1f} s = {up + site:5.1f} s"
                  f"   ({lines[0]})")
        quiet = dataclasses.replace(cfg, digest=dataclasses.replace(cfg.digest, enabled=False))
        print("a run that finds nothing new (digests off)")
        totals = []
        for n in range(1, noops + 1):
            now = sample.run_at(days[-1]) + dt.timedelta(hours=n)
            replays.at(now)
            up, site, lines = timed_run(quiet, store, now)
            totals.append(up + site)
            print(f"  +{n} h: update {up:5.1f} s + site {site:5.1f} s = {up + site:5.1f} s"
                  f"   ({lines[-1]})")
        papers = store.read("papers", columns=["arxiv_id"]).num_rows
        starts = [imports() for _ in range(min(noops, 3))]
        print(f"no-op run, median of {len(totals)} on {papers:,} papers: "
              f"{statistics.median(totals):.1f} s (min {min(totals):.1f}, max {max(totals):.1f});"
              f" plus {statistics.median(starts):.1f} s of imports per process")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Time scheduled runs on the demo's store.")
    parser.add_argument("noops", nargs="?", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="1 sample day, 1 no-op run")
    args = parser.parse_args()
    main(sample.days()[:1] if args.smoke else sample.days(), 1 if args.smoke else args.noops)
