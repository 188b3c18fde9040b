"""Running a source into the store: fetch → merge → snapshot + tables → run ledger.

A source's failure is data, not an exception: it is recorded in runs.parquet
(status partial or failed), already stored data stays as it was, and the next
run resumes from the last clean watermark. Only our own bugs and unusable
stores raise.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa

from pipeline._schemas import PAPERS, RUNS, SNAPSHOTS, VERSIONS
from pipeline._untrusted import not_after
from pipeline.config import Config
from pipeline.enrich import derive
from pipeline.merge import merge_arxiv, merge_hf
from pipeline.sources import arxiv as arxiv_source
from pipeline.sources import hf as hf_source
from pipeline.store import Snapshot, Store, StoreError, empty

Clock = Callable[[], dt.datetime]


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def new_run_id(source: str, started: dt.datetime) -> str:
    # Sortable by time first, so snapshots replay in the order they were taken.
    return f"{started.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}-{source}-{secrets.token_hex(3)}"


@dataclass
class RunReport:
    source: str
    status: str  # ok | partial | failed | skipped
    counts: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    retries: int = 0
    error: str | None = None
    watermark_before: dt.datetime | None = None
    watermark_after: dt.datetime | None = None

    def line(self) -> str:
        """The one line a run prints for this source."""
        if self.status == "skipped":
            return f"{self.source}: skipped ({self.error})"
        parts = [f"{k} {v}" for k, v in self.counts.items()]
        parts.append(f"{self.requests} requests, {self.retries} retries")
        if self.watermark_after:
            parts.append(f"watermark {self.watermark_after:%Y-%m-%d %H:%M} UTC")
        text = f"{self.source}: {self.status} · " + " · ".join(parts)
        if self.error:
            mark = self.watermark_before
            resume = f"{mark:%Y-%m-%d %H:%M} UTC" if mark else "the backfill window"
            text += f" · ERROR {self.error} — stored data kept; next run resumes from {resume}"
        return text


def window_start(cfg: Config, watermark: dt.datetime | None, now: dt.datetime) -> dt.datetime:
    """Where a catch-up starts: the overlap before the watermark, or the backfill window."""
    acfg = cfg.sources.arxiv
    if watermark is None:
        return now - dt.timedelta(days=acfg.backfill_days)
    return watermark - dt.timedelta(hours=acfg.overlap_hours)


def ingest_arxiv(cfg: Config, store: Store, *, since: dt.datetime | None = None,
                 max_pages: int | None = None, now: dt.datetime | None = None,
                 progress: arxiv_source.Progress | None = None) -> RunReport:
    """One arXiv catch-up: everything updated since the watermark (minus the overlap)."""
    acfg = cfg.sources.arxiv
    started = now or utcnow()
    clock = time.monotonic()
    run_id = new_run_id("arxiv", started)
    if not acfg.enabled:
        return _record_skip(store, run_id, "arxiv", started, "disabled in config")
    with store.lock():
        # Read (and so validate) the tables before spending any request on the network.
        papers = store.read("papers")
        version_keys = store.read("versions", columns=["arxiv_id", "version"])
        before = not_after(store.watermark("arxiv"), started)
        since = since or window_start(cfg, before, started)
        fetch = arxiv_source.fetch_updates(acfg, since, started, max_pages=max_pages,
                                           progress=progress)
        batch = fetch.table()
        merged = merge_arxiv(papers, version_keys, batch, acfg.categories)
        snapshots = []
        if merged.changed.num_rows:
            store.write_snapshot("arxiv", run_id, started, merged.changed)
            store.append("versions", merged.new_versions)
            store.write("papers", derive(cfg, merged.papers))
            snapshots.append("arxiv")
        newest = _max_time(batch["updated"]) if batch.num_rows else None
        after = not_after(max(filter(None, [before, newest]), default=None), started)
        status = "ok" if fetch.complete else ("partial" if batch.num_rows else "failed")
        wanted = set(acfg.categories)
        per_category = Counter(c for row in fetch.rows for c in row["categories"]
                               if c in wanted)
        report = RunReport("arxiv", status, merged.counts, fetch.stats.requests,
                           fetch.stats.retries, fetch.error, before,
                           after if fetch.complete else before)
        store.append_run({
            "run_id": run_id, "source": "arxiv", "started": started,
            "finished": started + dt.timedelta(seconds=round(time.monotonic() - clock, 3)),
            "status": status, **merged.counts,
            "requests": fetch.stats.requests, "retries": fetch.stats.retries,
            "error": fetch.error, "watermark_before": before,
            "watermark_after": report.watermark_after,
            "details": json.dumps({"since": since.isoformat(), "snapshots": snapshots,
                                   "per_category": dict(sorted(per_category.items())),
                                   **fetch.findings.details()}),
        })
    return report


def _max_time(col: pa.ChunkedArray) -> dt.datetime:
    return pa.compute.max(col).as_py()


def _record_skip(store: Store, run_id: str, source: str, started: dt.datetime,
                 why: str) -> RunReport:
    with store.lock():
        store.append_run({"run_id": run_id, "source": source, "started": started,
                          "finished": started, "status": "skipped", "error": why})
    return RunReport(source, "skipped", error=why)


def ingest_hf(cfg: Config, store: Store, *, since: dt.date | None = None,
              now: dt.datetime | None = None) -> RunReport:
    """One HF catch-up: the daily lists from the watermark day (minus the overlap) to today.

    Picks the store does not hold yet are fetched from arXiv by id first (and kept as an
    arxiv snapshot of this run), so every pick has a full record.
    """
    hcfg, acfg = cfg.sources.hf, cfg.sources.arxiv
    started = now or utcnow()
    clock = time.monotonic()
    run_id = new_run_id("hf", started)
    if not hcfg.enabled:
        return _record_skip(store, run_id, "hf", started, "disabled in config")
    with store.lock():
        papers = store.read("papers")
        version_keys = store.read("versions", columns=["arxiv_id", "version"])
        # The HF mark is the start of a day this clock read: past `started` it is never right.
        before = not_after(store.watermark("hf"), started, skew=dt.timedelta(0))
        today = started.astimezone(dt.UTC).date()
        if since is None:
            since = (before.date() - dt.timedelta(days=hcfg.overlap_days) if before
                     else today - dt.timedelta(days=hcfg.backfill_days))
        days = [since + dt.timedelta(days=i) for i in range((today - since).days + 1)]
        fetch = hf_source.fetch_days(hcfg, days, started,
                                     deadline=clock + hcfg.max_run_seconds)
        batch = fetch.table()

        known = set(papers["arxiv_id"].to_pylist())
        missing = sorted({i for i in batch["arxiv_id"].to_pylist() if i not in known})
        by_id = arxiv_source.fetch_ids(acfg, missing, started) if missing else None
        cross_listed, snapshots = 0, []
        if by_id is not None and by_id.rows:
            merged_ids = merge_arxiv(papers, version_keys, by_id.table(), acfg.categories)
            papers, cross_listed = merged_ids.papers, merged_ids.cross_listed
            if merged_ids.changed.num_rows:
                # Same run id: rebuild replays it just before this run's HF snapshot.
                store.write_snapshot("arxiv", run_id, started, merged_ids.changed)
                store.append("versions", merged_ids.new_versions)
                snapshots.append("arxiv")
        merged = merge_hf(papers, batch)
        if merged.changed.num_rows:
            store.write_snapshot("hf", run_id, started, merged.changed)
            snapshots.append("hf")
        if snapshots:
            store.write("papers", derive(cfg, merged.papers))

        id_error = by_id.error if by_id is not None else None
        errors = [e for e in (fetch.error, id_error and f"arXiv by id: {id_error}") if e]
        error = "; ".join(errors) or None
        status = "ok" if error is None else ("partial" if fetch.last_day else "failed")
        last = (dt.datetime.combine(fetch.last_day, dt.time(), dt.UTC) if fetch.last_day
                else None)
        after = max(filter(None, [before, last]), default=None) if error is None else before
        id_stats = by_id.stats if by_id is not None else arxiv_source.FetchStats()
        counts = {**merged.counts, "cross_listed": cross_listed}
        report = RunReport("hf", status, counts, fetch.stats.requests + id_stats.requests,
                           fetch.stats.retries + id_stats.retries, error, before, after)
        fetched_ids = {r["arxiv_id"] for r in by_id.rows} if by_id is not None else set()
        store.append_run({
            "run_id": run_id, "source": "hf", "started": started,
            "finished": started + dt.timedelta(seconds=round(time.monotonic() - clock, 3)),
            "status": status, **counts,
            "requests": report.requests, "retries": report.retries,
            "error": error, "watermark_before": before, "watermark_after": after,
            "details": json.dumps({
                "since": since.isoformat(), "snapshots": snapshots, "days": fetch.days,
                **fetch.findings.details(),
                "unmatched": merged.unmatched,
                "arxiv_by_id": {"requested": len(missing), "fetched": len(fetched_ids),
                                "not_found": sorted(set(missing) - fetched_ids)
                                if id_error is None else [],
                                "requests": id_stats.requests, "retries": id_stats.retries,
                                **(by_id.findings.details() if by_id is not None else {})},
            }),
        })
    return report


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
        # Start from nothing: the current tables may be the very files that are damaged.
        papers, versions = empty(PAPERS), [empty(VERSIONS)]
        for snap in snaps:
            table = store.read_snapshot(snap)
            if snap.source == "arxiv":
                keys = pa.concat_tables(versions).select(["arxiv_id", "version"])
                merged = merge_arxiv(papers, keys, table, cfg.sources.arxiv.categories)
                papers = merged.papers
                versions.append(merged.new_versions)
            else:
                papers = merge_hf(papers, table).papers
        papers = derive(cfg, papers)
        versions = pa.concat_tables(versions)
        store.write("versions", versions)
        store.write("papers", papers)
    return {"snapshots": len(snaps), "papers": papers.num_rows, "versions": versions.num_rows}


def uncovered_runs(runs: pd.DataFrame, snaps: list[Snapshot]) -> list[str]:
    """Runs whose snapshots are missing: those the ledger says wrote one (`snapshots` in
    its details; before that was recorded, every run that counted new or revised papers)."""
    have = {(s.run_id, s.source) for s in snaps}
    missing = []
    for row in runs[runs["source"].isin(SNAPSHOTS)].itertuples():
        details = json.loads(row.details) if isinstance(row.details, str) else {}
        wrote = details.get("snapshots")
        if wrote is None:
            wrote = [row.source] if (row.new or 0) + (row.revised or 0) > 0 else []
        missing += [row.run_id for source in wrote if (row.run_id, source) not in have]
    return missing
