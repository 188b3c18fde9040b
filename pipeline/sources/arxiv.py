"""arXiv export API source: the papers of every configured category first submitted since
a watermark, and papers by id.

Since November 2025 the API selects a date range by a paper's first version (arXiv/
arxiv-search: docs/DATA.md, "Which path brings what"), so this source brings new papers;
revisions and metadata changes come through OAI-PMH (`sources/oai.py`).

The `arxiv` package describes the query (`Search`, its sort orders) and an entry
(`Result`); the requests are ours, because its `Client` has no public seam for what an
unattended run needs: a timeout on every request (it sets none), backoff that honours
Retry-After, retries on empty pages and truncated XML (its parser recovers from broken
XML), and a bound on the whole run's time. Pages are asked for with the query string of
arXiv's API manual and parsed strictly by `_atom`. A catch-up is read in date ranges, each
small enough for arXiv's cap on the offset of one query (`_Window`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict
from urllib.parse import urlencode

import arxiv
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import outbound
from pipeline.merge import merge_arxiv
from pipeline.outbound import Answer, FetchStats, Transient, check_status
from pipeline.report import RunReport, RunStatus
from pipeline.sources._atom import Page, Unreadable, api_error, parse_page
from pipeline.sources._http import Requests, SourceError
from pipeline.sources._source import (
    Catch,
    Fact,
    Library,
    Link,
    Merged,
    Options,
    Picks,
    Progress,
    Signal,
)
from pipeline.sources._untrusted import NotExpected
from pipeline.tables import ARXIV_SNAPSHOT, Table
from pipeline.text.ids import is_arxiv_id
from pipeline.text.names import name_tokens, same_person
from pipeline.text.untrusted import Findings, clean_text, not_after

if TYPE_CHECKING:
    from pipeline.config import ArxivConfig, Config

_ID = re.compile(r"^(?P<id>.+?)(?:v(?P<version>\d+))?$")


class _PageLimit(Exception):
    pass


class ArxivRow(TypedDict):
    """An entry as the snapshot stores it (ARXIV_SNAPSHOT)."""

    arxiv_id: str
    version: int
    title: str
    abstract: str
    authors: list[str]
    categories: list[str]
    primary_category: str
    comment: str | None
    journal_ref: str | None
    doi: str | None
    published: dt.datetime | None
    updated: dt.datetime | None
    fetched_at: dt.datetime


@dataclass
class Fetch:
    """What one catch-up got: entries (even when it stopped early) and how it ended."""

    rows: list[ArxivRow] = field(default_factory=list)
    stats: FetchStats = field(default_factory=FetchStats)
    error: str | None = None
    findings: Findings = field(default_factory=Findings)
    seen: set[str] = field(default_factory=set)  # versioned ids already kept

    @property
    def complete(self) -> bool:
        return self.error is None

    def table(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows, schema=ARXIV_SNAPSHOT)

    def set_aside(self, client: PoliteClient) -> None:
        """Record in the ledger the entries the client's pages could not keep."""
        for entry_id, why in client.set_aside:
            self.findings.reject(entry_id, why)

    def keep(self, result: arxiv.Result, fetched_at: dt.datetime) -> None:
        """Keep an entry's row once (two date ranges share their boundary minute)."""
        short_id = result.get_short_id()
        if short_id in self.seen:
            return
        self.seen.add(short_id)
        row = _checked(result, fetched_at, self.findings)
        if row is not None:
            self.rows.append(row)


@dataclass
class Updates(Fetch):
    """A catch-up read in date ranges, oldest first: also how far every range was read."""

    through: dt.datetime | None = None  # everything updated up to here is read
    ranges: int = 0  # ranges read (halved ones not counted)
    # ranges arXiv could not serve whole
    truncated: list[dict[str, object]] = field(default_factory=list)
    # ranges whose pages held fewer distinct entries than their count announced (a mirror
    # that ignores `start` sends its first page again and again)
    shortfall: list[dict[str, object]] = field(default_factory=list)

    def details(self) -> dict[str, object]:
        return {"ranges": self.ranges, "truncated_count": len(self.truncated),
                "truncated": self.truncated[:50], "shortfall_count": len(self.shortfall),
                "shortfall": self.shortfall[:50]}




