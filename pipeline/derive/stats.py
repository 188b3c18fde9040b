"""The numbers the site states, computed from the tables (pure functions, no I/O).

Windows are computed at build time in the site's time zone; the build's "now"
is the end of the newest run in the ledger (the data's own clock), so a
rebuild of unchanged data states the same numbers and writes the same bytes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, cast
from zoneinfo import ZoneInfo

import pandas as pd

from pipeline import schedule
from pipeline.sources import SOURCES
from pipeline.tables import MOVES_WATERMARK

# arXiv's announcement calendar: Sunday–Thursday 20:00 US-Eastern; none on Friday or
# Saturday evenings, nor on these holidays (arXiv's availability page).
EASTERN = ZoneInfo("America/New_York")
ARXIV_HOLIDAYS = frozenset(dt.date.fromisoformat(d) for d in (
    "2026-01-01", "2026-01-19", "2026-06-19", "2026-07-03", "2026-09-07", "2026-11-26",
    "2026-12-25", "2026-12-29", "2026-12-31",
))


def announces_on(day: dt.date) -> bool:
    """Whether arXiv sends an announcement on the evening (US-Eastern) of `day`."""
    return day.weekday() in (6, 0, 1, 2, 3) and day not in ARXIV_HOLIDAYS


def as_of(runs: pd.DataFrame) -> dt.datetime:
    """The data's clock: when the newest run finished (now, before the first run)."""
    if runs.empty or runs["finished"].isna().all():
        return dt.datetime.now(dt.UTC).replace(microsecond=0)
    return cast(dt.datetime, runs["finished"].max().to_pydatetime())


@dataclass(frozen=True)
class SourceState:
    source: str
    status: str
    last_attempt: dt.datetime | None
    last_success: dt.datetime | None
    fetched: int
    new: int
    revised: int
    error: str | None
    watermark: dt.datetime | None
    tokens: int = 0

    @property
    def failing(self) -> bool:
        return self.status in ("failed", "partial")


FEW_CATEGORIES = 6  # the home page names each of this many, complete or not


@dataclass(frozen=True)
class Completeness:
    """One category's line of the completeness ledger: what arXiv announced on `day` (by
    how it was listed there) and how much of it the store held when last checked."""

    day: dt.date
    category: str
    new: int
    cross: int
    replace: int
    held: int
    capped: bool  # the feed stopped at arXiv's 2,000 items: it may have announced more

    @property
    def announced(self) -> int:
        return self.new + self.cross + self.replace

    @property
    def complete(self) -> bool:
        return self.held >= self.announced


def completeness(ledger: pd.DataFrame) -> list[Completeness]:
    """The ledger's newest announcement day, one line per category (in code order)."""
    if ledger.empty:
        return []
    day = ledger["day"].max()
    rows = ledger[ledger["day"] == day].sort_values("category")
    out = []
    for r in rows.to_dict("records"):
        listed = {k: len(r[k]) if r[k] is not None else 0
                  for k in ("new", "cross", "replace", "missing")}
        out.append(Completeness(
            day=pd.Timestamp(day).date(), category=str(r["category"]), new=listed["new"],
            cross=listed["cross"], replace=listed["replace"],
            held=listed["new"] + listed["cross"] + listed["replace"] - listed["missing"],
            capped=bool(r["capped"])))
    return out


def named(lines: list[Completeness]) -> list[Completeness]:
    """The categories a one-line summary names: those with a gap, or all of a few."""
    gaps = [c for c in lines if not c.complete]
    return gaps or (lines if len(lines) <= FEW_CATEGORIES else [])


def completeness_line(lines: list[Completeness]) -> str:
    """"announced 2026-06-23: 902 of 902 held · cs.CV: 312 of 312 · …", the plain form
    `status` and the job summary print ("+": the feed was capped, arXiv may have listed
    more)."""
    if not lines:
        return "no announcement recorded yet"
    held, listed = sum(c.held for c in lines), sum(c.announced for c in lines)
    return " · ".join([f"announced {lines[0].day.isoformat()}: {held:,} of {listed:,} held",
                       *(f"{c.category}: {c.held:,} of {c.announced:,}"
                         + ("+" if c.capped else "") for c in named(lines))])


