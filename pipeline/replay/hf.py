"""A local Hugging Face daily-papers API: answers /api/daily_papers?date=&p=&limit=.

Serves the bundled sample's days (or any JSON files named …YYYY-MM-DD….json)
with HF's paging; a day it does not have answers 404, as HF does. Faults can be
queued to test clients, one per request: 404, 429 with Retry-After, 500,
malformed JSON, a stall, a body trickled a byte at a time.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from pipeline.replay import sample
from pipeline.replay._server import LocalServer, ReplayHandler

_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")
_DEFAULT_LIMIT = 50  # HF's own default page size


@dataclass(frozen=True)
class Fault:
    """One misbehaviour for one request: kind is 404 | 429 | 500 | malformed | stall |
    trickle."""

    kind: str
    seconds: float = 0.0  # Retry-After for 429, the stall's length, trickle's pause per byte


def sample_days() -> dict[str, bytes]:
    return {day: body for day in sample.days() if (body := sample.hf_daily(day)) is not None}


def file_days(paths: list[Path]) -> dict[str, bytes]:
    """Fixture files by the date in their name."""
    out = {}
    for path in paths:
        m = _DAY.search(path.name)
        if m is None:
            raise ValueError(f"{path}: no YYYY-MM-DD in the file name")
        out[m.group(1)] = path.read_bytes()
    return out


class HFReplay(LocalServer):
    """A threaded HTTP server on 127.0.0.1 that plays HF's daily-papers API.

    >>> with HFReplay(sample_days()) as hf:  # doctest: +SKIP
    ...     hf.endpoint  # 'http://127.0.0.1:PORT'
    """

    fault_type = Fault

    def __init__(self, days: dict[str, bytes] | None = None, *, port: int = 0) -> None:
        self.days = sample_days() if days is None else dict(days)
        self.log: list[dict[str, str]] = []  # every request's query, in order
        super().__init__(port)

    @property
    def endpoint(self) -> str:
        return self.base

    def answer(self, params: dict[str, str]) -> tuple[int, bytes]:
        day = params.get("date", "")
        if day not in self.days:
            return 404, json.dumps({"error": f"no daily papers for {day!r}"}).encode()
        try:
            page = int(params.get("p", "0"))
            limit = int(params.get("limit", str(_DEFAULT_LIMIT)))
        except ValueError:
            return 400, b'{"error": "p and limit must be integers"}'
        items = json.loads(self.days[day])
        return 200, json.dumps(items[page * limit:(page + 1) * limit]).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(ReplayHandler):

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path != "/api/daily_papers":
                    self._json(404, b'{"error": "not found"}')
                    return
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                with replay._lock:
                    replay.log.append(params)
                fault = replay.next_fault()
                kind = fault.kind if fault else ""
                if kind in ("404", "500"):
                    self._json(int(kind), b'{"error": "injected fault"}')
                    return
                if kind == "429":
                    self._json(429, b'{"error": "Too Many Requests"}',
                               {"Retry-After": str(int(fault.seconds))})
                    return
                if kind == "stall":
                    time.sleep(fault.seconds)
                status, body = replay.answer(params)
                if kind == "malformed":
                    status, body = 200, body[: max(1, len(body) // 2)]
                if kind == "trickle":
                    self._trickle(status, body, "application/json; charset=utf-8",
                                  fault.seconds)
                    return
                self._json(status, body)

            def _json(self, status: int, body: bytes,
                      headers: dict[str, str] | None = None) -> None:
                self._send(status, body, "application/json; charset=utf-8", headers)


        return Handler
