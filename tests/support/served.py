"""How each registered source (pipeline.sources.SOURCES) is served a body on a local server,
what a page of its records looks like, and what the store must hold before a run asks
anything: the conformance suites (tests/test_source_conformance.py, content;
tests/test_transport_conformance.py, transport) read SERVED, so a source is covered by
declaring it here."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from pipeline.merge import merge_arxiv
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, PAPERS, VERSIONS, empty

NOW = dt.datetime(2026, 6, 23, 15, tzinfo=dt.UTC)
DATED = NOW - dt.timedelta(hours=2)
GOOD = ("2606.00001", "2606.00002")
BAD = "2606.00003"

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
