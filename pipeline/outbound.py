"""Every request to another server goes through here: the sources' GETs, the model
clients' and the notify channels' POSTs. What each gets, whatever the server does:

- a deadline on the whole request: connecting, the status line and headers, and the whole
  body. Socket timeouts are per read: a server that trickles a byte now and then never
  trips one, and would hold the request, and the run, as long as it likes;
- a cap on the reply's size: past it the request fails at once (the same reply would come
  again), before the rest is read;
- a POST is never redirected: a 3xx is a failure, never success (a 302 would turn it into
  a GET that "succeeds" without delivering; a 307 would post the body to another host);
  a GET follows at most MAX_REDIRECTS, all within its deadline;
- with `Requests`, the one retry loop: 429 and 5xx retried with exponential backoff, or
  as long as Retry-After asks, as long as the run's bound allows; never past it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import email.utils
import functools
import logging
import os
import ssl
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

import httpx2

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# Worth another try: rate limited, or the server (or a proxy before it) failing for now.
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_REDIRECTS = 5  # of a GET; past them it is a loop
MB = 1 << 20
# The most a reply may hold, by who asks. A full page of arXiv's OAI-PMH (1,000 arXivRaw
# records) or of the export API (2,000 entries) is a few MB, past this it is no page of
# theirs; a model's answer is a few KB; a channel's a line.
SOURCE_REPLY_BYTES = 64 * MB
MODEL_REPLY_BYTES = 16 * MB
CHANNEL_REPLY_BYTES = 1 * MB


class Failed(Exception):
    """The request did not succeed (after retries, or at once); the caller records it
    and the run goes on. Each user raises its own kind (`Requests.error`)."""


class Transient(Exception):
    """One request failed in a way worth retrying."""

    def __init__(self, problem: str, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.retry_after = retry_after  # seconds the server asked us to wait, if it did


class Refused(Exception):
    """One request failed in a way another try would repeat: an oversized reply, a
    redirected POST, a redirect loop."""


class TooSlow(Exception):
    """The reply was still arriving when the deadline passed."""


class TooBig(httpx2.TransportError):
    """The reply passed its size cap (a transport error, as the model client reports one;
    to `get` and `post` it is Refused)."""


class Answer(NamedTuple):
    status: int
    headers: Mapping[str, str]  # case-insensitive (httpx2.Headers)
    body: bytes


@dataclass
class FetchStats:
    requests: int = 0
    retries: int = 0
    pages: int = 0


class Politeness(Protocol):
    """The request settings of whoever sends: every HTTP source's config ([sources.*] in
    papertrail.toml), or a channel's policy."""

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


# -- one request ----------------------------------------------------------------------------------


