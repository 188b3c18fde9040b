"""Running a source into the store: fetch → merge → snapshot + tables → run ledger.

One way for every source of `pipeline.sources.SOURCES`. A source's failure is data,
not an exception: it is recorded in the run ledger (status partial or failed), already
stored data stays as it was, and the next run resumes from the last clean watermark.
A catch-up that raises all the same (upstream data no check foresaw, or a bug in the
source) is recorded as failed, so the run's later steps and other sources still run.
Only unusable stores raise.
"""

from __future__ import annotations

import datetime as dt
import json
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, cast

import pandas as pd
import pyarrow as pa

from pipeline.config import Config
from pipeline.derive.enrich import derive
from pipeline.report import RunReport
from pipeline.runs import Run, recorded
from pipeline.sources import SOURCES
from pipeline.sources._source import VERSION_KEYS, Catch, Library, Options, Progress
from pipeline.store import Snapshot, Store, StoreError
from pipeline.tables import PAPERS, RUNS, VERSIONS, empty


def ingest(cfg: Config, store: Store, source: str, *, since: dt.datetime | None = None,
           max_pages: int | None = None, now: dt.datetime | None = None,
           progress: Progress | None = None) -> RunReport:
    """One catch-up of `source`: everything new since its watermark, stored and recorded."""
    src = SOURCES[source]
    with recorded(store, source, now) as run:
        if not src.enabled(cfg):
            run.skip("disabled in config")
            return RunReport(source, "skipped", error="disabled in config")
        # Read (and so validate) the tables before spending any request on the network.
        library = Library(store.read("papers"), store.read("versions", columns=VERSION_KEYS),
                          store.source_tables(), store.read("announcements"))
        watermark = store.watermark(source)
        try:
            catch = src.catch_up(cfg, library, watermark, run.started,
                                 Options(since, max_pages, progress))
        except Exception as exc:  # any fault of one source stays its own
            catch = _raised(source, exc, watermark, run.started)
        _store(cfg, store, run, catch, {**library.tables, **catch.tables})
        mark = catch.report.watermark_after
        catch.report.then = ("stored data kept; next run resumes from "
                             + (f"{mark:%Y-%m-%d %H:%M} UTC" if mark else "the backfill window"))
        return catch.report


def ingest_arxiv(cfg: Config, store: Store, *, since: dt.datetime | None = None,
                 max_pages: int | None = None, now: dt.datetime | None = None,
                 progress: Progress | None = None) -> RunReport:
    """One arXiv catch-up: everything updated since the watermark (minus the overlap)."""
    return ingest(cfg, store, "arxiv", since=since, max_pages=max_pages, now=now,
                  progress=progress)


def ingest_hf(cfg: Config, store: Store, *, since: dt.date | None = None,
              now: dt.datetime | None = None) -> RunReport:
    """One HF catch-up: the daily lists from the watermark day (minus the overlap) to today."""
    start = None if since is None else dt.datetime.combine(since, dt.time(), dt.UTC)
    return ingest(cfg, store, "hf", since=start, now=now)


def _raised(source: str, exc: Exception, watermark: dt.datetime | None,
            started: dt.datetime) -> Catch:
    """A catch-up that raised: failed, nothing stored, the watermark kept; the error names
    the exception and the line that raised it, for whoever fixes the source."""
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno}"
    error = f"the source raised {type(exc).__name__} at {where}: {str(exc)[:300]}"
    report = RunReport(source, "failed", error=error, watermark_before=watermark,
                       watermark_after=watermark)
    return Catch(report, (watermark or started).astimezone(dt.UTC).date())


