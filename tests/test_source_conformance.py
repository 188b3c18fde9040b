"""Every registered source (pipeline.sources.SOURCES) through the same hostile bodies, served
by a local HTTP server where the source reads its own body: not XML/JSON, cut off mid
document, an HTML error page served as 200, a record with control characters, a record
with an oversized field, a response past the size bound. Each run ends with the source
saying what went wrong (or setting aside only the bad record), never raising, never
storing garbage.

A source is covered by registering it: SERVED (tests/support/served.py) says, per source
name, where it reads, what a page of its records looks like and what the store must hold
first; a source missing there fails `test_every_registered_source_says_how_it_is_served`.
The transport-level cases (trickling, redirects, 429, deadlines) are
tests/test_transport_conformance.py's, which seeds the store the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipeline import ingest
from pipeline.config import Config
from pipeline.outbound import SOURCE_REPLY_BYTES
from pipeline.report import RunReport
from pipeline.sources import SOURCES
from pipeline.sources._untrusted import MAX_FIELD_CHARS
from pipeline.store import Store
from tests.support.replays import fast_arxiv, fast_hf
from tests.support.served import (
    BAD,
    GOOD,
    NOW,
    SERVED,
    Record,
    atom,
    oai,
)

# Raw and as character references (JSON: raw and escaped): XML 1.0 forbids both forms.
CONTROLS = "Form\x0cfeed&#12; &#x1b;title\x01"
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")



# -- the server and a run ----------------------------------------------------------------------

@dataclass
class Upstream:
    """What the local server answers: the source's route serves `body`; the export API
    answers any other source's look-up by id with good entries of those ids."""

    route: str
    body: Callable[[], Iterator[bytes]]
    length: int | None = None  # the Content-Length it declares (None: none, read to the end)
    sent: int = 0  # bytes of the source's own body handed to the socket

    def __call__(self, request: Request) -> Response:
        if request.path.startswith(self.route):
            headers = {} if self.length is None else {"Content-Length": str(self.length)}
            return Response(self._counted(), status=200, content_type="application/xml",
                            headers=headers)
        ids = [i.split("v")[0] for i in parse_qs(request.query_string.decode()).get(
            "id_list", [""])[0].split(",") if i]
        return Response(atom([(i, f"Paper {i}", "An abstract.") for i in ids]), status=200)

    def _counted(self) -> Iterator[bytes]:
        for chunk in self.body():
            self.sent += len(chunk)
            yield chunk


def _config(base_config: Config, server: HTTPServer) -> Config:
    cfg = fast_arxiv(base_config, server.url_for("/api/query"), categories=("cs.LG",),
                     max_retries=1, backfill_days=1)
    return fast_hf(cfg, server.url_for("/").rstrip("/"), max_retries=1, backfill_days=1)


def _run(base_config: Config, httpserver: HTTPServer, name: str,
         body: Callable[[], Iterator[bytes]], length: int | None = None
         ) -> tuple[RunReport, Store, Upstream]:
    upstream = Upstream(SERVED[name].route, body, length)
    httpserver.expect_request(re.compile(".*")).respond_with_handler(upstream)
    cfg = _config(base_config, httpserver)
    seed = SERVED[name].seed
    if seed is not None:
        seed(Store(cfg.store_path))
    report = ingest.ingest(cfg, Store(cfg.store_path), name, now=NOW)
    return report, Store(cfg.store_path), upstream


def _kept(store: Store, name: str) -> set[str]:
    return set(store.read(SERVED[name].kept_in)["arxiv_id"].to_pylist())


def _once(body: bytes) -> Callable[[], Iterator[bytes]]:
    return lambda: iter([body])


def _good() -> list[Record]:
    return [(i, f"Paper {i}", "An abstract.") for i in GOOD]


def test_every_registered_source_says_how_it_is_served() -> None:
    assert set(SERVED) == set(SOURCES), "declare in SERVED how each source is served a body"


# -- the whole body is bad: the source fails, says why, stores nothing ------------------------

