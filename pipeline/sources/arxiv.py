"""arXiv export API source: catch up on every configured category since a watermark.

The `arxiv` package describes the query (`Search`, its sort orders) and an entry
(`Result`); the requests are ours, because its `Client` has no public seam for what an
unattended run needs: a timeout on every request (it sets none), backoff that honours
Retry-After, retries on empty pages and truncated XML (its parser recovers from broken
XML), and a bound on the whole run's time. Pages are asked for with the query string of
arXiv's API manual and parsed strictly by `_atom`.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import arxiv
import pyarrow as pa
import pyarrow.compute as pc
import requests
import urllib3

from pipeline._ids import is_arxiv_id
from pipeline._report import RunReport
from pipeline._schemas import ARXIV_SNAPSHOT
from pipeline._untrusted import Findings, clean_text, not_after
from pipeline.merge import merge_arxiv
from pipeline.sources._atom import Page, Unreadable, api_error, parse_page
from pipeline.sources._http import (
    FetchStats,
    Requests,
    SourceError,
    Transient,
    check_status,
    read_within,
)
from pipeline.sources._source import Catch, Library, Merged, Options, Progress

if TYPE_CHECKING:
    from pipeline.config import ArxivConfig, Config

_ID = re.compile(r"^(?P<id>.+?)(?:v(?P<version>\d+))?$")
_USER_AGENT = f"papertrail (+https://github.com/) arxiv.py/{arxiv.__version__}"
_CHUNK = 64 * 1024


class _PageLimit(Exception):
    pass


@dataclass
class Fetch:
    """What one catch-up got: entries (even when it stopped early) and how it ended."""

    rows: list[dict] = field(default_factory=list)
    stats: FetchStats = field(default_factory=FetchStats)
    error: str | None = None
    findings: Findings = field(default_factory=Findings)

    @property
    def complete(self) -> bool:
        return self.error is None

    def table(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows, schema=ARXIV_SNAPSHOT)


_Answer = tuple[int, Mapping[str, str], bytes]  # status, headers, body


class PoliteClient:
    """The results of an `arxiv.Search`, page by page as they are consumed (as the package's
    own client pages), each page fetched politely, within bounds and parsed strictly."""

    def __init__(self, cfg: ArxivConfig, *, deadline: float, max_pages: int | None = None,
                 expect_results: bool = False) -> None:
        self.cfg = cfg
        self.page_size = cfg.page_size
        self.max_pages = max_pages
        # A category catch-up always has results, so an empty first page is arXiv's quirk.
        self.expect_results = expect_results
        self._requests = Requests(cfg, deadline, name="arxiv",
                                  limit=f"max_run_seconds ({cfg.max_run_seconds:g} s)")
        self.stats = self._requests.stats
        self._session = requests.Session()

    def results(self, search: arxiv.Search) -> Iterator[arxiv.Result]:
        return itertools.islice(self._results(search), search.max_results)

    def _results(self, search: arxiv.Search) -> Iterator[arxiv.Result]:
        offset = 0
        page = self._page(search, offset, first=True)
        while page.results:
            yield from page.results
            offset += len(page.results)
            if offset >= page.total_results:
                return
            page = self._page(search, offset, first=False)

    def _page(self, search: arxiv.Search, start: int, *, first: bool) -> Page:
        if self.max_pages is not None and self.stats.pages >= self.max_pages:
            raise _PageLimit(f"stopped after {self.max_pages} pages (--max-pages)")
        # The query string of arXiv's API manual, from the Search's public fields.
        url = self.cfg.api_url + "?" + urlencode({
            "search_query": search.query, "id_list": ",".join(search.id_list),
            "sortBy": search.sort_by.value, "sortOrder": search.sort_order.value,
            "start": str(start), "max_results": str(self.page_size)})
        page = self._requests.call(lambda deadline: self._get(url, deadline),
                                   lambda answer: self._check(answer, url, first), url)
        self.stats.pages += 1
        return page

    def _get(self, url: str, deadline: float) -> _Answer:
        """GET with the body read in chunks as they arrive (read1), checking the deadline."""
        try:
            with self._session.get(url, headers={"user-agent": _USER_AGENT}, stream=True,
                                   timeout=max(deadline - time.monotonic(), 0.01)) as resp:
                chunks = iter(lambda: resp.raw.read1(_CHUNK, decode_content=True), b"")
                return resp.status_code, resp.headers, read_within(chunks, deadline)
        except (requests.Timeout, urllib3.exceptions.ReadTimeoutError):
            raise Transient(f"no response within {self.cfg.timeout_seconds:g} s") from None
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            raise Transient(f"connection failed ({type(exc).__name__})") from None

    def _check(self, answer: _Answer, url: str, first: bool) -> Page:
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
        if not page.results and (not first or self.expect_results or page.total_results > 0):
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


def to_row(result: arxiv.Result, fetched_at: dt.datetime) -> dict:
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
                  max_pages: int | None = None, progress: Progress | None = None) -> Fetch:
    """Every entry in the configured categories updated at or after `since`, newest first.

    Stops at the first entry older than `since` (results are sorted by last update), so a
    catch-up costs as many pages as there is news. Never raises for the source's faults.
    """
    client = PoliteClient(cfg, deadline=time.monotonic() + cfg.max_run_seconds,
                          max_pages=max_pages, expect_results=True)
    search = arxiv.Search(query=category_query(cfg.categories), max_results=None,
                          sort_by=arxiv.SortCriterion.LastUpdatedDate,
                          sort_order=arxiv.SortOrder.Descending)
    fetch = Fetch(stats=client.stats)
    fetch.error = _collect(client.results(search), fetch, since, fetched_at, progress)
    return fetch


def fetch_ids(cfg: ArxivConfig, ids: list[str], fetched_at: dt.datetime) -> Fetch:
    """Full records for specific papers (e.g. Hugging Face picks), in batches of id_list."""
    client = PoliteClient(cfg, deadline=time.monotonic() + cfg.max_run_seconds)
    fetch = Fetch(stats=client.stats)
    for start in range(0, len(ids), cfg.id_batch_size):
        batch = ids[start:start + cfg.id_batch_size]
        search = arxiv.Search(id_list=batch, max_results=len(batch))
        client.page_size = min(cfg.page_size, len(batch))  # ask for no more than we want
        fetch.error = _collect(client.results(search), fetch, None, fetched_at, None)
        if fetch.error:
            break
    return fetch


def _collect(results: Iterator[arxiv.Result], fetch: Fetch, since: dt.datetime | None,
             fetched_at: dt.datetime, progress: Progress | None) -> str | None:
    oldest = None
    try:
        for result in results:
            if since is not None and result.updated < since:
                return None
            oldest = result.updated
            row = _checked(result, fetched_at, fetch.findings)
            if row is not None:
                fetch.rows.append(row)
            if progress is not None:
                progress.advance(len(fetch.rows), oldest)
    except (SourceError, _PageLimit) as exc:
        return str(exc)
    return None


def _checked(result: arxiv.Result, fetched_at: dt.datetime, findings: Findings) -> dict | None:
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


# -- the source ------------------------------------------------------------------------------


def window_start(cfg: ArxivConfig, watermark: dt.datetime | None,
                 now: dt.datetime) -> dt.datetime:
    """Where a catch-up starts: the overlap before the watermark, or the backfill window."""
    if watermark is None:
        return now - dt.timedelta(days=cfg.backfill_days)
    return watermark - dt.timedelta(hours=cfg.overlap_hours)


class ArxivSource:
    """Every configured category, by last update, back to the watermark minus the overlap."""

    name = "arxiv"
    schema = ARXIV_SNAPSHOT

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
        merged = self.merge(cfg, library, batch)
        newest = pc.max(batch["updated"]).as_py() if batch.num_rows else None
        after = not_after(max(filter(None, [before, newest]), default=None), started)
        status = "ok" if fetch.complete else ("partial" if batch.num_rows else "failed")
        wanted = set(acfg.categories)
        per_category = Counter(c for row in fetch.rows for c in row["categories"]
                               if c in wanted)
        report = RunReport(self.name, status, merged.counts, fetch.stats.requests,
                           fetch.stats.retries, fetch.error, before,
                           after if fetch.complete else before)
        catch = Catch(report, since, {"per_category": dict(sorted(per_category.items())),
                                      **fetch.findings.details()})
        catch.add(self.name, merged)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        merged = merge_arxiv(library.papers, library.version_keys, batch,
                             cfg.sources.arxiv.categories)
        return Merged(merged.papers, merged.changed, merged.counts, merged.new_versions)


SOURCE = ArxivSource()