class PoliteClient:
    """The results of an `arxiv.Search`, page by page as they are consumed (as the package's
    own client pages), each page fetched politely, within bounds and parsed strictly."""

    def __init__(self, cfg: ArxivConfig, *, deadline: float,
                 max_pages: int | None = None) -> None:
        self.cfg = cfg
        self.max_pages = max_pages
        self._requests = Requests(cfg, deadline, name="arxiv",
                                  limit=f"max_run_seconds ({cfg.max_run_seconds:g} s)")
        self.stats = self._requests.stats
        self.set_aside: list[tuple[str, str]] = []  # (entry id, why) of every page read

    def results(self, search: arxiv.Search) -> Iterator[arxiv.Result]:
        found = itertools.chain.from_iterable(page.results for page in self.pages(search))
        return itertools.islice(found, search.max_results)

    def pages(self, search: arxiv.Search) -> Iterator[Page]:
        """The search's pages in order; no request asks past its max_results (arXiv refuses
        start + max_results beyond its cap)."""
        limit = math.inf if search.max_results is None else search.max_results
        offset = 0
        while True:
            page = self._page(search, offset, limit)
            yield page
            offset += page.entries
            if not page.entries or offset >= min(page.total_results, limit):
                return

    def _page(self, search: arxiv.Search, start: int, limit: float) -> Page:
        if self.max_pages is not None and self.stats.pages >= self.max_pages:
            raise _PageLimit(f"stopped after {self.max_pages} pages (--max-pages)")
        # The query string of arXiv's API manual, from the Search's public fields.
        url = self.cfg.api_url + "?" + urlencode({
            "search_query": search.query, "id_list": ",".join(search.id_list),
            "sortBy": search.sort_by.value, "sortOrder": search.sort_order.value,
            "start": str(start), "max_results": str(int(min(self.cfg.page_size,
                                                            limit - start)))})
        page = self._requests.call(lambda deadline: self._get(url, deadline),
                                   lambda answer: self._check(answer, url, start), url)
        self.stats.pages += 1
        self.set_aside += page.set_aside
        return page

    def _get(self, url: str, deadline: float) -> Answer:
        # arXiv answers a request without Accept with 406 (2026 reports).
        headers = {"User-Agent": f"{self.cfg.user_agent} arxiv.py/{arxiv.__version__}",
                   "Accept": "application/atom+xml, application/xml"}
        return outbound.get(url, headers, deadline)

    def _check(self, answer: Answer, url: str, start: int) -> Page:
        status, headers, body = answer
        check_status(status, headers)
        error = api_error(body)
        if error:
            raise SourceError(f"arXiv API error (HTTP {status}): {error}: {url}")
        if status != 200:
            raise SourceError(f"HTTP {status} from {url}")
        try:
            page = parse_page(body)
        except Unreadable as exc:
            raise Transient(str(exc)) from None
        except NotExpected as exc:  # another document served as 200: no retry mends that
            raise SourceError(f"{exc}: {url}") from None
        # arXiv now and then serves an empty page of a query that has results there. An
        # empty page is believed only when its count agrees: none at all, or none left from
        # `start` (an entry updated again meanwhile leaves its date range).
        if not page.entries and page.total_results > start:
            raise Transient("empty page")
        return page


def split_id(short_id: str) -> tuple[str, int]:
    """'2202.12139v3' → ('2202.12139', 3); an id without a version counts as v1."""
    m = _ID.match(short_id)
    if m is None or not is_arxiv_id(short_id):
        raise ValueError(f"not an arXiv id: {short_id!r}")
    return m["id"], int(m["version"] or 1)


def _clean(text: str | None) -> str | None:
    return None if text is None else (" ".join(clean_text(text).split()) or None)


