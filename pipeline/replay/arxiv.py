"""A local arXiv export API: answers /api/query with Atom in arXiv's own format, as
arXiv answers it since November 2025.

Serves the bundled sample (or any entries given), as arXiv would have shown them
at `as_of`: only versions announced by then, only each paper's newest version.
Understands search_query (cat:, id:, ti:, abs:, au:, all:, submittedDate: ranges,
AND / OR / ANDNOT, parentheses), id_list, start, max_results, sortBy, sortOrder.

Where each behaviour comes from (arXiv/arxiv-search, HEAD of 2026-07-01, the code that
serves the export API):
- `search/domain/classic_api/classic_search_query.py`, `fix_aliases`: `lastUpdatedDate:`
  in a query is rewritten to `submittedDate:` (commit c0bfa53, 2025-11-05);
- `search/services/index/prepare.py`, `_query_submittedDate`: a date range filters on
  `submitted_date_first`, the first version's date (`Entry.published`), so a v2 of an
  older paper is in no window;
- `search/domain/base.py`, `SortBy.to_es`: `lastUpdatedDate` sorts on the current
  version's date (`Entry.updated`), `submittedDate` on the first version's;
- `search/services/index/__init__.py` with `util.MAX_RESULTS = 10_000`: a page past
  10,000 / max_results raises `OutsideAllowedRange`, which the classic API answers with
  HTTP 500 (modelled: the body is a plain error, not recorded);
- `search/domain/base.py`, `Query.MAXIMUM_size = 2000`, and arXiv/arxiv-docs
  `user-manual.md`: more than 2,000 results a call is refused (HTTP 400, as the
  controller's other argument errors);
- `<updated>` is the current version's date, and a journal-ref or DOI added without a
  new version changes no date the API filters or sorts on.
- `search/services/index/classic_api/classic_search.py`, `classic_search`: an `id_list` id
  ending in `v<n>` is matched on `paper_id_v` (the index holds a document per version),
  one without a version on `paper_id` and `is_current`; so `2604.01234v1` is answered
  with v1's entry (its title, abstract and date; `search/serialize/atom.py` names the
  entry `…/abs/2604.01234v1`), and a version arXiv does not have with no entry at all.
Faults can be queued to test clients (`inject`): every HTTP-level fault of
pipeline/replay/_server.py (429 with Retry-After, 500, 503, a reset, a stall, truncated XML,
a body trickled a byte at a time, an HTML page with HTTP 200), and "empty": an answer with
no entries.
The same server answers arXiv's OAI-PMH at /oai (GET or POST form), from the same entries:
see pipeline/replay/oai.py for what it follows (arXiv/oaipmh's code) and what it models.
Each version shows there `oai.OAI_LAG` after its announcement; `amend` and `delete` add
the changes the export API does not carry (metadata edited in place, a deleted record).
The export API here keeps the entries as given: an amendment does not reach /api/query
(arXiv's search index is refreshed from the same metadata on its own schedule, which the
replay does not model). Faults apply to /oai as to /api/query; a 503 there carries
arXiv's "Retry after N seconds" page and, when the fault has seconds, a Retry-After
header. /oai requests are logged in `oai_log`, not `log`. `oai_lag` (default
`oai.OAI_LAG`) is how long after its announcement a version shows there: longer, a test
plays an OAI-PMH day that is late.
The announcement feed, rss.arxiv.org's `/rss/<archives and categories>`, is served at
/rss/ from the same entries: see pipeline/replay/rss.py for what it follows (arXiv's
arxiv-feed code and its RSS spec) and what it models; `stale` names the categories
whose feeds serve the previous day. /rss/ requests are logged in `rss_log` (the path's
query part), and take the same faults; the HTML page is a maintenance page (modelled).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import ClassVar
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape, quoteattr

from pipeline.replay import oai, rss
from pipeline.replay._server import Answer, LocalServer, ReplayHandler
from pipeline.replay.faults import TRANSPORT, FaultKind
from pipeline.replay.sample import Entry

_MAX_PER_CALL = 2000
MAX_OFFSET = 10_000  # arxiv-search's MAX_RESULTS
_NEW_ID = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_OLD_ID = re.compile(r"^[a-z-]+(\.[A-Z]{2})?/\d{7}(v\d+)?$")


class QueryError(ValueError):
    pass


# -- search_query: a tiny recursive-descent parser ------------------------------------------------

_TOKEN = re.compile(r"\s*(\(|\)|ANDNOT\b|AND\b|OR\b|\w+:\[[^\]]*\]|\w+:\"[^\"]*\"|\w+:[^\s()]+)")
Predicate = Callable[[Entry], bool]


def _tokens(query: str) -> list[str]:
    pos, out = 0, []
    query = query.strip()
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if not m:
            raise QueryError(f"cannot parse search_query near {query[pos:pos + 20]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def parse_query(query: str) -> Predicate:
    tokens = deque(_tokens(query.replace("lastUpdatedDate:", "submittedDate:")))
    if not tokens:
        return lambda e: True
    pred = _expr(tokens)
    if tokens:
        raise QueryError(f"unexpected {tokens[0]!r} in search_query")
    return pred


def _expr(tokens: deque[str]) -> Predicate:
    left = _atom(tokens)
    while tokens and tokens[0] in ("AND", "OR", "ANDNOT"):
        op = tokens.popleft()
        right = _atom(tokens)
        if op == "AND":
            left = (lambda a, b: lambda e: a(e) and b(e))(left, right)
        elif op == "OR":
            left = (lambda a, b: lambda e: a(e) or b(e))(left, right)
        else:
            left = (lambda a, b: lambda e: a(e) and not b(e))(left, right)
    return left


def _atom(tokens: deque[str]) -> Predicate:
    if not tokens:
        raise QueryError("search_query ends too early")
    tok = tokens.popleft()
    if tok == "(":
        inner = _expr(tokens)
        if not tokens or tokens.popleft() != ")":
            raise QueryError("unbalanced parentheses in search_query")
        return inner
    field, _, value = tok.partition(":")
    value = value.strip('"')
    if field == "submittedDate":  # lastUpdatedDate: was rewritten to it (`parse_query`)
        m = re.fullmatch(r"\[(\d{8,14}) TO (\d{8,14})\]", value)
        if not m:
            raise QueryError(f"bad date range {value!r} (want [YYYYMMDDHHMM TO YYYYMMDDHHMM])")
        low, high = (_stamp(s) for s in m.groups())
        return lambda e: low <= e.published <= high
    needle = value.lower()
    texts: dict[str, Callable[[Entry], Iterable[str]]] = {
        "cat": lambda e: e.categories,
        "id": lambda e: (e.arxiv_id,),
        "ti": lambda e: (e.title.lower(),),
        "abs": lambda e: (e.abstract.lower(),),
        "au": lambda e: tuple(a.lower() for a in e.authors),
        "all": lambda e: (e.title.lower(), e.abstract.lower(),
                          *(a.lower() for a in e.authors)),
    }
    if field not in texts:
        raise QueryError(f"unknown field {field!r} in search_query")
    get = texts[field]
    if field in ("cat", "id"):
        return lambda e: value in get(e)
    return lambda e: any(needle in t for t in get(e))


def _stamp(s: str) -> dt.datetime:
    s = s.ljust(14, "0")
    return dt.datetime.strptime(s, "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)


# -- Atom in arXiv's format -----------------------------------------------------------------------


def _iso(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def entry_xml(e: Entry) -> str:
    vid = escape(f"{e.arxiv_id}v{e.version}", {'"': "&quot;"})  # ids are data, as upstream's
    parts = [
        "  <entry>",
        f"    <id>http://arxiv.org/abs/{vid}</id>",
        f"    <title>{escape(e.title)}</title>",
        f"    <updated>{_iso(e.updated)}</updated>",
        f'    <link href="https://arxiv.org/abs/{vid}" rel="alternate" type="text/html"/>',
        f'    <link href="https://arxiv.org/pdf/{vid}" rel="related" type="application/pdf"'
        ' title="pdf"/>',
        f"    <summary>{escape(e.abstract)}</summary>",
        *(f'    <category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>'
          for c in e.categories),
        f"    <published>{_iso(e.published)}</published>",
    ]
    if e.comment:
        parts.append(f"    <arxiv:comment>{escape(e.comment)}</arxiv:comment>")
    parts.append(f"    <arxiv:primary_category term={quoteattr(e.primary_category)}/>")
    if e.journal_ref:
        parts.append(f"    <arxiv:journal_ref>{escape(e.journal_ref)}</arxiv:journal_ref>")
    parts += [f"    <author>\n      <name>{escape(a)}</name>\n    </author>" for a in e.authors]
    if e.doi:
        parts.append(f"    <arxiv:doi>{escape(e.doi)}</arxiv:doi>")
        parts.append(f'    <link rel="related" href="https://doi.org/{escape(e.doi)}"'
                     ' title="doi"/>')
    parts.append("  </entry>")
    return "\n".join(parts)


def feed_xml(title: str, entries: list[Entry], total: int, start: int, per_page: int,
             now: dt.datetime) -> bytes:
    digest = hashlib.sha1(title.encode()).hexdigest()[:27]
    head = (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        f"  <id>https://arxiv.org/api/{digest}</id>\n"
        f"  <title>{escape(title)}</title>\n"
        f"  <updated>{_iso(now)}</updated>\n"
        f"  <opensearch:itemsPerPage>{per_page}</opensearch:itemsPerPage>\n"
        f"  <opensearch:totalResults>{total}</opensearch:totalResults>\n"
        f"  <opensearch:startIndex>{start}</opensearch:startIndex>\n"
    )
    body = "".join(entry_xml(e) + "\n" for e in entries)
    return (head + body + "</feed>\n").encode()


def error_xml(message: str, now: dt.datetime) -> bytes:
    slug = re.sub(r"\W+", "_", message.lower()).strip("_")
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        "  <id>https://arxiv.org/</id>\n  <title>arXiv Search Results</title>\n"
        f"  <updated>{_iso(now)}</updated>\n"
        "  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>\n"
        "  <opensearch:totalResults>1</opensearch:totalResults>\n"
        "  <opensearch:startIndex>0</opensearch:startIndex>\n"
        "  <entry>\n"
        f"    <id>https://arxiv.org/api/errors#{slug}</id>\n    <title>Error</title>\n"
        f"    <updated>{_iso(now)}</updated>\n"
        f"    <summary>{escape(message)}</summary>\n"
        "    <author>\n      <name>arXiv api core</name>\n    </author>\n"
        "  </entry>\n</feed>\n"
    ).encode()


# -- the server -----------------------------------------------------------------------------------


class ArxivReplay(LocalServer):
    """A threaded HTTP server on 127.0.0.1 that plays arXiv's export API.

    >>> with ArxivReplay(sample.entries()) as api:  # doctest: +SKIP
    ...     api.url  # 'http://127.0.0.1:PORT/api/query'
    """

    models = TRANSPORT | {FaultKind.EMPTY}

    def __init__(self, entries: Iterable[Entry], *, as_of: dt.datetime | None = None,
                 port: int = 0, max_offset: int = MAX_OFFSET,
                 oai_page_size: int = oai.RECORDS_LIMIT,
                 oai_ids_page_size: int = oai.IDENTIFIERS_LIMIT,
                 ignores_start: bool = False) -> None:
        self.entries = list(entries)
        # Modelled, not recorded: a mirror that serves every page from the first result
        # whatever `start` asks (arXiv itself honours it); its count stays the true one.
        self.ignores_start = ignores_start
        self.as_of = as_of
        # arXiv's cap on the offset; lower, a test needs fewer entries to pass it.
        self.max_offset = max_offset
        self.log: list[dict[str, list[str]]] = []  # every request's query, in order
        self.headers: list[dict[str, str]] = []  # every GET's request headers, in order
        # OAI-PMH: records per ListRecords page, headers per ListIdentifiers page (arXiv's
        # RECORDS_LIMIT and IDENTIFIERS_LIMIT), every /oai request's params, the changes
        # besides new versions, and the resumption tokens issued (token -> expiry).
        self.oai_page_size = oai_page_size
        self.oai_ids_page_size = oai_ids_page_size
        self.oai_log: list[dict[str, list[str]]] = []
        self.oai_changes = oai.Changes()
        self._oai_tokens: dict[str, dt.datetime] = {}
        self.oai_lag = oai.OAI_LAG
        # The announcement feed: the categories whose feeds serve the previous day, and
        # every /rss/ request's path after /rss/, in order.
        self.stale: set[str] = set()
        self.rss_log: list[str] = []
        super().__init__(port)

    @property
    def url(self) -> str:
        return f"{self.base}/api/query"

    @property
    def oai_url(self) -> str:
        return f"{self.base}/oai"

    def amend(self, arxiv_id: str, when: dt.datetime, **fields: str | None) -> None:
        """A metadata-only change (doi, journal_ref, comment, license, title) that OAI-PMH
        shows from `when` on, moving the record's datestamp; /api/query is unchanged."""
        checked = oai.amended(fields)
        if when.tzinfo is None:
            raise ValueError("when must be timezone-aware")
        with self._lock:
            self.oai_changes.amendments.setdefault(arxiv_id, []).append((when, checked))

    def delete(self, arxiv_id: str, when: dt.datetime) -> None:
        """From `when` on, OAI-PMH answers the record as deleted (header only)."""
        if when.tzinfo is None:
            raise ValueError("when must be timezone-aware")
        with self._lock:
            self.oai_changes.deletions[arxiv_id] = when

    def oai_answer(self, params: dict[str, list[str]]) -> bytes:
        """The OAI-PMH body for one request at the replay's clock (always HTTP 200)."""
        now = self.as_of or dt.datetime.now(dt.UTC)
        with self._lock:
            changes = oai.Changes(
                {k: list(v) for k, v in self.oai_changes.amendments.items()},
                dict(self.oai_changes.deletions))
        repo = oai.Repository(
            records=oai.records(self.entries, changes, now, self.oai_lag), now=now,
            base_url=self.oai_url,
            page_size=self.oai_page_size, ids_page_size=self.oai_ids_page_size,
            tokens=self._oai_tokens,
            extra_categories=frozenset(c for e in self.entries for c in e.categories))
        with self._lock:  # the token book is shared by the handler threads
            return oai.answer(params, repo)

    def rss_answer(self, query: str) -> tuple[int, bytes, dict[str, str]]:
        """The announcement feed for `query` (archives and categories joined by +) at the
        replay's clock: status, body, headers."""
        now = self.as_of or dt.datetime.now(dt.UTC)
        known = set(oai.CS_CATEGORIES) | {c for e in self.entries for c in e.categories}
        try:
            topics, cats = rss.wanted(query, known)
        except rss.FeedQueryError as exc:
            return 400, rss.error_document(query, str(exc), rss.day_of(now)), {}
        with self._lock:
            stale = set(self.stale)
        day = rss.served_day(self.entries, now, cats, stale)
        body = rss.document(topics, rss.listings(self.entries, day, now, cats), day,
                            oai.license_of)
        return 200, body, rss.headers(body, now)

    def visible(self) -> list[Entry]:
        """The newest announced version of each paper, as arXiv shows it at as_of."""
        newest: dict[str, Entry] = {}
        for e in self.entries:
            if self.as_of is not None and e.announced > self.as_of:
                continue
            if e.arxiv_id not in newest or e.version > newest[e.arxiv_id].version:
                newest[e.arxiv_id] = e
        return list(newest.values())

    def answer(self, params: dict[str, list[str]]) -> tuple[int, bytes]:
        now = self.as_of or dt.datetime.now(dt.UTC)
        get = {k: v[0] for k, v in params.items()}
        try:
            start = int(get.get("start", "0"))
            per_page = int(get.get("max_results", "10"))
        except ValueError:
            return 400, error_xml("start and max_results must be integers", now)
        if per_page > _MAX_PER_CALL or per_page < 0 or start < 0:
            return 400, error_xml(f"max_results must be 0 to {_MAX_PER_CALL} and start "
                                  "non-negative", now)
        if per_page and start // per_page + 1 > self.max_offset // per_page:
            return 500, (f"Requested page {start // per_page + 1}, but max is "
                         f"{self.max_offset // per_page}").encode()
        try:
            pred = parse_query(get.get("search_query", ""))
        except QueryError as exc:
            return 400, error_xml(str(exc), now)
        pool = self.visible()
        ids = [i for i in get.get("id_list", "").split(",") if i]
        if ids:
            bad = [i for i in ids if not (_NEW_ID.match(i) or _OLD_ID.match(i))]
            if bad:
                return 400, error_xml(f"incorrect id format for {bad[0]}", now)
            newest = {e.arxiv_id: e for e in pool}
            by_version = {f"{e.arxiv_id}v{e.version}": e for e in self.entries
                          if self.as_of is None or e.announced <= self.as_of}
            pool = [e for i in ids if (e := by_version.get(i) or newest.get(i))]
        elif not get.get("search_query"):
            return 400, error_xml("search_query or id_list is required", now)
        hits = [e for e in pool if pred(e)]
        sort_by = get.get("sortBy", "relevance")
        key = {"lastUpdatedDate": lambda e: (e.updated, e.arxiv_id),  # the current version's
               "submittedDate": lambda e: (e.published, e.arxiv_id),
               "relevance": lambda e: (e.updated, e.arxiv_id)}.get(sort_by)
        if key is None:
            return 400, error_xml(f"unknown sortBy {sort_by!r}", now)
        if not ids or sort_by != "relevance":
            hits.sort(key=key, reverse=get.get("sortOrder", "descending") != "ascending")
        title = "arXiv Query: " + "&".join(f"{k}={v}" for k, v in sorted(get.items()))
        served = 0 if self.ignores_start else start
        return 200, feed_xml(title, hits[served:served + per_page], len(hits), start,
                             per_page, now)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"replay": self})


