"""What one run (a source's catch-up, the digest step) reports: its status, counts and the
one line it prints. Apart from the ledger (pipeline.runs) so sources need no store."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal

# What a run's row in the ledger says of it (the `status` column of `runs`).
RunStatus = Literal["ok", "partial", "failed", "skipped"]


@dataclass
class RunReport:
    source: str
    status: RunStatus
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
            mark = self.watermark_after
            resume = f"{mark:%Y-%m-%d %H:%M} UTC" if mark else "the backfill window"
            text += f" · ERROR {self.error} — stored data kept; next run resumes from {resume}"
        return text
