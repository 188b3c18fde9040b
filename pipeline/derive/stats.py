"""The numbers the site states, computed from the tables (pure functions; last_24h alone
reads the store, for the job summary).

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
import pyarrow.compute as pc

from pipeline import schedule
from pipeline.config import Config
from pipeline.derive import scope
from pipeline.sources import SOURCES
from pipeline.store import Store
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


def clock(runs: pd.DataFrame) -> dt.datetime:
    """The site's "now": when the newest run finished, so a rebuild of unchanged data
    writes the same bytes; but never past the build's own clock, and never a paper's
    time: one run or paper dated 2099 would empty every 24 h window and take every paper
    page past paper_pages_days."""
    return min(as_of(runs), dt.datetime.now(dt.UTC).replace(microsecond=0))


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
class Window:
    """The last 24 hours, (start, end], and the ids behind each number the site states of
    them. The home page, the 24-hour briefs, the sources page, status.json and the job
    summary all count from this one, so no two of them disagree."""

    start: dt.datetime
    end: dt.datetime
    new: frozenset[str]  # papers first seen in it
    ai: frozenset[str]  # of those, the AI-related
    revised: frozenset[str]  # stored papers a later version of which came in it
    digests: frozenset[str]  # papers whose digest (the one shown: latest_digests) came in it


def latest_digests(digests: pd.DataFrame, language: str) -> pd.DataFrame:
    """The digest each paper shows: its newest ok one in `language`, not superseded."""
    if digests.empty:
        return digests
    ok = digests[(digests["status"] == "ok") & (digests["language"] == language)
                 & ~digests["superseded"].fillna(False).astype(bool)]
    ok = ok.sort_values(["arxiv_id", "version", "created"], kind="stable")
    return ok.drop_duplicates("arxiv_id", keep="last")


@dataclass(frozen=True)
class HomeStats:
    now: dt.datetime
    window: Window
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
    def window_start(self) -> dt.datetime:
        return self.window.start

    @property
    def new_papers(self) -> int:
        return len(self.window.new)

    @property
    def new_ai(self) -> int:
        return len(self.window.ai)

    @property
    def revised(self) -> int:
        return len(self.window.revised)

    @property
    def new_digests(self) -> int:
        return len(self.window.digests)

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


def window(papers: pd.DataFrame, versions: pd.DataFrame, digests: pd.DataFrame,
           language: str, end: dt.datetime) -> Window:
    start = end - dt.timedelta(hours=24)
    new = papers[in_window(papers["first_seen"], start, end)]
    revised = revisions(versions, papers)
    shown = latest_digests(digests, language)

    def ids(frame: pd.DataFrame) -> frozenset[str]:
        return frozenset(frame["arxiv_id"].astype(str))

    return Window(
        start=start, end=end, new=ids(new), ai=ids(new[new["ai_related"].fillna(False)
                                                       .astype(bool)]),
        revised=ids(revised[in_window(revised["first_seen"], start, end)]),
        digests=ids(shown[in_window(shown["created"], start, end)]) if not shown.empty
        else frozenset())


def last_24h(cfg: Config, store: Store) -> Window:
    """The window as the site counts it, read from the store (for the job summary): the
    papers in the fork's scope, up to the site's clock."""
    papers = scope.within(cfg, store.library())
    kept = papers["arxiv_id"].combine_chunks()

    def of_papers(name: str) -> pd.DataFrame:
        table = store.read(name)
        return table.filter(pc.is_in(table["arxiv_id"], value_set=kept)).to_pandas()

    return window(papers.to_pandas(), of_papers("versions"), of_papers("digests"),
                  cfg.digest_language, clock(store.runs()))


def home(papers: pd.DataFrame, versions: pd.DataFrame, digests: pd.DataFrame,
         runs: pd.DataFrame, tz: ZoneInfo, language: str, now: dt.datetime | None = None,
         announcements: pd.DataFrame | None = None) -> HomeStats:
    now = now or as_of(runs)
    finished = runs[runs["status"].isin(["ok", "partial"])] if not runs.empty else runs
    local_day = now.astimezone(EASTERN).date()
    return HomeStats(
        now=now, window=window(papers, versions, digests, language, now),
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
