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

import pyarrow as pa

from pipeline._schemas import PAPERS, VERSIONS
from pipeline.config import Config
from pipeline.merge import merge_arxiv
from pipeline.sources import arxiv as arxiv_source
from pipeline.store import Store, empty

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
        before = store.watermark("arxiv")
        if since is None:
            since = (before - dt.timedelta(hours=acfg.overlap_hours) if before
                     else started - dt.timedelta(days=acfg.backfill_days))
        fetch = arxiv_source.fetch_updates(acfg, since, started, max_pages=max_pages,
                                           progress=progress)
        batch = fetch.table()
        merged = merge_arxiv(papers, version_keys, batch, acfg.categories)
        if merged.changed.num_rows:
            store.write_snapshot("arxiv", run_id, started, merged.changed)
            store.append("versions", merged.new_versions)
            store.write("papers", merged.papers)
        newest = _max_time(batch["updated"]) if batch.num_rows else None
        after = max(filter(None, [before, newest]), default=None)
        status = "ok" if fetch.complete else ("partial" if batch.num_rows else "failed")
        per_category = Counter(c for row in fetch.rows for c in row["categories"]
                               if c in set(acfg.categories))
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
            "details": json.dumps({"since": since.isoformat(),
                                   "per_category": dict(sorted(per_category.items()))}),
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


def rebuild(cfg: Config, store: Store) -> dict[str, int]:
    """Recompute papers and versions from the snapshots alone, in the order they were taken."""
    with store.lock():
        # Start from nothing: the current tables may be the very files that are damaged.
        papers, versions = empty(PAPERS), [empty(VERSIONS)]
        snaps = store.snapshots("arxiv")
        for snap in snaps:
            keys = pa.concat_tables(versions).select(["arxiv_id", "version"])
            merged = merge_arxiv(papers, keys, store.read_snapshot(snap),
                                 cfg.sources.arxiv.categories)
            papers = merged.papers
            versions.append(merged.new_versions)
        versions = pa.concat_tables(versions)
        store.write("versions", versions)
        store.write("papers", papers)
    return {"snapshots": len(snaps), "papers": papers.num_rows, "versions": versions.num_rows}