def to_row(result: arxiv.Result, fetched_at: dt.datetime) -> ArxivRow:
    arxiv_id, version = split_id(result.get_short_id())
    return {
        "arxiv_id": arxiv_id, "version": version,
        "title": _clean(result.title) or "", "abstract": _clean(result.summary) or "",
        "authors": [clean_text(a.name) for a in result.authors],
        "categories": [clean_text(c) for c in result.categories],
        "primary_category": clean_text(result.primary_category),
        "comment": _clean(result.comment), "journal_ref": _clean(result.journal_ref),
        "doi": _clean(result.doi), "published": result.published, "updated": result.updated,
        "fetched_at": fetched_at,
    }


def category_query(categories: tuple[str, ...]) -> str:
    return " OR ".join(f"cat:{c}" for c in categories)


def fetch_updates(cfg: ArxivConfig, since: dt.datetime, fetched_at: dt.datetime, *,
                  max_pages: int | None = None, progress: Progress | None = None) -> Updates:
    """Every entry in the configured categories updated at or after `since`, in date ranges
    small enough for arXiv's cap (`_Window`). Never raises for the source's faults."""
    client = PoliteClient(cfg, deadline=time.monotonic() + cfg.max_run_seconds,
                          max_pages=max_pages)
    updates = Updates(stats=client.stats)
    try:
        _Window(cfg, client, updates, since, fetched_at, progress).read(
            Span(_minute(since), None))
    except (SourceError, _PageLimit) as exc:
        updates.error = str(exc)
    updates.set_aside(client)
    return updates


def fetch_ids(cfg: ArxivConfig, ids: list[str], fetched_at: dt.datetime, *,
              max_requests: int | None = None) -> Fetch:
    """Full records for specific papers (Hugging Face picks, watched papers), in batches of
    id_list; at most `max_requests` pages (then `error` says so)."""
    client = PoliteClient(cfg, deadline=time.monotonic() + cfg.max_run_seconds,
                          max_pages=max_requests)
    fetch = Fetch(stats=client.stats)
    for start in range(0, len(ids), cfg.id_batch_size):
        batch = ids[start:start + cfg.id_batch_size]
        search = arxiv.Search(id_list=batch, max_results=len(batch))
        fetch.error = _collect(client.results(search), fetch, fetched_at)
        if fetch.error:
            break
    fetch.set_aside(client)
    return fetch


@dataclass(frozen=True)
class Author:
    """A followed author, looked up across all of arXiv."""

    name: str
    match_initials: bool

    def query(self) -> str:
        """arXiv's `au:` on the whole name, or on the surname when initials may stand for
        given names (arxiv-search's author query matches a surname alone); `keeps` then
        says which of the results are the person."""
        tokens = name_tokens(self.name)
        return f'au:"{" ".join(tokens[-1:] if self.match_initials else tokens)}"'

    def keeps(self, result: arxiv.Result) -> bool:
        wanted = name_tokens(self.name)
        return any(same_person(wanted, name_tokens(a.name), self.match_initials)
                   for a in result.authors)


@dataclass
class Lookups(Fetch):
    """The follows' look-ups of one run: what was asked and what the bound left for later."""

    asked: list[str] = field(default_factory=list)  # "id_list (3 ids)", "au:\"lin yang\""
    skipped: list[str] = field(default_factory=list)  # authors past the run's bound

    def details(self) -> dict[str, object]:
        return {"asked": self.asked, "skipped": self.skipped, "fetched": len(self.rows),
                "requests": self.stats.requests, "error": self.error}


