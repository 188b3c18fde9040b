"""Hugging Face daily papers: the community's picks of each day, read day by day.

Through huggingface_hub's own HTTP session, headers and error types, but not
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
import json
import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pyarrow as pa
from huggingface_hub import __version__ as hub_version
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

from pipeline._ids import is_arxiv_id
from pipeline._schemas import HF_SNAPSHOT
from pipeline._untrusted import Findings, clean_text
from pipeline.config import HFConfig
from pipeline.sources._http import Pacer, TooSlow, read_within, retry_after
from pipeline.sources.arxiv import FetchStats, SourceError, split_id

log = logging.getLogger(__name__)

_RETRY_STATUS = {429, 500, 502, 503, 504}
_MAX_PAGES = 20  # a daily list has tens of picks; more pages means the server ignores `p`
_INT32 = 2**31 - 1


@dataclass
class HFFetch:
    """What one run read: picks (even when it stopped early) and how it ended."""

    rows: list[dict] = field(default_factory=list)
    stats: FetchStats = field(default_factory=FetchStats)
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
        self.deadline = deadline  # time.monotonic() by which the whole run ends
        self.url = cfg.endpoint.rstrip("/") + "/api/daily_papers"
        # token=False: public data, and a forker's local HF token must not leave the machine.
        self.headers = build_hf_headers(token=False, library_name="papertrail",
                                        library_version=hub_version)
        self.stats = FetchStats()
        self._pacer = Pacer(cfg.delay_seconds)

    def day(self, day: dt.date) -> list[Any]:
        """Every item of one day's list ([] when there is none)."""
        items: list[Any] = []
        seen: set[str] = set()
        for page in range(_MAX_PAGES):
            got = self._get({"date": day.isoformat(), "p": page, "limit": self.cfg.page_size})
            if got is None:
                return items
            fresh = [it for it in got if _item_id(it) not in seen]
            seen.update(_item_id(it) for it in fresh)
            items.extend(fresh)
            if len(got) < self.cfg.page_size or not fresh:
                return items
        return items

    def _get(self, params: dict[str, Any]) -> list[Any] | None:
        attempt = 0
        while True:
            problem, retry_after, result = self._try(params)
            if problem is None:
                return result
            if attempt >= self.cfg.max_retries:
                raise SourceError(f"{problem} (gave up after {attempt} retries): "
                                  f"{self.url}?date={params['date']}")
            wait = min(self.cfg.backoff_seconds * 2**attempt, self.cfg.max_backoff_seconds)
            if retry_after is not None:
                wait = max(wait, retry_after)
            if time.monotonic() + wait > self.deadline:
                raise SourceError(f"{problem}; retrying would exceed the run's time limit")
            log.info("hf: %s; retry %d in %.1f s", problem, attempt + 1, wait)
            time.sleep(wait)
            attempt += 1
            self.stats.retries += 1

    def _try(self, params: dict[str, Any]) -> tuple[str | None, float | None, list[Any] | None]:
        """One request: (problem to retry, Retry-After, items or None for 'no list')."""
        if time.monotonic() > self.deadline:
            raise SourceError("the run's time limit was reached")
        self._pacer.wait()
        self.stats.requests += 1
        # timeout_seconds bounds the whole request, body included; the run's end bounds both.
        deadline = min(time.monotonic() + self.cfg.timeout_seconds, self.deadline)
        try:
            resp = self._request(params, deadline)
        except TooSlow:
            if time.monotonic() > self.deadline:
                raise SourceError("the run's time limit was reached while reading "
                                  f"{params['date']}") from None
            return f"no complete response within {self.cfg.timeout_seconds:g} s", None, None
        except httpx2.TimeoutException:
            return f"no response within {self.cfg.timeout_seconds:g} s", None, None
        except OfflineModeIsEnabled:
            raise SourceError("HF_HUB_OFFLINE is set: huggingface_hub refuses to connect"
                              ) from None
        except (httpx2.TransportError, httpx2.DecodingError) as exc:
            return f"connection failed ({type(exc).__name__})", None, None
        finally:
            self._pacer.done()
        if resp.status_code in _RETRY_STATUS:
            return (f"HTTP {resp.status_code}", retry_after(resp.headers.get("Retry-After")),
                    None)
        if resp.status_code == 404:
            return None, None, None
        try:
            hf_raise_for_status(resp)
        except HfHubHTTPError as exc:
            first_line = next(iter(str(exc).strip().splitlines()), "")
            raise SourceError(f"HTTP {resp.status_code} {first_line}".strip()) from None
        try:
            items = json.loads(resp.content)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SourceError(f"malformed JSON for {params['date']} ({exc})") from None
        if not isinstance(items, list):
            raise SourceError(f"expected a JSON list for {params['date']}, got "
                              f"{type(items).__name__}")
        return None, None, items

    def _request(self, params: dict[str, Any], deadline: float) -> httpx2.Response:
        """GET with the body read in chunks as they arrive, checking the deadline.

        The chunks are raw (still compressed): the response rebuilt from them decodes them
        by its Content-Encoding, once."""
        with get_session().stream("GET", self.url, params=params, headers=self.headers,
                                  timeout=max(deadline - time.monotonic(), 0.01)) as resp:
            raw = read_within(resp.iter_raw(), deadline)
        return httpx2.Response(resp.status_code, headers=resp.headers, content=raw,
                               request=resp.request)


def _item_id(item: Any) -> str:
    paper = item.get("paper") if isinstance(item, dict) else None
    return str(paper.get("id")) if isinstance(paper, dict) else repr(item)[:100]


def _text(value: Any) -> str | None:
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
    text = _text(value)
    return text if text and re.match(r"^https?://", text) else None


def parse_item(item: Any, day: dt.date, fetched_at: dt.datetime, findings: Findings
               ) -> dict | None:
    """One daily item → an HF_SNAPSHOT row; None (recorded in `findings`) when it has no
    usable arXiv id, which names the paper's files and pages.

    Today's shape keeps the signals inside `paper`; the 2024 shape has some (numComments)
    only at the top level, so each field falls back to the top level.
    """
    if not isinstance(item, dict) or not isinstance(item.get("paper"), dict):
        findings.reject(item, "not an item with a paper object")
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
    keywords = ([k for k in (_text(x) for x in keywords) if k] if isinstance(keywords, list)
                else None)
    # The 2024 shape has no submittedOnDailyAt; its top-level publishedAt is that moment.
    submitted = _time(paper.get("submittedOnDailyAt")) or _time(item.get("publishedAt"))
    findings.check_date(arxiv_id, "submitted_on_daily_at", submitted, fetched_at)
    return {
        "arxiv_id": split_id(arxiv_id)[0], "hf_day": day, "upvotes": _count(get("upvotes")),
        "github_repo": _url(get("githubRepo")), "github_stars": _count(get("githubStars")),
        "project_page": _url(get("projectPage")), "ai_keywords": keywords,
        "ai_summary": _text(get("ai_summary")), "submitted_on_daily_at": submitted,
        "organization": _text(org), "num_comments": _count(get("numComments")),
        "title": _text(get("title")), "fetched_at": fetched_at,
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
        except SourceError as exc:
            fetch.error = f"{day}: {exc}"
            break
        rows = [parse_item(it, day, fetched_at, fetch.findings) for it in items]
        fetch.rows.extend(r for r in rows if r is not None)
        fetch.days[day.isoformat()] = sum(r is not None for r in rows)
        fetch.last_day = day
    return fetch
