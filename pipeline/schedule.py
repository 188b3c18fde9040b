"""The update workflow's schedule, and the runs it missed.

`CRONS` are the cron lines of .github/workflows/update.yml (tests/test_schedule.py checks
they are the same, and that they cover arXiv's clock in summer and in winter time). GitHub
starts a scheduled run late under load and sometimes not at all; a run records that the
schedule started it (`trigger` in its details), and the gaps between such runs that
swallowed a slot of the schedule are what the sources page, the home banner and the job
summary call missed runs.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pandas as pd

# GitHub's cron is UTC. arXiv announces at 20:00 US-Eastern Sunday–Thursday, 00:00 UTC
# (EDT) or 01:00 UTC (EST) Monday–Friday; OAI-PMH has the day ~22:30 ET, 02:30 or 03:30
# UTC. Each line covers both offsets (the other hour is one more ordinary run).
CRONS: dict[str, str] = {
    "5 0,1 * * 1-5": "announcement",  # 20:05 ET: the API and the announcement feed
    "40 2,3 * * 1-5": "oai",  # 22:40 ET: OAI-PMH has the day (every version, DOIs)
    "17 * * * *": "hourly",  # Hugging Face, digests; off the hour, which GitHub delays most
}
# How late GitHub may start a scheduled run before the slot counts as missed: starts
# 10-60 minutes late are common, and a run queued behind a running one waits for it.
GRACE = dt.timedelta(minutes=90)
TRIGGER = "schedule"  # github.event_name of a run the schedule started
# The update workflow's run step sets this to github.event_name. Only that step: the tests
# and the demo, run by a scheduled workflow too (lock.yml), are not the schedule's runs.
TRIGGER_ENV = "PAPERTRAIL_RUN_TRIGGER"


def trigger() -> str | None:
    """What started this process's runs, if it was the workflow's schedule."""
    return TRIGGER if os.environ.get(TRIGGER_ENV) == TRIGGER else None


class Cron:
    """One five-field cron line as GitHub reads it: numbers, `*`, `a-b`, `*/n`, `a/n`, lists; day
    of week 0-6 from Sunday (7 is Sunday too); day of month and day of week, when both are
    restricted, match either (POSIX cron)."""

    _RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))

    def __init__(self, line: str) -> None:
        fields = line.split()
        if len(fields) != 5:
            raise ValueError(f"a cron line has five fields: {line!r}")
        self.line = line
        self.minutes, self.hours, self.days, self.months, dows = (
            self._field(f, lo, hi) for f, (lo, hi) in zip(fields, self._RANGES, strict=True))
        self.dows = frozenset(d % 7 for d in dows)
        self._days_any, self._dows_any = fields[2] == "*", fields[4] == "*"

    @staticmethod
    def _field(text: str, lo: int, hi: int) -> frozenset[int]:
        values: set[int] = set()
        for part in text.split(","):
            span, _, step = part.partition("/")
            first, last = (lo, hi) if span == "*" else (
                (int(span.split("-")[0]), int(span.split("-")[-1])))
            if step and "-" not in span:
                last = hi  # `a/n`: from a to the end, every n
            if not lo <= first <= last <= hi:
                raise ValueError(f"{part!r} is outside {lo}-{hi}")
            values.update(range(first, last + 1, int(step or 1)))
        return frozenset(values)

    def _day(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        by_day, by_dow = day.day in self.days, (day.isoweekday() % 7) in self.dows
        if self._days_any or self._dows_any:
            return by_day and by_dow
        return by_day or by_dow

    def times(self, after: dt.datetime, until: dt.datetime) -> Iterator[dt.datetime]:
        """The UTC times this line fires in (after, until]."""
        hour = after.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
        while hour <= until:
            if hour.hour in self.hours and self._day(hour.date()):
                for minute in sorted(self.minutes):
                    at = hour.replace(minute=minute)
                    if after < at <= until:
                        yield at
            hour += dt.timedelta(hours=1)


def slots(after: dt.datetime, until: dt.datetime,
          crons: Iterable[str] = CRONS) -> list[dt.datetime]:
    """Every time the schedule fires in (after, until], each once."""
    return sorted({t for line in crons for t in Cron(line).times(after, until)})


@dataclass(frozen=True)
class Gap:
    """No scheduled run from `last` (a run's start) to `next` (the next one's), while the
    schedule fired `missed` times in between, `arxiv` of them on arXiv's clock."""

    last: dt.datetime
    next: dt.datetime
    missed: int
    arxiv: int

    @property
    def hours(self) -> float:
        return (self.next - self.last).total_seconds() / 3600


def scheduled_starts(runs: pd.DataFrame) -> list[dt.datetime]:
    """When the runs the schedule started began (from their details; a damaged row is not
    one of them)."""
    starts = set()
    for started, details in zip(runs["started"], runs["details"], strict=True):
        try:
            if json.loads(details).get("trigger") == TRIGGER:
                starts.add(pd.Timestamp(started).to_pydatetime())
        except (TypeError, ValueError, AttributeError):
            continue
    return sorted(starts)


def gaps(runs: pd.DataFrame, since: dt.datetime, crons: dict[str, str] = CRONS) -> list[Gap]:
    """The missed runs between scheduled runs that ended after `since`, oldest first: each
    stretch between two scheduled runs in which a slot passed its grace with no run."""
    if runs.empty:
        return []
    found = []
    starts = scheduled_starts(runs)
    for last, nxt in itertools.pairwise(starts):
        if nxt <= since:
            continue
        late = [(t, line) for line in crons for t in Cron(line).times(last, nxt - GRACE)]
        missed = {t for t, _ in late}
        if missed:
            arxiv = {t for t, line in late if crons[line] != "hourly"}
            found.append(Gap(last=last, next=nxt, missed=len(missed), arxiv=len(arxiv)))
    return found
