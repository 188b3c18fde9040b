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
    # What an error leaves for the next run, in the command's own words ("" says nothing):
    # a catch-up's resumes from its watermark, a channel's items are sent again.
    then: str = ""

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
            text += f" · ERROR {self.error}" + (f" — {self.then}" if self.then else "")
        return text