@dataclass(frozen=True)
class HomeStats:
    now: dt.datetime
    window_start: dt.datetime
    new_papers: int
    new_ai: int
    revised: int
    new_digests: int
    last_check: dt.datetime | None
    last_new_version: dt.datetime | None
    newest_updated: dt.datetime | None
    total_papers: int
    total_ai: int
    total_revised: int
    total_hf: int
    sources: list[SourceState] = field(default_factory=list)
    announces_today: bool = True
    gaps: list[schedule.Gap] = field(default_factory=list)  # of the last GAP_DAYS
    completeness: list[Completeness] = field(default_factory=list)

    @property
    def degraded(self) -> bool:
        return any(s.failing for s in self.sources)

    @property
    def recent_gap(self) -> schedule.Gap | None:
        """The newest stretch of missed runs, if it ended in the last 24 hours."""
        return self.gaps[-1] if self.gaps and self.gaps[-1].next > self.window_start else None

    @property
    def held_of_announced(self) -> tuple[int, int]:
        """Of the newest announcement day in the ledger: versions held, versions listed."""
        return (sum(c.held for c in self.completeness),
                sum(c.announced for c in self.completeness))

    @property
    def completeness_shown(self) -> list[Completeness]:
        return named(self.completeness)


GAP_DAYS = 30  # how far back the sources page lists missed runs


def in_window(times: pd.Series, start: dt.datetime, end: dt.datetime) -> pd.Series:
    return (times > start) & (times <= end)


def revisions(versions: pd.DataFrame, papers: pd.DataFrame) -> pd.DataFrame:
    """Versions after the first one we stored of each paper: what 'revised' counts."""
    first = papers[["arxiv_id", "first_seen"]].rename(columns={"first_seen": "paper_seen"})
    later = versions[versions["version"] > 1].merge(first, on="arxiv_id", how="inner")
    return later[later["first_seen"] > later["paper_seen"]].drop(columns="paper_seen")


def source_states(runs: pd.DataFrame) -> list[SourceState]:
    out = []
    for source, mine in runs.groupby("source", sort=False):
        last = mine.iloc[-1]
        ok = mine[mine["status"] == "ok"]
        marks = mine.loc[mine["status"].isin(MOVES_WATERMARK), "watermark_after"].dropna()
        out.append(SourceState(
            source=str(source), status=str(last["status"]),
            last_attempt=_py(last["started"]),
            last_success=_py(ok["finished"].max()) if not ok.empty else None,
            fetched=_int(last["fetched"]), new=_int(last["new"]), revised=_int(last["revised"]),
            error=None if pd.isna(last["error"]) else str(last["error"]),
            watermark=_py(marks.max()) if not marks.empty else None,
            tokens=_int(mine["tokens_in"].sum()) + _int(mine["tokens_out"].sum()),
        ))
    order = {name: i for i, name in enumerate(ledger_order())}
    return sorted(out, key=lambda s: order.get(s.source, len(order)))


def ledger_order() -> tuple[str, ...]:
    """Whose runs the ledger holds, in the order they run: every source, then the change
    notes, the digests and the notifications."""
    return (*SOURCES, "notes", "digest", "notify")


def home(papers: pd.DataFrame, versions: pd.DataFrame, digests: pd.DataFrame,
         runs: pd.DataFrame, tz: ZoneInfo, now: dt.datetime | None = None,
         announcements: pd.DataFrame | None = None) -> HomeStats:
    now = now or as_of(runs)
    start = now - dt.timedelta(hours=24)
    new = papers[in_window(papers["first_seen"], start, now)]
    revised = revisions(versions, papers)
    revised = revised[in_window(revised["first_seen"], start, now)]
    ok_digests = digests[digests["status"] == "ok"] if not digests.empty else digests
    finished = runs[runs["status"].isin(["ok", "partial"])] if not runs.empty else runs
    local_day = now.astimezone(EASTERN).date()
    return HomeStats(
        now=now, window_start=start,
        new_papers=len(new), new_ai=int(new["ai_related"].fillna(False).sum()),
        revised=int(revised["arxiv_id"].nunique()),
        new_digests=int(in_window(ok_digests["created"], start, now).sum())
        if not ok_digests.empty else 0,
        last_check=_py(finished["finished"].max()) if not finished.empty else None,
        last_new_version=_py(versions["first_seen"].max()) if not versions.empty else None,
        newest_updated=_py(papers["updated"].max()) if not papers.empty else None,
        total_papers=len(papers), total_ai=int(papers["ai_related"].fillna(False).sum()),
        total_revised=int((papers["version"] > 1).sum()),
        total_hf=int(papers["hf_day"].notna().sum()),
        sources=source_states(runs) if not runs.empty else [],
        announces_today=announces_on(local_day),
        gaps=schedule.gaps(runs, since=now - dt.timedelta(days=GAP_DAYS)),
        completeness=completeness(announcements) if announcements is not None else [],
    )


def _py(value: dt.datetime | None) -> dt.datetime | None:
    if value is None or pd.isna(value):
        return None
    return pd.Timestamp(value).to_pydatetime()


def _int(value: Any) -> int:
    return 0 if value is None or pd.isna(value) else int(value)
