"""arXiv export API source: catch up on every configured category since a watermark.

Built on the `arxiv` package (its Search, paging and Atom parser) with the
politeness it lacks: a timeout on every request (the package sets none),
backoff that honours Retry-After, retries on empty pages and truncated XML,
and a bound on the whole run's time.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import arxiv
import pyarrow as pa
import requests
from arxiv import _feed
from lxml import etree

from pipeline._schemas import ARXIV_SNAPSHOT
from pipeline.config import ArxivConfig
from pipeline.sources._http import Pacer, retry_after

log = logging.getLogger(__name__)

_RETRY_STATUS = {429, 500, 502, 503, 504}
_ID = re.compile(r"^(?P<id>.+?)(?:v(?P<version>\d+))?$")
_USER_AGENT = f"papertrail (+https://github.com/) arxiv.py/{arxiv.__version__}"


class SourceError(Exception):
    """The source could not deliver (after retries); the run records it and goes on."""


class _PageLimit(Exception):
    pass


@dataclass
class FetchStats:
    requests: int = 0
    retries: int = 0
    pages: int = 0


@dataclass
class Fetch:
    """What one catch-up got: entries (even when it stopped early) and how it ended."""

    rows: list[dict] = field(default_factory=list)
    stats: FetchStats = field(default_factory=FetchStats)
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.error is None

    def table(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows, schema=ARXIV_SNAPSHOT)


Progress = Callable[[int, dt.datetime | None], None]  # (entries so far, oldest `updated` seen)


class PoliteClient(arxiv.Client):
    """An arxiv.Client whose page fetch is polite, bounded and strict about what it accepts."""

    def __init__(self, cfg: ArxivConfig, *, deadline: float, max_pages: int | None = None,
                 expect_results: bool = False) -> None:
        super().__init__(page_size=cfg.page_size, delay_seconds=cfg.delay_seconds,
                         num_retries=cfg.max_retries)
        self.cfg = cfg
        self.query_url_format = cfg.api_url + "?{}"
        self.deadline = deadline
        self.max_pages = max_pages
        # A category catch-up always has results, so an empty first page is arXiv's quirk.
        self.expect_results = expect_results
        self.stats = FetchStats()
        self._pacer = Pacer(cfg.delay_seconds)

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0
                    ) -> _feed.ParsedFeed:
        if self.max_pages is not None and self.stats.pages >= self.max_pages:
            raise _PageLimit(f"stopped after {self.max_pages} pages (--max-pages)")
        attempt = 0
        while True:
            problem, retry_after = self._try_page(url, first_page)
            if isinstance(problem, _feed.ParsedFeed):
                self.stats.pages += 1
                return problem
            if attempt >= self.cfg.max_retries:
                raise SourceError(f"{problem} (gave up after {attempt} retries): {url}")
            wait = min(self.cfg.backoff_seconds * 2**attempt, self.cfg.max_backoff_seconds)
            if retry_after is not None:
                wait = max(wait, retry_after)
            if time.monotonic() + wait > self.deadline:
                raise SourceError(f"{problem}; retrying would exceed max_run_seconds "
                                  f"({self.cfg.max_run_seconds:g} s): {url}")
            log.info("arxiv: %s; retry %d in %.1f s", problem, attempt + 1, wait)
            time.sleep(wait)
            attempt += 1
            self.stats.retries += 1

    def _try_page(self, url: str, first_page: bool
                  ) -> tuple[_feed.ParsedFeed | str, float | None]:
        """One request: the parsed feed, or (what went wrong, Retry-After seconds)."""
        if time.monotonic() > self.deadline:
            raise SourceError(f"max_run_seconds ({self.cfg.max_run_seconds:g} s) reached")
        self._pacer.wait()
        self.stats.requests += 1
        try:
            resp = self._session.get(url, headers={"user-agent": _USER_AGENT},
                                     timeout=self.cfg.timeout_seconds)
        except requests.Timeout:
            return f"no response within {self.cfg.timeout_seconds:g} s", None
        except requests.RequestException as exc:
            return f"connection failed ({type(exc).__name__})", None
        finally:
            self._pacer.done()

        if resp.status_code in _RETRY_STATUS:
            return f"HTTP {resp.status_code}", retry_after(resp.headers.get("Retry-After"))
        api_error = _api_error(resp.content)
        if api_error:
            raise SourceError(f"arXiv API error (HTTP {resp.status_code}): {api_error}: {url}")
        if resp.status_code != 200:
            raise SourceError(f"HTTP {resp.status_code} from {url}")
        try:
            etree.fromstring(resp.content, etree.XMLParser(resolve_entities=False,
                                                           no_network=True))
        except etree.XMLSyntaxError as exc:
            return f"truncated or malformed XML ({exc.msg})", None
        feed = _feed.parse(resp.content)
        if not feed.results and (not first_page or self.expect_results
                                 or feed.header.total_results > 0):
            return "empty page", None
        return feed, None


def _api_error(content: bytes) -> str | None:
    """arXiv reports errors as an Atom entry titled Error whose id is under /api/errors."""
    if b"/api/errors" not in content:
        return None
    try:
        root = etree.fromstring(content, etree.XMLParser(recover=True, no_network=True))
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    ns = {"a": "http://www.w3.org/2005/Atom"}
    for entry in root.iterfind("a:entry", ns):
        if "/api/errors" in (entry.findtext("a:id", "", ns) or ""):
            return (entry.findtext("a:summary", "", ns) or "error").strip()
    return None


def split_id(short_id: str) -> tuple[str, int]:
    """'2202.12139v3' → ('2202.12139', 3); an id without a version counts as v1."""
    m = _ID.match(short_id)
    if m is None:
        raise ValueError(f"not an arXiv id: {short_id!r}")
    return m["id"], int(m["version"] or 1)


def _clean(text: str | None) -> str | None:
    return None if text is None else (" ".join(text.split()) or None)


def normalise(result: arxiv.Result, fetched_at: dt.datetime) -> dict:
    arxiv_id, version = split_id(result.get_short_id())
    return {
        "arxiv_id": arxiv_id, "version": version,
        "title": _clean(result.title) or "", "abstract": _clean(result.summary) or "",
        "authors": [a.name for a in result.authors],
        "categories": list(result.categories), "primary_category": result.primary_category,
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
            fetch.rows.append(normalise(result, fetched_at))
            oldest = result.updated
            if progress is not None:
                progress(len(fetch.rows), oldest)
    except (SourceError, _PageLimit) as exc:
        return str(exc)
    return None
