"""What the HTTP sources share: spacing requests, reading Retry-After, reading a body
within a deadline, and the one retry loop (status sets, backoff, the run's deadline)."""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

import requests
import urllib3

from pipeline.sources._untrusted import TooLarge, capped

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# Worth another try: rate limited, or the server (or a proxy before it) failing for now.
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class SourceError(Exception):
    """The source could not deliver (after retries); the run records it and goes on."""


class Transient(Exception):
    """One request failed in a way worth retrying."""

    def __init__(self, problem: str, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.retry_after = retry_after  # seconds the server asked us to wait, if it did


@dataclass
class FetchStats:
    requests: int = 0
    retries: int = 0
    pages: int = 0


class Politeness(Protocol):
    """The request settings every HTTP source's config has ([sources.*] in papertrail.toml)."""

    # Read-only, as the frozen config's fields are.
    @property
    def delay_seconds(self) -> float: ...
    @property
    def timeout_seconds(self) -> float: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def backoff_seconds(self) -> float: ...
    @property
    def max_backoff_seconds(self) -> float: ...


class Pacer:
    """At least `delay` seconds between the end of one request and the start of the next."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._last: float | None = None

    def wait(self) -> None:
        if self._last is not None:
            pause = self._last + self.delay - time.monotonic()
            if pause > 0:
                time.sleep(pause)

    def done(self) -> None:
        self._last = time.monotonic()


def retry_after(value: str | None) -> float | None:
    """Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def check_status(status: int, headers: Mapping[str, str]) -> None:
    """Raise Transient for a status worth retrying (honouring its Retry-After)."""
    if status in RETRY_STATUS:
        raise Transient(f"HTTP {status}", retry_after(headers.get("Retry-After")))


class TooSlow(Exception):
    """The body was still arriving when the deadline passed."""


def read_within(chunks: Iterable[bytes], deadline: float) -> bytes:
    """A response body, read chunk by chunk until `deadline` (time.monotonic()).

    Timeouts are per read: a server that trickles a byte at a time never trips one, and
    would hold the request, and the run, as long as it likes.
    """
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if time.monotonic() > deadline:
            raise TooSlow
    return bytes(body)


# One pacer per service for the whole process: arXiv's terms count the export API and
# OAI-PMH together ("one request every 3 seconds"), whichever source makes the request.
_PACERS: dict[str, Pacer] = {}


Answer = tuple[int, Mapping[str, str], bytes]  # status, headers, body
_CHUNK = 64 * 1024


def get_within(session: requests.Session, url: str, headers: Mapping[str, str],
               deadline: float, timeout: float) -> Answer:
    """GET with the body read in chunks as they arrive (read1, decoded: the bound is on what
    is parsed) until `deadline` and at most MAX_RESPONSE_BYTES; a timeout or a failed
    connection is Transient."""
    try:
        with session.get(url, headers=headers, stream=True,
                         timeout=max(deadline - time.monotonic(), 0.01)) as resp:
            chunks = iter(lambda: resp.raw.read1(_CHUNK, decode_content=True), b"")
            return (resp.status_code, resp.headers,
                    read_within(capped(chunks, resp.headers), deadline))
    except (requests.Timeout, urllib3.exceptions.ReadTimeoutError):
        raise Transient(f"no response within {timeout:g} s") from None
    except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
        raise Transient(f"connection failed ({type(exc).__name__})") from None


class Requests:
    """One run's requests to one service: spaced by delay_seconds (from the service's last
    request, by any source), each bounded as a whole by timeout_seconds, all of them by the
    run's `deadline` (time.monotonic()); a Transient failure is retried with exponential
    backoff, or as long as Retry-After asks."""

    def __init__(self, cfg: Politeness, deadline: float, *, name: str, limit: str) -> None:
        self.cfg = cfg
        self.deadline = deadline
        self.name = name  # for the log
        self.limit = limit  # what the deadline is, for messages: "max_run_seconds (1800 s)"
        self.stats = FetchStats()
        self._pacer = _PACERS.setdefault(name, Pacer(cfg.delay_seconds))
        self._pacer.delay = cfg.delay_seconds

    def call(self, send: Callable[[float], R], check: Callable[[R], T], where: str) -> T:
        """`send(deadline)` makes one request that must end by `deadline`; `check` turns its
        answer into the result. Either raises Transient to have it retried, SourceError to
        give up at once."""
        attempt = 0
        while True:
            try:
                return check(self._send(send, where))
            except Transient as exc:
                time.sleep(self._backoff(exc, attempt, where))
            attempt += 1
            self.stats.retries += 1

    def _send(self, send: Callable[[float], R], where: str) -> R:
        if time.monotonic() > self.deadline:
            raise SourceError(f"{self.limit} reached")
        self._pacer.wait()
        self.stats.requests += 1
        # timeout_seconds bounds the whole request, body included; the run's end bounds both.
        deadline = min(time.monotonic() + self.cfg.timeout_seconds, self.deadline)
        try:
            return send(deadline)
        except TooSlow:
            if time.monotonic() > self.deadline:
                raise SourceError(f"{self.limit} reached while reading {where}") from None
            raise Transient(f"no complete response within {self.cfg.timeout_seconds:g} s"
                            ) from None
        except TooLarge as exc:
            raise SourceError(f"{exc}: {where}") from None
        finally:
            self._pacer.done()

    def _backoff(self, exc: Transient, attempt: int, where: str) -> float:
        """How long to wait before the next try; SourceError when there is none."""
        if attempt >= self.cfg.max_retries:
            raise SourceError(f"{exc.problem} (gave up after {attempt} retries): {where}"
                              ) from None
        wait: float = min(self.cfg.backoff_seconds * 2**attempt, self.cfg.max_backoff_seconds)
        if exc.retry_after is not None:
            wait = max(wait, exc.retry_after)
        if time.monotonic() + wait > self.deadline:
            raise SourceError(f"{exc.problem}; retrying would exceed {self.limit}: {where}"
                              ) from None
        log.info("%s: %s; retry %d in %.1f s", self.name, exc.problem, attempt + 1, wait)
        return wait
