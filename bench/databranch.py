"""Data-branch size after 30 simulated days. Prints figures; asserts nothing.

Each simulated day: one run after arXiv's announcement that finds ~1,000 new papers
(the bundled sample's real papers cloned under new ids) plus 5% of the previous
day's papers as v2, then QUIET runs that find nothing new but still append to the
run ledger, as the hourly schedule does. Every run ends with `papertrail data save`
into a local bare repository standing in for GitHub. The 30 days cross a month end,
so compaction and the month squash both happen once.

Two histories are compared:
- plain: a commit per run, never squashed (not even at the month), no compaction;
- kept small: `data compact` before each save, `data save` squashing at 24 commits
  (the defaults of the update workflow).
Sizes are `git count-objects -vH` of the bare repository: as pushed, and after
`git gc --prune=now` (GitHub prunes unreachable objects itself, later).

Run: .venv/bin/python bench/databranch.py [DAYS] [QUIET_RUNS_PER_DAY]   (--smoke: 2 days
of 20 papers, in seconds)
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import subprocess
import tempfile
import time
from pathlib import Path

from pipeline import compact, databranch, ingest
from pipeline import config as config_mod
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.store import Store

START = dt.datetime(2026, 6, 16, 0, 0, tzinfo=dt.UTC)  # 30 days reach into July
PER_DAY = 1000


def entries(days: int, per_day: int) -> list[sample.Entry]:
    """per_day new papers a day, announced at 00:00 UTC, plus 5% v2s of the day before."""
    base = [e for e in sample.entries() if e.version == 1]
    out: list[sample.Entry] = []
    for day in range(days):
        when = START + dt.timedelta(days=day)
        today = []
        for i in range(per_day):
            n = day * per_day + i
            e = base[n % len(base)]
            today.append(dataclasses.replace(
                e, arxiv_id=f"26{6 + n // 99999:02d}.{1 + n % 99999:05d}", published=when,
                updated=when - dt.timedelta(hours=3), announced=when))
        revised = [dataclasses.replace(e, version=2, updated=when - dt.timedelta(hours=2),
                                       announced=when, abstract=e.abstract + " (v2)")
                   for e in out[-per_day:][::20] if e.version == 1]
        out += today + revised
    return out


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def size(bare: Path) -> str:
    stats = dict(line.split(": ", 1) for line in git(bare, "count-objects", "-vH").splitlines())
    return f"{stats['size-pack']} packed + {stats['size']} loose"


def simulate(days: int, quiet: int, per_day: int, *, keep_small: bool) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp, ArxivReplay(entries(days, per_day)) as api:
        root = Path(tmp)
        bare = root / "github.git"
        subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
        repo = root / "checkout"
        repo.mkdir()
        git(repo, "init", "--quiet")
        git(repo, "remote", "add", "origin", str(bare))
        (repo / "papertrail.toml").write_text(
            f'[store]\npath = "data"\n[sources.arxiv]\napi_url = "{api.url}"\n'
            "delay_seconds = 0\npage_size = 2000\nbackfill_days = 1\n", encoding="utf-8")
        cfg = config_mod.load(repo / "papertrail.toml")
        store = Store(cfg.store_path)
        squash_after = databranch.DEFAULT_SQUASH_AFTER if keep_small else None
        saves, started = 0, time.perf_counter()
        for day in range(days):
            for run in range(1 + quiet):
                now = START + dt.timedelta(days=day, hours=1 + run * (23 // (1 + quiet)))
                api.as_of = now
                ingest.ingest_arxiv(cfg, store, now=now)
                if keep_small:
                    compact.compact(store, now.date())
                databranch.save(cfg, repo, squash_after=squash_after, now=now)
                saves += 1
        elapsed = time.perf_counter() - started
        pushed = size(bare)
        commits = git(bare, "rev-list", "--count", "data").strip()
        git(bare, "gc", "--quiet", "--prune=now")
        store_mb = sum(p.stat().st_size for p in store.root.rglob("*.parquet")) / 1e6
        files = len(list((store.root / "snapshots").rglob("*.parquet")))
        return {"pushed": pushed, "after gc": size(bare), "commits": commits,
                "papers": f"{store.read('papers').num_rows:,}",
                "store": f"{store_mb:.1f} MB in {files} snapshot files",
                "runs": f"{saves} runs in {elapsed:.0f} s"}


def main() -> None:
    parser = argparse.ArgumentParser(description="Data-branch size after simulated days.")
    parser.add_argument("days", nargs="?", type=int, default=30)
    parser.add_argument("quiet", nargs="?", type=int, default=3, metavar="QUIET_RUNS_PER_DAY")
    parser.add_argument("--smoke", action="store_true", help="2 days of 20 papers, 1 quiet run")
    args = parser.parse_args()
    days, quiet, per_day = (2, 1, 20) if args.smoke else (args.days, args.quiet, PER_DAY)
    print(f"{days} simulated days from {START:%Y-%m-%d}, ~{per_day:,} new papers and "
          f"{per_day // 20} v2s a day, 1 + {quiet} runs a day (each ending in data save)")
    for keep_small in (False, True):
        figures = simulate(days, quiet, per_day, keep_small=keep_small)
        label = ("kept small (compact + squash at 24 commits / new month)" if keep_small
                 else "plain (a commit per run, no compaction)")
        print(f"- {label}:")
        for key, value in figures.items():
            print(f"    {key}: {value}")


if __name__ == "__main__":
    main()
