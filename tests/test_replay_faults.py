"""Every replay's faults: one list (pipeline/replay/faults.py), one implementation of each
HTTP-level fault, and a misspelled or unmodelled fault an error, never a silent no-op.
Walks every LocalServer subclass in pipeline/replay/, so a new replay is checked too."""

from __future__ import annotations

import http.client
import importlib
import json
import pkgutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import pipeline.replay
from pipeline.replay import sample
from pipeline.replay._server import LocalServer
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import REFUSALS, TRANSPORT, Fault, FaultKind
from pipeline.replay.hf import HFReplay
from pipeline.replay.notify import NotifyReplay
from pipeline.replay.openai import OpenAIReplay

for _module in pkgutil.iter_modules(pipeline.replay.__path__):
    importlib.import_module(f"pipeline.replay.{_module.name}")
REPLAYS = sorted(LocalServer.__subclasses__(), key=lambda c: c.__name__)


@dataclass(frozen=True)
class Probe:
    """How to make the replay, a request it answers with 200, and how to queue a fault."""

    make: Callable[[], LocalServer]
    method: str
    path: str
    body: Any = None
    queue: Callable[[Any, Fault], None] = lambda replay, fault: replay.inject(fault)


# Small answers: a trickle sends each byte on its own.
PROBES = {
    ArxivReplay: Probe(lambda: ArxivReplay(sample.entries()), "GET",
                       "/api/query?search_query=cat:cs.CL&max_results=1"),
    HFReplay: Probe(HFReplay, "GET", f"/api/daily_papers?date={sample.days()[0]}&limit=1"),
    OpenAIReplay: Probe(OpenAIReplay, "POST", "/v1/embeddings", {"input": ["graph"],
                                                                  "dimensions": 2}),
    NotifyReplay: Probe(NotifyReplay, "POST", "/hook/papers", {"text": "hi"},
                        lambda replay, fault: replay.fail("hook", fault)),
}


def _request(replay: LocalServer, probe: Probe) -> tuple[int, dict[str, str], bytes]:
    port = int(replay.base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        body = json.dumps(probe.body).encode() if probe.body is not None else None
        conn.request(probe.method, probe.path, body=body,
                     headers={"Content-Type": "application/json"} if body else {})
        answer = conn.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        conn.close()


def test_every_replay_has_a_probe() -> None:
    assert set(REPLAYS) == set(PROBES)


@pytest.mark.parametrize("replay_type", REPLAYS, ids=lambda c: c.__name__)
def test_a_misspelled_or_unmodelled_fault_is_an_error(replay_type: type[LocalServer]) -> None:
    assert replay_type.models >= TRANSPORT  # the shared ones come to every replay
    with PROBES[replay_type].make() as replay:
        with pytest.raises(ValueError, match="unknown fault 'stal'; one of 404, 429"):
            PROBES[replay_type].queue(replay, "stal")
        for kind in set(FaultKind) - replay_type.models:
            with pytest.raises(ValueError, match=f"does not model fault '{kind.value}'"):
                PROBES[replay_type].queue(replay, Fault(kind))


@pytest.mark.parametrize("kind", sorted(TRANSPORT))
@pytest.mark.parametrize("replay_type", REPLAYS, ids=lambda c: c.__name__)
def test_each_http_fault_behaves_alike_in_every_replay(replay_type: type[LocalServer],
                                                        kind: FaultKind) -> None:
    probe = PROBES[replay_type]
    with probe.make() as replay:
        status, _, clean = _request(replay, probe)
        assert status in (200, 204)
        seconds = 0.0001 if kind is FaultKind.TRICKLE else 0.3
        probe.queue(replay, Fault(kind, seconds))
        if kind is FaultKind.RESET:
            with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
                _request(replay, probe)
            return
        start = time.monotonic()
        status, headers, body = _request(replay, probe)
        took = time.monotonic() - start
        if kind in REFUSALS:
            assert status == REFUSALS[kind]
            assert headers.get("Retry-After") == ("0.3" if status in (429, 503) else None)
        elif kind is FaultKind.PAGE:
            assert (status, headers["Content-Type"]) == (200, "text/html")
            assert body.startswith(b"<!DOCTYPE html>")
        elif kind is FaultKind.STALL:
            assert took >= 0.3 and len(body) == len(clean)
        elif kind is FaultKind.TRICKLE:
            assert took >= 0.0001 * (len(clean) - 1) and len(body) == len(clean)
        else:  # truncate: a 200 with the first half of the body
            assert (status, len(body)) == (200, max(1, len(clean) // 2))
        status, _, _ = _request(replay, probe)  # one fault, one request: then it behaves
        assert status in (200, 204)


def test_a_none_in_the_queue_is_a_request_that_behaves() -> None:
    probe = PROBES[HFReplay]
    with probe.make() as replay:
        replay.inject(None, "500")
        assert [_request(replay, probe)[0] for _ in range(3)] == [200, 500, 200]


def test_notify_faults_are_per_service() -> None:
    with NotifyReplay() as replay, pytest.raises(TypeError, match="fail"):
        replay.inject("500")