class Bounded(httpx2.AsyncBaseTransport):
    """Each request (each hop of a redirect, each of a client's retries) done within
    `seconds`, its reply read whole and at most `max_bytes`: a ReadTimeout and TooBig past
    them (which the model client retries and counts as a timeout, a connection error)."""

    def __init__(self, seconds: float, max_bytes: int) -> None:
        self.seconds, self.max_bytes = seconds, max_bytes
        self.inner = httpx2.AsyncHTTPTransport(
            verify=_tls(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")))

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            async with asyncio.timeout(self.seconds):
                response = await self.inner.handle_async_request(request)
                try:
                    body = await self._read(response)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise httpx2.ReadTimeout(f"no complete response within {self.seconds:g} s",
                                     request=request) from None
        return httpx2.Response(response.status_code, headers=response.headers, content=body,
                               extensions=response.extensions)

    async def _read(self, response: httpx2.Response) -> bytes:
        # Raw: the client decodes the body it is given (gzip) as it would this. A gzip
        # bomb is bounded too: httpx2 decodes what was read, no more than it was sent.
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise TooBig(f"a response of {int(declared):,} bytes, over {self.max_bytes:,}")
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > self.max_bytes:
                raise TooBig(f"a response over {self.max_bytes:,} bytes (stopped reading)")
        return bytes(body)

    async def aclose(self) -> None:
        await self.inner.aclose()


@functools.cache
def _tls(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    """httpx2's default context (the system's CAs, or SSL_CERT_FILE / SSL_CERT_DIR, which
    are the key), made once: loading the CAs costs ~75 ms of CPU, which each request paid."""
    return httpx2.create_ssl_context()


def get(url: str, headers: Mapping[str, str], deadline: float, *,
        max_bytes: int = SOURCE_REPLY_BYTES) -> Answer:
    """GET `url` by `deadline` (time.monotonic()), following at most MAX_REDIRECTS.
    TooSlow past the deadline, Refused for a loop or a reply over `max_bytes`,
    Transient when the connection fails."""
    return _run(_exchange("GET", url, headers, None, deadline, max_bytes))


def post(url: str, content: bytes, headers: Mapping[str, str], deadline: float, *,
         max_bytes: int = CHANNEL_REPLY_BYTES) -> Answer:
    """POST `content` to `url` by `deadline`, as `get`; a 3xx is Refused, never followed."""
    return _run(_exchange("POST", url, headers, content, deadline, max_bytes))


async def _exchange(method: str, url: str, headers: Mapping[str, str], content: bytes | None,
                    deadline: float, max_bytes: int) -> Answer:
    seconds = max(deadline - time.monotonic(), 0.01)
    try:
        async with (asyncio.timeout(seconds),  # all the hops of a redirect together
                    httpx2.AsyncClient(transport=Bounded(seconds, max_bytes), timeout=seconds,
                                       follow_redirects=method == "GET",
                                       max_redirects=MAX_REDIRECTS) as client):
            response = await client.request(method, url, headers=dict(headers),
                                            content=content)
    except (TimeoutError, httpx2.TimeoutException):
        raise TooSlow from None
    except TooBig as exc:
        raise Refused(str(exc)) from None
    except httpx2.TooManyRedirects:
        raise Refused(f"more than {MAX_REDIRECTS} redirects (a loop?)") from None
    except (httpx2.TransportError, httpx2.DecodingError) as exc:
        raise Transient(f"connection failed ({type(exc).__name__})") from None
    if response.is_redirect:
        where = httpx2.URL(response.headers.get("Location", "")).host or "the same host"
        raise Refused(f"HTTP {response.status_code} redirect to {where}, not followed "
                      f"(a {method} is never redirected)")
    headers = response.headers.copy()
    headers.pop("Content-Encoding", None)  # the body is decoded
    return Answer(response.status_code, headers, response.content)


def _run(work: Coroutine[Any, Any, T]) -> T:
    """Run `work` to its end from synchronous code, also when the caller's thread has an
    event loop running (Playwright's does, in the tests)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def model_client(seconds: float) -> httpx2.AsyncClient:
    """The openai package's own default client (its limits), each request through Bounded,
    never redirected: a 3xx comes back to the client as the error status it is."""
    import openai  # here: it takes ~0.4 s to import, which every other command would pay

    return openai.DefaultAsyncHttpxClient(transport=Bounded(seconds, MODEL_REPLY_BYTES),
                                          follow_redirects=False)


# -- the retry loop -------------------------------------------------------------------------------


# One pacer per service for the whole process: arXiv's terms count the export API and
# OAI-PMH together ("one request every 3 seconds"), whichever source makes the request.
_PACERS: dict[str, Pacer] = {}


class Requests:
    """One run's requests to one service: spaced by delay_seconds (from the service's last
    request, by anyone), each bounded as a whole by timeout_seconds, all of them by the
    run's `deadline` (time.monotonic()); a Transient failure is retried with exponential
    backoff, or as long as Retry-After asks; the end is `error` (a Failed), naming why."""

    def __init__(self, cfg: Politeness, deadline: float, *, name: str, limit: str,
                 error: type[Failed] = Failed) -> None:
        self.cfg = cfg
        self.deadline = deadline
        self.name = name  # for the log
        self.limit = limit  # what the deadline is, for messages: "max_run_seconds (1800 s)"
        self.error = error
        self.stats = FetchStats()
        self._pacer = _PACERS.setdefault(name, Pacer(cfg.delay_seconds))
        self._pacer.delay = cfg.delay_seconds

    def call(self, send: Callable[[float], R], check: Callable[[R], T], where: str) -> T:
        """`send(deadline)` makes one request that must end by `deadline`; `check` turns its
        answer into the result. Either raises Transient to have it retried, Refused or
        `error` to give up at once."""
        attempt = 0
        while True:
            try:
                return check(self._send(send, where))
            except Transient as exc:
                time.sleep(self._backoff(exc, attempt, where))
            except Refused as exc:
                raise self.error(_at(str(exc), where)) from None
            attempt += 1
            self.stats.retries += 1

    def _send(self, send: Callable[[float], R], where: str) -> R:
        if time.monotonic() > self.deadline:
            raise self.error(f"{self.limit} reached")
        self._pacer.wait()
        self.stats.requests += 1
        # timeout_seconds bounds the whole request, body included; the run's end bounds both.
        deadline = min(time.monotonic() + self.cfg.timeout_seconds, self.deadline)
        try:
            return send(deadline)
        except TooSlow:
            if time.monotonic() >= self.deadline:
                raise self.error(f"{self.limit} reached while reading {where}") from None
            raise Transient(f"no complete response within {self.cfg.timeout_seconds:g} s"
                            ) from None
        finally:
            self._pacer.done()

    def _backoff(self, exc: Transient, attempt: int, where: str) -> float:
        """How long to wait before the next try; `error` when there is none."""
        if attempt >= self.cfg.max_retries:
            raise self.error(_at(f"{exc.problem} (gave up after {attempt} retries)", where)
                             ) from None
        wait: float = min(self.cfg.backoff_seconds * 2**attempt, self.cfg.max_backoff_seconds)
        if exc.retry_after is not None:
            wait = max(wait, exc.retry_after)
        if time.monotonic() + wait > self.deadline:
            raise self.error(_at(f"{exc.problem}; retrying would exceed {self.limit}", where)
                             ) from None
        log.info("%s: %s; retry %d in %.1f s", self.name, exc.problem, attempt + 1, wait)
        return wait


def _at(problem: str, where: str) -> str:
    return f"{problem}: {where}" if where else problem