def look_up(cfg: ArxivConfig, ids: list[str], authors: list[Author],
            fetched_at: dt.datetime, *, turn: int = 0) -> Lookups:
    """Watched ids (id_list) and followed authors (`au:`, the newest page_size papers each,
    so never past arXiv's offset cap) across all of arXiv, within `lookups_per_run`
    requests: ids first, then the authors from the `turn`-th on, so that when they do not
    all fit, successive runs take them in turn. Never raises for the source's faults."""
    budget = cfg.lookups_per_run
    batches = math.ceil(len(ids) / cfg.id_batch_size)
    by_id = fetch_ids(cfg, ids, fetched_at, max_requests=min(batches, budget)) if ids \
        else Fetch()
    done = Lookups(rows=by_id.rows, stats=by_id.stats, error=by_id.error,
                   findings=by_id.findings, seen=by_id.seen,
                   asked=[f"id_list ({len(ids)} ids)"] if ids else [])
    left = budget - by_id.stats.pages
    order = authors[turn % len(authors):] + authors[:turn % len(authors)] if authors else []
    if done.error or left <= 0:
        done.skipped = [a.name for a in order]
        return done
    client = PoliteClient(cfg, deadline=time.monotonic() + cfg.max_run_seconds, max_pages=left)
    for i, author in enumerate(order):
        if client.stats.pages >= left:
            done.skipped = [a.name for a in order[i:]]
            break
        search = arxiv.Search(author.query(), max_results=cfg.page_size,
                              sort_by=arxiv.SortCriterion.SubmittedDate,
                              sort_order=arxiv.SortOrder.Descending)
        done.asked.append(search.query)
        try:
            for result in next(client.pages(search)).results:
                if author.keeps(result):
                    done.keep(result, fetched_at)
        except (SourceError, _PageLimit) as exc:
            done.error = str(exc)  # a failing server is not asked again this run
            done.skipped = [a.name for a in order[i + 1:]]
            break
    done.stats.requests += client.stats.requests
    done.stats.retries += client.stats.retries
    done.stats.pages += client.stats.pages
    return done


def _collect(results: Iterator[arxiv.Result], fetch: Fetch,
             fetched_at: dt.datetime) -> str | None:
    try:
        for result in results:
            fetch.keep(result, fetched_at)
    except (SourceError, _PageLimit) as exc:
        return str(exc)
    return None


def _checked(result: arxiv.Result, fetched_at: dt.datetime, findings: Findings) -> ArxivRow | None:
    """The entry's row, or None (recorded in `findings`) when its id is not an arXiv id: the
    id names files and pages. Unknown categories and dates far ahead are stored, and noted."""
    short_id = result.get_short_id()
    if not is_arxiv_id(short_id):
        findings.reject(short_id, "not an arXiv id")
        return None
    row = to_row(result, fetched_at)
    findings.check_categories([*row["categories"], row["primary_category"]])
    for name in ("updated", "published"):
        findings.check_date(short_id, name, row[name], fetched_at)
    return row


# -- the window, in date ranges -------------------------------------------------------------

# Entries updated again while a range is read leave it (its count was taken first): a
# range may come this much short of its count before the run calls it partial.
_SHORTFALL_ALLOWED = 0.01
_MIN_SPAN = dt.timedelta(hours=1)  # a range is halved only into halves this long or longer
# The newest range has no end, so an entry dated ahead of the run still comes (and is flagged).
_OPEN_END = "999912312359"


def _minute(t: dt.datetime) -> dt.datetime:
    return t.replace(second=0, microsecond=0)