def _truncated(name: str) -> bytes:
    body = SERVED[name].page(_good())
    return body[:len(body) // 2]


HTML = (b"<!DOCTYPE html>\n<html><head><title>Service Unavailable</title></head><body>"
        b"<p>Down for maintenance<br></body></html>")
WHOLE = {  # case: (the body for a source, what its error says: a regular expression)
    "malformed": (lambda name: b"Internal error: {'this is': neither XML nor JSON",
                  "malformed"),
    "truncated": (_truncated, "truncated or malformed"),
    "html-200": (lambda name: HTML, "an HTML page, not"),
    # well-formed, of another kind: never read as a page with nothing on it
    "another-document": (lambda name: b'{"error": "rate limited"}' if name == "hf" else
                         b'<?xml version="1.0"?><error>rate limited</error>',
                         r"not an?|expected a JSON list"),
}


@pytest.mark.parametrize("case", list(WHOLE))
@pytest.mark.parametrize("name", list(SOURCES))
def test_a_body_that_is_no_page_fails_the_source_and_stores_nothing(base_config, httpserver,
                                                                    name, case):
    make, said = WHOLE[case]
    report, store, _ = _run(base_config, httpserver, name, _once(make(name)))
    assert report.status == "failed" and re.search(said, report.error or "")
    assert not _kept(store, name) and not store.snapshots(name)
    assert store.watermark(name) is None
    if case == "html-200":  # no retry mends an error page: the title says what it was
        assert report.requests == 1 and "Service Unavailable" in (report.error or "")


@pytest.mark.parametrize(("declared", "said"), [
    (None, f"a response over {SOURCE_REPLY_BYTES:,} bytes (stopped reading)"),
    (2 * SOURCE_REPLY_BYTES, f"a response of {2 * SOURCE_REPLY_BYTES:,} bytes, over "
                             f"{SOURCE_REPLY_BYTES:,}"),
], ids=["streamed", "declared"])
def test_a_response_past_the_bound_is_read_no_further_and_not_asked_again(base_config,
                                                                          httpserver,
                                                                          declared, said):
    """Every source: a body twice the bound is cut at the bound (refused before it, when
    its length says so) and its request not retried."""
    chunk = b"<" * 2**20

    def endless() -> Iterator[bytes]:
        for _ in range(2 * SOURCE_REPLY_BYTES // len(chunk)):
            yield chunk

    for name in SOURCES:
        report, store, upstream = _run(base_config, httpserver, name, endless, declared)
        assert report.status == "failed", name
        assert said in (report.error or ""), name
        assert report.requests == 1 and report.retries == 0, name
        # read no further than the bound (and what the sockets' buffers hold besides)
        assert upstream.sent < SOURCE_REPLY_BYTES + 16 * len(chunk), name
        assert not _kept(store, name) and store.watermark(name) is None
        httpserver.clear()


# -- one record is bad: it alone is cleaned or set aside, the rest kept -----------------------

@pytest.mark.parametrize("name", list(SOURCES))
def test_control_characters_in_a_record_are_dropped_and_every_record_kept(base_config,
                                                                          httpserver, name):
    records = [*_good(), (BAD, CONTROLS, f"We study{CONTROLS}")]
    report, store, _ = _run(base_config, httpserver, name,
                            _once(SERVED[name].page(records)))
    assert report.status == "ok", report.error
    assert _kept(store, name) == {*GOOD, BAD}
    stored = store.read(SERVED[name].kept_in).to_pylist()
    assert not any(_C0.search(v) for row in stored for v in row.values() if isinstance(v, str))


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_record_with_an_oversized_field_is_set_aside_and_the_rest_kept(base_config,
                                                                         httpserver, name):
    records = [(BAD, "Huge", "x" * (MAX_FIELD_CHARS * 2)), *_good()]
    report, store, _ = _run(base_config, httpserver, name,
                            _once(SERVED[name].page(records)))
    assert report.status == "ok", report.error
    assert _kept(store, name) == set(GOOD)
    details = json.loads(store.runs(name).iloc[-1]["details"])
    rejected = details["rejected"]  # once per page read that lists it
    assert rejected and all(BAD in r["id"] and re.fullmatch(
        rf"\w+ of 200,\d{{3}} characters, over {MAX_FIELD_CHARS:,}", r["why"]) for r in rejected)
    assert store.watermark(name) is not None


def test_the_oversized_record_is_named_by_its_field(base_config, httpserver) -> None:
    records = [(BAD, "Huge", "x" * (MAX_FIELD_CHARS * 2)), *_good()]
    _, store, _ = _run(base_config, httpserver, "oai", _once(oai(records)))
    details = json.loads(store.runs("oai").iloc[-1]["details"])
    assert details["rejected"] == [{"id": repr(BAD), "why": "abstract of 200,000 characters, "
                                                            "over 100,000"}]

