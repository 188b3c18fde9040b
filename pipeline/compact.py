"""Compaction: one snapshot file per source per month, for months that are over.

An hourly schedule writes up to ~720 snapshot files a month per source; each is a
Parquet file with its own footer and a blob in the data branch. Folding a finished
month into one file (each run keeps its own row groups, listed in the file's
metadata) shrinks the store and keeps `rebuild` exact: it still replays run by run.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from pipeline.store import MONTH_PREFIX, Snapshot, Store


@dataclass(frozen=True)
class CompactReport:
    months: int  # month files written
    files_before: int  # snapshot files those months had
    runs: int  # runs they hold

    def line(self) -> str:
        if not self.months:
            return "compact: nothing to do (only the current month has loose snapshots)"
        return (f"compact: {self.files_before} snapshot files → {self.months} month files "
                f"({self.runs} runs)")


def compact(store: Store, today: dt.date) -> CompactReport:
    """Merge every month before `today`'s month that has loose snapshot files."""
    current = f"{today:%Y-%m}"
    months = files = runs = 0
    with store.lock():
        groups: dict[tuple[str, str], list[Snapshot]] = defaultdict(list)
        for snap in store.snapshots():
            if snap.day[:7] < current:
                groups[(snap.source, snap.day[:7])].append(snap)
        for (source, month), snaps in sorted(groups.items()):
            paths = {s.path for s in snaps}
            if all(p.stem.startswith(MONTH_PREFIX) for p in paths):
                continue  # already one month file
            store.write_month(source, month, snaps)
            months, files, runs = months + 1, files + len(paths), runs + len(snaps)
    return CompactReport(months, files, runs)
