"""Hugging Face daily papers: the community's picks of each day, read day by day.

Through huggingface_hub's headers and error types (requests through pipeline.outbound,
bounded as every source's are), but not
`HfApi.list_daily_papers`: in 2.4.0 it reads upvotes, repo, stars, project page
and summary from the item's top level while today's items carry them inside
`paper` (so they come back None), and it has no timeout and no retries. So we
request `/api/daily_papers?date=…&p=…&limit=…` ourselves, with a timeout on every
request and backoff on 429/5xx honouring Retry-After, and parse each item
defensively (it is untrusted JSON; both the 2024 and today's shapes).

A day with no list (404, or an empty list) is nothing that day, not a failure.
A response that is not a JSON list of items fails the run at that day.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import httpx2
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from huggingface_hub import __version__ as hub_version
from huggingface_hub import constants as hf_constants
from huggingface_hub.errors import HfHubHTTPError

# Public API (the library's docs name it), exported through a lazy __all__ mypy can't read
from huggingface_hub.utils import build_hf_headers, hf_raise_for_status  # type: ignore[attr-defined]

import pipeline.sources._http as _http
from pipeline import outbound
from pipeline.report import RunReport
from pipeline.sources._source import (
    Catch,
    Fact,
    Library,
    Link,
    Merged,
    Options,
    Picks,
    Signal,
    start_day,
)
from pipeline.sources._untrusted import Malformed, NotExpected, json_value, too_long
from pipeline.sources.arxiv import SOURCE as ARXIV
from pipeline.sources.arxiv import Fetch, fetch_ids, split_id
from pipeline.tables import REBUILD, Table, to_table
from pipeline.text.ids import is_arxiv_id
from pipeline.text.taxonomy import CS_CATEGORIES
from pipeline.text.untrusted import Findings, clean_text, not_after

if TYPE_CHECKING:
    from pipeline.config import Config, HFConfig

_STRS = pa.list_(pa.string())

# One pick of a daily list, as read: what a snapshot keeps.
HF_SNAPSHOT = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("arxiv_id", pa.string()),
    ("hf_day", pa.date32()),  # the daily list the pick appeared in
    ("upvotes", pa.int32()),
    ("github_repo", pa.string()),
    ("github_stars", pa.int32()),
    ("project_page", pa.string()),
    ("ai_keywords", _STRS),
    ("ai_summary", pa.string()),
    ("submitted_on_daily_at", pa.timestamp("us", tz="UTC")),
    ("organization", pa.string()),
    ("num_comments", pa.int32()),
    ("title", pa.string()),
    ("fetched_at", pa.timestamp("us", tz="UTC")),
])

# The source's own table: one row per paper the community picked, its first day and its
# latest signals. Its columns join every paper (`library_view`) under these names.
HF_TABLE = Table("hf", pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("arxiv_id", pa.string()),
    ("hf_day", pa.date32()),  # first day the community picked it
    ("hf_upvotes", pa.int32()),
    ("hf_repo", pa.string()),
    ("hf_stars", pa.int32()),
    ("hf_project_page", pa.string()),
    ("hf_keywords", _STRS),
    ("hf_summary", pa.string()),
    ("hf_organization", pa.string()),
    ("hf_comments", pa.int32()),
]), ("arxiv_id",), on_save="rebuild", remedy=REBUILD, dictionary=frozenset({"hf_keywords"}))

def picks_outside(cfg: Config) -> bool:
    """Whether picks in none of the fork's categories are in its scope: `[sources.hf]
    outside_categories`, where "auto" shows them to a fork of all of cs.*."""
    choice = cfg.sources.hf.outside_categories
    if choice == "auto":
        return set(CS_CATEGORIES) <= set(cfg.sources.arxiv.categories)
    return choice == "show"


_MAX_PAGES = 20  # a daily list has tens of picks; more pages means the server ignores `p`
_INT32 = 2**31 - 1


@dataclass
class HFFetch:
    """What one run read: picks (even when it stopped early) and how it ended."""

    rows: list[dict[str, object]] = field(default_factory=list)
    stats: outbound.FetchStats = field(default_factory=outbound.FetchStats)
    error: str | None = None
    last_day: dt.date | None = None  # the last day read completely, in order
    days: dict[str, int] = field(default_factory=dict)  # day → picks (0: no list that day)
    findings: Findings = field(default_factory=Findings)  # items rejected, dates far ahead

    @property
    def complete(self) -> bool:
        return self.error is None

    def table(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows, schema=HF_SNAPSHOT)


class HFClient:
    """GET the daily list of one day, page by page, politely."""

    def __init__(self, cfg: HFConfig, deadline: float) -> None:
        self.cfg = cfg
        self.url = cfg.endpoint.rstrip("/") + "/api/daily_papers"
        # token=False: public data, and a forker's local HF token must not leave the machine.
        self.headers = build_hf_headers(token=False, library_name="papertrail",
                                        library_version=hub_version)
        # `deadline`: time.monotonic() by which the whole run ends.
        self._requests = _http.Requests(cfg, deadline, name="hf", limit="the run's time limit")
        self.stats = self._requests.stats

    def day(self, day: dt.date) -> list[Any]:
        """Every item of one day's list ([] when there is none)."""
        items: list[Any] = []
        seen: set[str] = set()
        for page in range(_MAX_PAGES):
            params = {"date": day.isoformat(), "p": page, "limit": self.cfg.page_size}
            got = self._requests.call(functools.partial(self._request, params),
                                      lambda resp: self._items(resp, day),
                                      f"{self.url}?date={day.isoformat()}")
            if got is None:
                return items
            fresh = [it for it in got if _item_id(it) not in seen]
            seen.update(_item_id(it) for it in fresh)
            items.extend(fresh)
            if len(got) < self.cfg.page_size or not fresh:
                return items
        return items

    def _request(self, params: dict[str, Any], deadline: float) -> httpx2.Response:
        """One page's GET (outbound.get: bounded as a whole), as the response
        hf_raise_for_status reads."""
        if hf_constants.HF_HUB_OFFLINE:  # as huggingface_hub's own session would refuse
            raise _http.SourceError("HF_HUB_OFFLINE is set: huggingface_hub refuses to connect")
        url = str(httpx2.URL(self.url, params=params))
        status, headers, body = outbound.get(url, self.headers, deadline)
        return httpx2.Response(status, headers=headers, content=body,
                               request=httpx2.Request("GET", url))

    @staticmethod
    def _items(resp: httpx2.Response, day: dt.date) -> list[Any] | None:
        """The day's items; None for 'no list that day'."""
        outbound.check_status(resp.status_code, resp.headers)
        if resp.status_code == 404:
            return None
        try:
            hf_raise_for_status(resp)
        except HfHubHTTPError as exc:
            first_line = next(iter(str(exc).strip().splitlines()), "")
            raise _http.SourceError(f"HTTP {resp.status_code} {first_line}".strip()) from None
        try:
            items = json_value(resp.content, "JSON")
        except (Malformed, NotExpected) as exc:
            raise _http.SourceError(f"{exc} for {day}") from None
        if not isinstance(items, list):
            raise _http.SourceError(f"expected a JSON list for {day}, got {type(items).__name__}")
        return items


def _item_id(item: Any) -> str:
    paper = item.get("paper") if isinstance(item, dict) else None
    return str(paper.get("id")) if isinstance(paper, dict) else repr(item)[:100]


def _string(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return " ".join(clean_text(value).split()) or None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return max(0, min(value, _INT32))


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(dt.UTC) if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _url(value: Any) -> str | None:
    text = _string(value)
    return text if text and re.match(r"^https?://", text) else None


def parse_item(item: Any, day: dt.date, fetched_at: dt.datetime, findings: Findings
               ) -> dict[str, object] | None:
    """One daily item → an HF_SNAPSHOT row; None (recorded in `findings`) when it has no
    usable arXiv id, which names the paper's files and pages.

    Today's shape keeps the signals inside `paper`; the 2024 shape has some (numComments)
    only at the top level, so each field falls back to the top level.
    """
    if not isinstance(item, dict) or not isinstance(item.get("paper"), dict):
        findings.reject(item, "not an item with a paper object")
        return None
    if oversized := too_long(item):
        findings.reject(item["paper"].get("id"), oversized)
        return None
    paper = item["paper"]

    def get(key: str) -> Any:
        value = paper.get(key)
        return item.get(key) if value is None else value

    arxiv_id = paper.get("id")
    if not isinstance(arxiv_id, str) or not is_arxiv_id(arxiv_id):
        findings.reject(arxiv_id, "paper id is not an arXiv id")
        return None
    org = get("organization")
    if isinstance(org, dict):
        org = org.get("fullname") or org.get("name")
    keywords = get("ai_keywords")
    keywords = ([k for k in (_string(x) for x in keywords) if k] if isinstance(keywords, list)
                else None)
    # The 2024 shape has no submittedOnDailyAt; its top-level publishedAt is that moment.
    submitted = _time(paper.get("submittedOnDailyAt")) or _time(item.get("publishedAt"))
    findings.check_date(arxiv_id, "submitted_on_daily_at", submitted, fetched_at)
    return {
        "arxiv_id": split_id(arxiv_id)[0], "hf_day": day,
        "upvotes": _count(get("upvotes")),
        "github_repo": _url(get("githubRepo")), "github_stars": _count(get("githubStars")),
        "project_page": _url(get("projectPage")), "ai_keywords": keywords,
        "ai_summary": _string(get("ai_summary")), "submitted_on_daily_at": submitted,
        "organization": _string(org), "num_comments": _count(get("numComments")),
        "title": _string(get("title")), "fetched_at": fetched_at,
    }


def fetch_days(cfg: HFConfig, days: list[dt.date], fetched_at: dt.datetime, *,
               deadline: float = math.inf) -> HFFetch:
    """Read the lists of `days` in order; stop at the first day that fails, or at `deadline`
    (time.monotonic()). Never raises for the source's faults: they end up in `error`."""
    client = HFClient(cfg, deadline)
    fetch = HFFetch(stats=client.stats)
    for day in days:
        try:
            items = client.day(day)
        except _http.SourceError as exc:
            fetch.error = f"{day}: {exc}"
            break
        rows = [parse_item(it, day, fetched_at, fetch.findings) for it in items]
        fetch.rows.extend(r for r in rows if r is not None)
        fetch.days[day.isoformat()] = sum(r is not None for r in rows)
        fetch.last_day = day
    return fetch


# -- the source ------------------------------------------------------------------------------


class HFSource:
    """The daily lists from the watermark day (minus the overlap) to today.

    Picks the store does not hold yet are fetched from arXiv by id first (and kept as an
    arxiv snapshot of this run, which rebuild replays just before its HF snapshot), so
    every pick has a full record."""

    name = "hf"
    label: Mapping[str, str] = {"zh-CN": "Hugging Face 社区推荐", "en": "Hugging Face daily papers"}
    schema = HF_SNAPSHOT
    tables: tuple[Table, ...] = (HF_TABLE,)
    facts: tuple[Fact, ...] = ()  # the site shows its picks in pages of their own
    # Its board's votes: 今日精选 weighs them by `[rank] hf_upvotes`, topics by `min_upvotes`
    signals: tuple[Signal, ...] = (
        Signal("upvotes", "hf_upvotes", "hf", lambda rank: rank.hf_upvotes),)
    picks: Picks | None = Picks("hf_day", "hf_upvotes", picks_outside)
    links: tuple[Link, ...] = (Link("hf_repo", "code"), Link("hf_project_page", "page"))

    def enabled(self, cfg: Config) -> bool:
        return cfg.sources.hf.enabled

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        hcfg = cfg.sources.hf
        # The HF mark is the start of a day this clock read: past `started` it is never right.
        before = not_after(watermark, started, skew=dt.timedelta(0))
        today = started.astimezone(dt.UTC).date()
        since = start_day(options, before, started, overlap_days=hcfg.overlap_days,
                          backfill_days=hcfg.backfill_days)
        fetch = fetch_days(hcfg, [since + dt.timedelta(days=i)
                                  for i in range((today - since).days + 1)], started,
                           deadline=time.monotonic() + hcfg.max_run_seconds)
        batch = fetch.table()
        missing, by_id, joined = _join_missing(cfg, library, batch, started)
        if joined is not None:
            library = Library(joined.papers, library.version_keys, library.tables)
        merged = merge_hf(library.papers, library.tables.get("hf"), batch)

        id_error = by_id.error if by_id is not None else None
        errors = [e for e in (fetch.error, id_error and f"arXiv by id: {id_error}") if e]
        error = "; ".join(errors) or None
        last = (dt.datetime.combine(fetch.last_day, dt.time(), dt.UTC) if fetch.last_day
                else None)
        id_stats = by_id.stats if by_id is not None else outbound.FetchStats()
        counts = {**merged.counts,
                  "cross_listed": joined.counts["cross_listed"] if joined is not None else 0}
        report = RunReport(
            self.name, "ok" if error is None else ("partial" if fetch.last_day else "failed"),
            counts, fetch.stats.requests + id_stats.requests,
            fetch.stats.retries + id_stats.retries, error, before,
            max(filter(None, [before, last]), default=None) if error is None else before)
        catch = Catch(report, since, {"days": fetch.days, **fetch.findings.details(),
                                      "unmatched": merged.unmatched,
                                      "arxiv_by_id": _by_id_details(missing, by_id)})
        if joined is not None:
            catch.add(ARXIV.name, joined)
        catch.add(self.name, Merged(library.papers, merged.changed, merged.counts,
                                    tables={"hf": merged.picks}))
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        merged = merge_hf(library.papers, library.tables.get("hf"), batch)
        return Merged(library.papers, merged.changed, merged.counts,
                      tables={"hf": merged.picks})


def _join_missing(cfg: Config, library: Library, batch: pa.Table, started: dt.datetime
                  ) -> tuple[list[str], Fetch | None, Merged | None]:
    """Picks the library lacks, fetched from arXiv by id and merged (None: none fetched)."""
    known = set(library.papers["arxiv_id"].to_pylist())
    missing = sorted({i for i in cast(list[str], batch["arxiv_id"].to_pylist()) if i not in known})
    if not missing:
        return missing, None, None
    by_id = fetch_ids(cfg.sources.arxiv, missing, started)
    if not by_id.rows:
        return missing, by_id, None
    return missing, by_id, ARXIV.merge(cfg, library, by_id.table())


def _by_id_details(missing: list[str], by_id: Fetch | None) -> dict[str, Any]:
    """What the ledger says of the picks fetched from arXiv by id."""
    if by_id is None:
        return {"requested": 0, "fetched": 0, "not_found": [], "requests": 0, "retries": 0}
    fetched = {r["arxiv_id"] for r in by_id.rows}
    return {"requested": len(missing), "fetched": len(fetched),
            "not_found": sorted(set(missing) - fetched) if by_id.error is None else [],
            "requests": by_id.stats.requests, "retries": by_id.stats.retries,
            **by_id.findings.details()}


# -- folding picks into the source's table ---------------------------------------------------

# snapshot column → table column: the signals a later reading replaces
HF_SIGNALS = {"upvotes": "hf_upvotes", "github_repo": "hf_repo", "github_stars": "hf_stars",
              "project_page": "hf_project_page", "ai_keywords": "hf_keywords",
              "ai_summary": "hf_summary", "organization": "hf_organization",
              "num_comments": "hf_comments"}


@dataclass(frozen=True)
class HFMerge:
    picks: pa.Table  # the hf table after the merge
    changed: pa.Table  # one row per paper whose HF columns changed: what a snapshot keeps
    fetched: int  # picks read (one paper can be picked on several days)
    new: int  # papers picked for the first time
    revised: int  # picks whose upvotes, stars, repo, … changed
    unchanged: int
    unmatched: int  # picks of papers the store does not hold (left out)

    @property
    def counts(self) -> dict[str, int]:
        return {"fetched": self.fetched, "new": self.new, "revised": self.revised,
                "unchanged": self.unchanged}


def merge_hf(papers: pa.Table, picks: pa.Table | None, batch: pa.Table) -> HFMerge:
    """Fold HF picks into the hf table: the first day picked is kept, the latest signals win.

    A signal the reading lacks (null; e.g. the 2024 shape has no githubRepo) keeps the
    stored value. Picks of papers not in `papers` are counted and left out. Pure."""
    picks = HF_TABLE.schema.empty_table() if picks is None else picks
    batch = to_table(batch, HF_SNAPSHOT)
    fetched = batch.num_rows
    if fetched == 0:
        return HFMerge(picks, batch, 0, 0, 0, 0, 0)
    batch = batch.take(pc.sort_indices(batch, [("arxiv_id", "ascending"),
                                               ("fetched_at", "ascending"),
                                               ("hf_day", "ascending")]))
    ids = pd.Index(batch["arxiv_id"].to_numpy(zero_copy_only=False))
    first_day = batch["hf_day"].to_pandas().groupby(ids).transform("min").to_numpy()
    last = ~ids.duplicated(keep="last")
    batch = batch.filter(pa.array(last))
    batch = batch.set_column(batch.schema.get_field_index("hf_day"), "hf_day",
                             pa.array(first_day[last], HF_SNAPSHOT.field("hf_day").type))

    known = pc.is_in(batch["arxiv_id"], value_set=papers["arxiv_id"].combine_chunks())
    # stubs: pc.sum takes booleans
    unmatched = batch.num_rows - int(pc.sum(known).as_py() or 0)  # type: ignore[type-var]
    batch = batch.filter(known)
    if batch.num_rows == 0:
        return HFMerge(picks, batch, fetched, 0, 0, 0, unmatched)
    at = pc.index_in(batch["arxiv_id"], value_set=picks["arxiv_id"].combine_chunks())
    stored = picks.take(at)  # null rows for papers picked for the first time

    merged = {"arxiv_id": batch["arxiv_id"],
              "hf_day": pc.min_element_wise(stored["hf_day"], batch["hf_day"],
                                            skip_nulls=True)}
    for snap_col, own_col in HF_SIGNALS.items():
        merged[own_col] = pc.coalesce(batch[snap_col], stored[own_col])
    after = to_table(pa.table(merged), HF_TABLE.schema)
    differs = (_as_strings(after) != _as_strings(stored)).any(axis=1).to_numpy()
    is_new = at.is_null().to_numpy(zero_copy_only=False)
    mask = pa.array(differs)
    kept = picks.filter(pc.invert(pc.is_in(picks["arxiv_id"], value_set=after.filter(mask)[
        "arxiv_id"].combine_chunks())))
    table = pa.concat_tables([kept, after.filter(mask)])
    table = table.take(pc.sort_indices(table, [("arxiv_id", "ascending")])).combine_chunks()
    return HFMerge(picks=table, changed=batch.filter(mask), fetched=fetched,
                   new=int(is_new.sum()), revised=int((differs & ~is_new).sum()),
                   unchanged=int((~differs).sum()), unmatched=unmatched)


def _as_strings(table: pa.Table) -> pd.DataFrame:
    """Every column as text in Arrow (pandas would turn int columns with nulls into floats)."""
    cols = {}
    for name in table.column_names:
        col = table[name]
        # stubs: the result type of an array's function includes scalars
        col = (pc.binary_join(col, "\x1f") if pa.types.is_list(col.type)  # type: ignore[assignment]
               else pc.cast(col, pa.string()))
        # stubs: fill_null is typed as coalesce (one type for values and fill)
        cols[name] = pc.fill_null(col, "\x00").to_numpy(zero_copy_only=False)  # type: ignore[attr-defined, type-var]
    return pd.DataFrame(cols)


SOURCE = HFSource()
