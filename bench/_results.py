"""A full bench run's figures appended to bench/results/<bench>.csv (bench/results/README.md),
each beside the commit measured and the machine's load: on a shared machine the same code's
time moves by a fifth from one hour to the next, so a figure means little without them."""

from __future__ import annotations

import csv
import datetime as dt
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

RESULTS = Path(__file__).with_name("results")
COLUMNS = ("date", "commit", "load", "papers", "metric", "value", "unit", "note")
Figure = tuple[str, float, str]  # metric, value, unit


def machine_load() -> str:
    """The machine's load as a run starts (its own work would count in it later)."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def commit() -> str:
    """The commit measured; `-dirty` when the tree holds changes it does not."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=RESULTS.parent, capture_output=True,
                              text=True, check=False).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("-dirty" if git("status", "--porcelain",
                                                                   "--untracked-files=no")
                                                  else "")


def record(bench: str, papers: int, figures: Iterable[Figure], load_at_start: str,
           note: str = "", results: Path = RESULTS) -> Path:
    """Appends one row per figure to `results/<bench>.csv` (its header first if new)."""
    path = results / f"{bench}.csv"
    head = [] if path.exists() else [COLUMNS]
    day, sha = dt.datetime.now(dt.UTC).date().isoformat(), commit()
    with path.open("a", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(
            [*head, *([day, sha, load_at_start, papers, metric,
                       value if isinstance(value, int) else round(value, 3), unit, note]
                      for metric, value, unit in figures)])
    return path
