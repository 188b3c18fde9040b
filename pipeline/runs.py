"""The run ledger: the clock, run ids, what a run reports, and the one way a run is recorded.

Every run (a source's catch-up, the digest step) holds the store's lock while it works and
appends its row to `runs` just before the lock commits, so the row commits together with
what the run stored, or neither does.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pipeline import schedule
from pipeline.store import Store


def utcnow() -> dt.datetime:
    """The pipeline's one clock (tests fix it here)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def new_run_id(source: str, started: dt.datetime) -> str:
    # Sortable by time first, so snapshots replay in the order they were taken.
    return f"{started.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}-{source}-{secrets.token_hex(3)}"


class Run:
    """One run being made: its id, its start, and the ledger row it will leave."""

    def __init__(self, source: str, started: dt.datetime) -> None:
        self.source, self.started = source, started
        self.run_id = new_run_id(source, started)
        self.row: dict[str, Any] | None = None
        self._clock = time.monotonic()

    def record(self, **columns: Any) -> None:
        """The row's columns (`runs` schema); run_id, source, started and finished (now,
        unless given) are filled in; a run the workflow's schedule started says so in its
        details (pipeline/schedule.py finds the runs it missed from these)."""
        elapsed = dt.timedelta(seconds=round(time.monotonic() - self._clock, 3))
        if trigger := schedule.trigger():
            details = json.loads(columns.get("details") or "{}")
            columns["details"] = json.dumps({**details, "trigger": trigger}, ensure_ascii=False)
        self.row = {"run_id": self.run_id, "source": self.source, "started": self.started,
                    "finished": self.started + elapsed, **columns}

    def skip(self, why: str, **columns: Any) -> None:
        """A run that did nothing: recorded as skipped, finishing when it started."""
        self.record(status="skipped", error=why, finished=self.started, **columns)


@contextmanager
def recorded(store: Store, source: str, started: dt.datetime | None = None) -> Iterator[Run]:
    """Hold the store's lock for one run (started now, unless told) and append its row when
    the block ends: the row commits with the run's writes. A block that raises leaves no
    row (and nothing else)."""
    run = Run(source, started or utcnow())
    with store.lock():
        yield run
        if run.row is None:
            raise RuntimeError(f"the {source} run ended without recording its row")
        store.append_run(run.row)