def _stamp(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y%m%d%H%M")


@dataclass(frozen=True)
class Span:
    """A submittedDate range (the first version's date, all arXiv filters on) from `start`
    through `end`, to the minute (arXiv's resolution).
    arXiv's ranges include both ends, so consecutive spans share their boundary minute: no
    gap, and an entry on it comes twice and is kept once. The newest span has no end."""

    start: dt.datetime
    end: dt.datetime | None

    def query(self, categories: tuple[str, ...]) -> str:
        end = _OPEN_END if self.end is None else _stamp(self.end)
        return (f"submittedDate:[{_stamp(self.start)} TO {end}] AND "
                f"({category_query(categories)})")

    def halves(self, now: dt.datetime) -> tuple[Span, Span] | None:
        """The span cut at its middle minute; None when a half would be under `_MIN_SPAN`."""
        end = self.end or now
        if end - self.start < 2 * _MIN_SPAN:
            return None
        middle = _minute(self.start + (end - self.start) / 2)
        return Span(self.start, middle), Span(middle, self.end)

    def label(self) -> dict[str, str | None]:
        return {"from": self.start.isoformat(),
                "to": None if self.end is None else self.end.isoformat()}


@dataclass
class _Window:
    """Reads a window span by span, oldest first, each span newest first. arXiv serves at
    no result past offset 10,000 of one query however it is paged (a page past it is an
    HTTP 500), and its volume is not known in
    advance: a span whose first page says it holds more than max_results_per_query is halved
    and its halves read in turn, down to an hour. An hour that still holds more is read as
    far as that bound and recorded as truncated (a limit of arXiv's that no retry lifts)."""

    cfg: ArxivConfig
    client: PoliteClient
    updates: Updates
    since: dt.datetime
    fetched_at: dt.datetime
    progress: Progress | None

    def read(self, span: Span) -> None:
        bound = self.cfg.max_results_per_query
        search = arxiv.Search(span.query(self.cfg.categories), max_results=bound,
                              sort_by=arxiv.SortCriterion.LastUpdatedDate,
                              sort_order=arxiv.SortOrder.Descending)
        pages = self.client.pages(search)
        first = next(pages)  # always one: it says how many results the span holds
        halves = span.halves(self.fetched_at) if first.total_results > bound else None
        if halves is not None:
            for half in halves:
                self.read(half)
            return
        read = total = 0
        distinct: set[str] = set()
        for page in itertools.chain([first], pages):
            read, total = read + page.entries, page.total_results
            distinct.update(r.get_short_id() for r in page.results)
            distinct.update(entry_id for entry_id, _ in page.set_aside)
            for result in page.results:
                if result.updated >= self.since:  # the first span starts at since's minute
                    self.updates.keep(result, self.fetched_at)
            self._advance(span, read / max(total, 1))
        if total > bound:
            self.updates.truncated.append({**span.label(), "results": total, "read": read})
        if len(distinct) < min(total, bound) * (1 - _SHORTFALL_ALLOWED):
            self.updates.shortfall.append({**span.label(), "results": min(total, bound),
                                           "got": len(distinct)})
        self.updates.ranges += 1
        self.updates.through = span.end or self.fetched_at

    def _advance(self, span: Span, done: float) -> None:
        if self.progress is not None:
            end = max(span.end or self.fetched_at, span.start)
            self.progress.advance(len(self.updates.rows),
                                  span.start + (end - span.start) * min(done, 1.0))


# -- the source ------------------------------------------------------------------------------


def window_start(cfg: ArxivConfig, watermark: dt.datetime | None,
                 now: dt.datetime) -> dt.datetime:
    """Where a catch-up starts: the overlap before the watermark, or the backfill window."""
    if watermark is None:
        return now - dt.timedelta(days=cfg.backfill_days)
    return watermark - dt.timedelta(hours=cfg.overlap_hours)


class ArxivSource:
    """Every configured category, by first submission, back to the watermark minus the
    overlap (a paper is listed a day or more after it was submitted)."""

    name = "arxiv"
    label: Mapping[str, str] = {"zh-CN": "arXiv", "en": "arXiv"}
    schema = ARXIV_SNAPSHOT
    tables: tuple[Table, ...] = ()  # it writes papers and versions, the core's own
    facts: tuple[Fact, ...] = ()
    signals: tuple[Signal, ...] = ()
    picks: Picks | None = None
    links: tuple[Link, ...] = ()

    def enabled(self, cfg: Config) -> bool:
        return cfg.sources.arxiv.enabled

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        acfg = cfg.sources.arxiv
        before = not_after(watermark, started)
        since = options.since or window_start(acfg, before, started)
        if options.progress is not None:
            options.progress.begin(since, started)
        fetch = fetch_updates(acfg, since, started, max_pages=options.max_pages,
                              progress=options.progress)
        batch = fetch.table()
        # A server that just failed the harvest is not asked more of this run.
        lookups = (follow_lookups(cfg, library, {r["arxiv_id"] for r in fetch.rows}, started)
                   if fetch.complete else Lookups())
        merged = self.merge(cfg, library, pa.concat_tables([batch, lookups.table()]))
        status: RunStatus = (
            "ok" if fetch.complete and not (fetch.truncated or fetch.shortfall)
            and lookups.complete
            else "partial" if batch.num_rows or lookups.rows else "failed")
        wanted = set(acfg.categories)
        per_category = Counter(c for row in fetch.rows for c in row["categories"]
                               if c in wanted)
        problems = [p for p in (_problems(fetch, acfg), lookups.error
                                and f"follows' look-ups: {lookups.error}") if p]
        report = RunReport(self.name, status, merged.counts,
                           fetch.stats.requests + lookups.stats.requests,
                           fetch.stats.retries + lookups.stats.retries,
                           "; ".join(problems) or None, before,
                           _watermark(fetch, batch, before, started))
        catch = Catch(report, since, {"per_category": dict(sorted(per_category.items())),
                                      **fetch.details(), **fetch.findings.details(),
                                      **({"follows": lookups.details()}
                                         if lookups.asked or lookups.skipped else {})})
        catch.add(self.name, merged)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        merged = merge_arxiv(library.papers, library.version_keys, batch,
                             cfg.sources.arxiv.categories)
        return Merged(merged.papers, merged.changed, merged.counts, merged.new_versions)


def follow_lookups(cfg: Config, library: Library, harvested: set[str],
                   started: dt.datetime) -> Lookups:
    """What the follows name that the category harvest does not bring: watched papers
    neither just `harvested` nor stored in one of the categories (those the harvests keep
    current), and every followed author's newest papers."""
    acfg = cfg.sources.arxiv
    watched = list(dict.fromkeys(i for f in cfg.follows for i in f.watch))
    authors = list(dict.fromkeys(Author(a, f.match_initials) for f in cfg.follows
                                 for a in f.authors))
    if not (watched or authors) or acfg.lookups_per_run == 0:
        return Lookups()
    papers = library.papers.select(["arxiv_id", "categories"])
    papers = papers.filter(pc.is_in(papers["arxiv_id"], pa.array(watched, pa.string())))
    inside = {p["arxiv_id"] for p in papers.to_pylist()
              if set(p["categories"] or ()) & set(acfg.categories)}
    # Hourly runs take the authors in turn when they do not all fit in one run.
    turn = int(started.timestamp() // 3600)
    return look_up(acfg, [i for i in watched if i not in inside | harvested], authors,
                   started, turn=turn)


def _watermark(fetch: Updates, batch: pa.Table, before: dt.datetime | None,
               started: dt.datetime) -> dt.datetime | None:
    """How far the next run may skip: the newest entry when every range was read (a truncated
    one as far as arXiv serves it); otherwise the end of the newest range read to its end, as
    ranges go oldest first; never back, never for a run that got nothing."""
    if fetch.complete:
        mark = pc.max(batch["updated"]).as_py() if batch.num_rows else None
    else:
        mark = fetch.through if batch.num_rows else None
    return not_after(max(filter(None, [before, mark]), default=None), started)


def _problems(fetch: Updates, cfg: ArxivConfig) -> str | None:
    """The run's error: what stopped it, and what arXiv would not serve whole."""
    problems = [fetch.error] if fetch.error else []
    if fetch.truncated:
        cut = fetch.truncated[0]
        more = len(fetch.truncated) - 1
        problems.append(
            f"updates from {cut['from']} to {cut['to'] or 'now'} hold {cut['results']} results, "
            f"more than max_results_per_query ({cfg.max_results_per_query}) even in the "
            f"smallest range: read {cut['read']}" + (f" (and {more} more such ranges)"
                                                     if more else ""))
    if fetch.shortfall:
        short = fetch.shortfall[0]
        more = len(fetch.shortfall) - 1
        problems.append(
            f"the server announced {short['results']} results and sent {short['got']} "
            f"distinct ones, for updates from {short['from']} to {short['to'] or 'now'} "
            "(does it ignore `start`?)"
            + (f" (and {more} more such ranges)" if more else ""))
    return "; ".join(problems) or None


SOURCE = ArxivSource()