def _store(cfg: Config, store: Store, run: Run, catch: Catch,
           tables: dict[str, pa.Table]) -> None:
    """Stage what the catch-up changed and its ledger row; the run's lock commits them."""
    for source, rows in catch.snapshots.items():
        store.write_snapshot(source, run.run_id, run.started, rows)
    for rows in catch.new_versions:
        store.append("versions", rows)
    for name, rows in catch.tables.items():
        store.write(name, rows)
    if catch.announcements is not None:
        store.append("announcements", catch.announcements)
    if catch.snapshots:
        assert catch.papers is not None  # Catch.add sets it with every snapshot
        store.write("papers", derive(cfg, catch.papers, tables))
    report = catch.report
    run.record(status=report.status, **report.counts, requests=report.requests,
               retries=report.retries, error=report.error,
               watermark_before=report.watermark_before,
               watermark_after=report.watermark_after,
               details=json.dumps({"since": catch.since.isoformat(),
                                   "snapshots": list(catch.snapshots), **catch.details}))


def rebuild(cfg: Config, store: Store, *, force: bool = False) -> dict[str, int]:
    """Recompute papers and versions from the snapshots alone, in the order they were taken.

    Refused when the run ledger names runs that stored something but whose snapshot is
    missing (rebuilding would silently drop their papers), unless `force`; `force` also
    replaces an unreadable run ledger with an empty one."""
    with store.lock():
        snaps = [s for s in store.snapshots() if s.path.is_file()]
        try:
            runs = store.runs()
        except StoreError:
            if not force:
                raise
            store.write("runs", empty(RUNS))
            runs = store.runs()
        missing = uncovered_runs(runs, snaps)
        if missing and not force:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more"
                                               if len(missing) > 5 else "")
            raise StoreError(
                f"{store.root}: the snapshots do not cover the run ledger: {len(missing)} runs "
                f"stored papers but their snapshots are missing ({shown}); rebuilding would "
                "drop those papers. Restore the store (`papertrail data restore --force`), or "
                "pass --force to rebuild from the snapshots there are")
        store.forget_missing_snapshots()
        library, versions = _replay(cfg, store, snaps)
        store.write("versions", versions)
        for spec in (t for source in SOURCES.values() for t in source.tables):
            store.write(spec.name, library.tables.get(spec.name, empty(spec.schema)))
        store.write("papers", library.papers)
    return {"snapshots": len(snaps), "papers": library.papers.num_rows,
            "versions": versions.num_rows}


def _replay(cfg: Config, store: Store, snaps: list[Snapshot]) -> tuple[Library, pa.Table]:
    """Papers, versions and the sources' own tables from nothing (the current tables may be
    the very files that are damaged), each snapshot merged by its source in run order."""
    library = Library(empty(PAPERS), empty(VERSIONS).select(VERSION_KEYS), {})
    versions = [empty(VERSIONS)]
    for snap in snaps:
        merged = SOURCES[snap.source].merge(cfg, library, store.read_snapshot(snap))
        keys = library.version_keys
        if merged.new_versions is not None:
            versions.append(merged.new_versions)
            keys = pa.concat_tables([keys, merged.new_versions.select(VERSION_KEYS)])
        library = Library(merged.papers, keys, {**library.tables, **merged.tables})
    papers = derive(cfg, library.papers, library.tables)
    return Library(papers, library.version_keys, library.tables), pa.concat_tables(versions)


class _RunRow(Protocol):
    """A row of the runs ledger as itertuples gives it (new/revised: null before counted)."""

    run_id: str
    source: str
    details: str | None
    new: float | None
    revised: float | None


def uncovered_runs(runs: pd.DataFrame, snaps: list[Snapshot]) -> list[str]:
    """Runs whose snapshots are missing: those the ledger says wrote one (`snapshots` in
    its details; before that was recorded, every run that counted new or revised papers)."""
    have = {(s.run_id, s.source) for s in snaps}
    missing = []
    for row in cast("Iterator[_RunRow]", runs[runs["source"].isin(list(SOURCES))].itertuples()):
        details = json.loads(row.details) if isinstance(row.details, str) else {}
        wrote = details.get("snapshots")
        if wrote is None:
            wrote = [row.source] if (row.new or 0) + (row.revised or 0) > 0 else []
        missing += [row.run_id for source in wrote if (row.run_id, source) not in have]
    return missing
