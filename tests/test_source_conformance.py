"""Every registered source (pipeline.sources.SOURCES) through the same hostile bodies, served
by a local HTTP server where the source reads its own body: not XML/JSON, cut off mid
document, an HTML error page served as 200, a record with control characters, a record
with an oversized field, a response past the size bound. Each run ends with the source
saying what went wrong (or setting aside only the bad record), never raising, never
storing garbage.

A source is covered by registering it: SERVED says, per source name, where it reads and
what a page of its records looks like; a source missing there fails
`test_every_registered_source_says_how_it_is_served`. The transport-level cases
(trickling, redirects, 429, deadlines) are another file's.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs

import pyarrow as pa
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipeline import ingest
from pipeline.config import Config
from pipeline.merge import merge_arxiv
from pipeline.outbound import SOURCE_REPLY_BYTES
from pipeline.report import RunReport
from pipeline.sources import SOURCES
from pipeline.sources._untrusted import MAX_FIELD_CHARS
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, PAPERS, VERSIONS, empty
from tests.support.replays import fast_arxiv, fast_hf

NOW = dt.datetime(2026, 6, 23, 15, tzinfo=dt.UTC)
DATED = NOW - dt.timedelta(hours=2)
GOOD = ("2606.00001", "2606.00002")
BAD = "2606.00003"
# Raw and as character references (JSON: raw and escaped): XML 1.0 forbids both forms.
CONTROLS = "Form\x0cfeed&#12; &#x1b;title\x01"
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

Record = tuple[str, str, str]  # arXiv id, title, abstract (as put in the body, unescaped)


# -- what each format's page looks like ------------------------------------------------------

def atom(records: list[Record]) -> bytes:
    """An export API page (arXiv's user manual, "Details of Atom Results Returned")."""
    stamp = DATED.strftime("%Y-%m-%dT%H:%M:%SZ")
    entries = "".join(
        f"<entry><id>http://arxiv.org/abs/{i}v1</id><updated>{stamp}</updated>"
        f"<published>{stamp}</published><title>{title}</title><summary>{abstract}</summary>"
        f"<author><name>Ann Lee</name></author><arxiv:primary_category term=\"cs.LG\"/>"
        f"<category term=\"cs.LG\"/></entry>" for i, title, abstract in records)
    return (f'<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
            f'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
            f'xmlns:arxiv="http://arxiv.org/schemas/atom"><title>query</title>'
            f"<opensearch:totalResults>{len(records)}</opensearch:totalResults>"
            f"<opensearch:startIndex>0</opensearch:startIndex>{entries}</feed>").encode()


def oai(records: list[Record]) -> bytes:
    """A complete ListRecords answer in arXivRaw (no resumption token)."""
    when = email.utils.format_datetime(DATED)
    body = "".join(
        f"<record><header><identifier>oai:arXiv.org:{i}</identifier>"
        f"<datestamp>{DATED.date()}</datestamp><setSpec>cs</setSpec></header><metadata>"
        f'<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>{i}</id>'
        f'<version version="v1"><date>{when}</date><size>12kb</size></version>'
        f"<title>{title}</title><authors>Ann Lee</authors><categories>cs.LG</categories>"
        f"<abstract>{abstract}</abstract></arXivRaw></metadata></record>"
        for i, title, abstract in records)
    return (f'<?xml version="1.0" encoding="UTF-8"?>'
            f'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
            f"<responseDate>{NOW.strftime('%Y-%m-%dT%H:%M:%SZ')}</responseDate>"
            f'<request verb="ListRecords">http://localhost/oai</request>'
            f"<ListRecords>{body}</ListRecords></OAI-PMH>").encode()


def rss(records: list[Record]) -> bytes:
    """arxiv-feed's RSS 2.0 for the day being announced."""
    day = email.utils.format_datetime(NOW)
    items = "".join(
        f"<item><title>{title}</title><link>https://arxiv.org/abs/{i}</link>"
        f"<description>arXiv:{i}v1 Announce Type: new Abstract: {abstract}</description>"
        f'<guid isPermaLink="false">oai:arXiv.org:{i}v1</guid><category>cs.LG</category>'
        f"<pubDate>{day}</pubDate><arxiv:announce_type>new</arxiv:announce_type></item>"
        for i, title, abstract in records)
    return (f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" '
            f'xmlns:arxiv="http://arxiv.org/schemas/atom"><channel><title>cs.LG updates</title>'
            f"<pubDate>{day}</pubDate>{items}</channel></rss>").encode()


def daily_papers(records: list[Record]) -> bytes:
    """Hugging Face's daily list (today's shape: the signals inside `paper`); a control
    character goes both escaped (json.dumps does that) and raw."""
    items = [{"paper": {"id": i, "title": title, "ai_summary": abstract, "upvotes": 3},
              "publishedAt": DATED.isoformat()} for i, title, abstract in records]
    return json.dumps(items).replace("&#12;", "\x0c").encode()


@dataclass(frozen=True)
class Served:
    """How a source is reached and what it reads: the route of its own body, the format of
    a page there, and the table that holds what it keeps."""

    route: str  # a path prefix on the local server
    page: Callable[[list[Record]], bytes]
    kept_in: str  # the store table whose arxiv_id column lists what it kept
    # What the store holds before the run, for a source whose work the store names
    seed: Callable[[Store], None] | None = None


def known_at_v2(store: Store) -> None:
    """Papers stored at v2 whose earlier texts the store lacks (as after an outage), so the
    `versions` source asks for them by versioned id."""
    rows = [{"arxiv_id": i, "version": 2, "title": f"Paper {i}", "abstract": "An abstract.",
             "authors": ["Ann Lee"], "categories": ["cs.LG"], "primary_category": "cs.LG",
             "published": DATED, "updated": DATED, "fetched_at": DATED} for i in (*GOOD, BAD)]
    merged = merge_arxiv(empty(PAPERS), empty(VERSIONS).select(["arxiv_id", "version"]),
                         pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT), ("cs.LG",))
    with store.lock():
        store.write("papers", merged.papers)


SERVED: dict[str, Served] = {
    "arxiv": Served("/api/query", atom, "papers"),
    "oai": Served("/oai", oai, "papers"),
    "announce": Served("/rss/", rss, "papers"),
    "versions": Served("/api/query", atom, "versions", known_at_v2),
    "hf": Served("/api/daily_papers", daily_papers, "hf"),
}


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

