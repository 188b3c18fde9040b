"""A local Hugging Face daily-papers API: answers /api/daily_papers?date=&p=&limit=.

Serves the bundled sample's days (or any JSON files named …YYYY-MM-DD….json)
with HF's paging; a day it does not have answers 404, as HF does. Faults can be
queued to test clients, one per request: the HTTP-level faults of
pipeline/replay/faults.py (404, 429 with Retry-After, 500, a reset, a stall, JSON cut in
half, a body trickled a byte at a time, an HTML page), errors as HF's JSON `{"error": …}`.
"""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

from pipeline.replay import sample
from pipeline.replay._server import LocalServer, ReplayHandler
from pipeline.replay.faults import TRANSPORT

_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")
_DEFAULT_LIMIT = 50  # HF's own default page size
_JSON = "application/json; charset=utf-8"


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

    models = TRANSPORT

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
        return type("Handler", (_Handler,), {"replay": self})


class _Handler(ReplayHandler):
    replay: ClassVar[HFReplay]

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path != "/api/daily_papers":
            self._send(404, b'{"error": "not found"}', _JSON)
            return
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        with self.replay._lock:
            self.replay.log.append(params)
        self.respond(self.replay.next_fault(),
                     lambda: (*self.replay.answer(params), _JSON, {}))

    def error_page(self, status: int, seconds: float) -> tuple[bytes, str]:
        message = super().error_page(status, seconds)[0].decode()
        return json.dumps({"error": message}).encode(), _JSON
