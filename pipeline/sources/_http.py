"""What the HTTP sources share: spacing requests, reading Retry-After, reading a body
within a deadline."""

from __future__ import annotations

import datetime as dt
import email.utils
import time
from collections.abc import Iterable


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