class _Handler(ReplayHandler):
    """/api/query, /oai and /rss/ of one ArxivReplay, each taking the queued faults."""

    replay: ClassVar[ArxivReplay]

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        params = parse_qs(url.query, keep_blank_values=True)
        with self.replay._lock:
            self.replay.headers.append(dict(self.headers))
        if url.path == "/oai":
            self._oai(params)
        elif url.path.startswith("/rss/"):
            self._rss(unquote(url.path.removeprefix("/rss/")))
        elif url.path == "/api/query":
            self._api(params)
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if url.path != "/oai":  # the export API here answers GET only
            self.send_error(501, f"Unsupported method ({self.command!r})")
            return
        length = int(self.headers.get("Content-Length") or 0)
        form = self.rfile.read(length).decode("utf-8", "replace")
        self._oai(parse_qs(form, keep_blank_values=True))  # the form alone, as Flask

    def _api(self, params: dict[str, list[str]]) -> None:
        with self.replay._lock:
            self.replay.log.append(params)
        fault = self.replay.next_fault()

        def answer() -> Answer:
            status, body = self.replay.answer(params)
            if fault and fault.kind is FaultKind.EMPTY and status == 200:
                body = re.sub(rb"  <entry>.*?</entry>\n", b"", body, flags=re.S)
            return status, body, ("text/plain; charset=utf-8" if status == 500
                                  else "application/atom+xml; charset=utf-8"), {}

        self.respond(fault, answer)

    def _oai(self, params: dict[str, list[str]]) -> None:
        with self.replay._lock:
            self.replay.oai_log.append(params)
        fault = self.replay.next_fault()

        def answer() -> Answer:
            body = self.replay.oai_answer(params)
            if fault and fault.kind is FaultKind.EMPTY:
                body = re.sub(rb"    <(record|header)\b.*?</\1>\n", b"", body, flags=re.S)
            return 200, body, "text/xml", {}  # text/xml: arXiv's routes.py

        self.respond(fault, answer)

    def _rss(self, query: str) -> None:
        with self.replay._lock:
            self.replay.rss_log.append(query)
        fault = self.replay.next_fault()

        def answer() -> Answer:
            status, body, headers = self.replay.rss_answer(query)
            if fault and fault.kind is FaultKind.EMPTY:
                body = re.sub(rb"    <item>.*?</item>\n", b"", body, flags=re.S)
            return status, body, "application/rss+xml", headers

        self.respond(fault, answer)

    def error_page(self, status: int, seconds: float) -> tuple[bytes, str]:
        if status == 503 and urlsplit(self.path).path == "/oai":
            # arXiv's flow control: the page it sends (recorded)
            return (f"<html><body>\n<h1>Retry after {int(seconds)} seconds</h1>\n"
                    "</body></html>\n").encode(), "text/html"
        return super().error_page(status, seconds)

    def html_page(self) -> bytes:
        return (b"<!DOCTYPE html><html><body><h1>arXiv is undergoing maintenance</h1>"
                b"</body></html>")
