"""arXiv over OAI-PMH: every record of the configured categories that changed since the last
harvest, the way arXiv asks bulk harvesters to read its metadata.

Since November 2025 the export API selects a date range by a paper's *first* version
(arXiv/arxiv-search, `fix_aliases` and `_query_submittedDate`), so a v2 of an older paper,
or a DOI or journal-ref added without a new version, is in no window the API source
reads. OAI-PMH (arXiv/arxiv-docs `source/help/oa/index.md`) stamps a record with the day
of its last change, a new version or new metadata alike: so this source reads
`ListRecords` in `arXivRaw` (every version with its date and size, the current metadata)
for each configured set, from the day of the last complete harvest's response
(inclusive: a day's records may still arrive after a harvest), following resumption
tokens. `noRecordsMatch` to a list's first request is an empty harvest, not an error (to a
token, it is a list cut short: a failure); a body that is not OAI-PMH is an error, never
"nothing new"; 503 with Retry-After is flow control, waited out by the shared retry loop
(`_http.Requests`, paced with every other request to arXiv).

What a record adds to the store, against what the store holds (`merge`):
- a paper the store lacks, or a version newer than the stored one: the record whole;
- the stored version: only its comment, journal-ref and DOI (the API source's title,
  abstract and authors stay as they are, so two readers of one paper never flip-flop);
- an older version, or a deleted record: nothing (deletions are counted).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import functools
import itertools
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pyarrow as pa
import pyarrow.compute as pc

from pipeline import outbound
from pipeline.merge import merge_arxiv
from pipeline.outbound import Answer, FetchStats, Transient, check_status
from pipeline.report import RunReport, RunStatus
from pipeline.sources._http import Requests, SourceError
from pipeline.sources._source import (
    Catch,
    Fact,
    Library,
    Link,
    Merged,
    Options,
    Picks,
    Signal,
    start_day,
)
from pipeline.sources._untrusted import Malformed, NotExpected, too_long, xml_root
from pipeline.sources.arxiv import ArxivRow
from pipeline.tables import ARXIV_SNAPSHOT, REBUILD, Table, to_table
from pipeline.text.ids import is_arxiv_id
from pipeline.text.untrusted import CLOCK_SKEW, Findings, clean_text, not_after

if TYPE_CHECKING:
    from pipeline.config import ArxivConfig, Config

_OAI = "http://www.openarchives.org/OAI/2.0/"
_RAW = "http://arxiv.org/OAI/arXivRaw/"
_NS = {"o": _OAI, "r": _RAW}
_ALL_CS = 40  # categories: with every cs.* configured, the one set `cs` serves them all
_STRS = pa.list_(pa.string())
_TS = pa.timestamp("us", tz="UTC")
# What arXivRaw says that the API does not: a record's datestamp, every version's date and
# size, the license, each DOI, the authors' affiliations; a snapshot keeps them beside the
# entry's columns.
OAI_SNAPSHOT = pa.schema([
    *ARXIV_SNAPSHOT,
    ("datestamp", pa.date32()),
    ("version_dates", pa.list_(_TS)),  # v1 first
    ("license", pa.string()),
    ("version_sizes_kb", pa.list_(pa.int32())),  # v1 first, as arXiv gives them ("123kb")
    ("dois", _STRS),  # the doi field holds one or more, split
    ("author_affiliations", _STRS),  # one per author, null for none given
])
# The source's own table: what of that a paper's page and readers of the store use.
OAI_TABLE = Table("oai", pa.schema([
    ("arxiv_id", pa.string()),
    ("license", pa.string()),
    ("dois", _STRS),
    ("affiliations", _STRS),  # the authors' affiliations, each once, in order
    ("version_dates", pa.list_(_TS)),  # every version's, also those never read here
    ("version_sizes_kb", pa.list_(pa.int32())),
]), ("arxiv_id",), on_save="rebuild", remedy=REBUILD)
# Authors are split at commas and "and" outside parentheses: an affiliation typed after a
# name ("Ann Lee (MIT, Cambridge)") holds commas of its own.
_AUTHOR_SPLIT = re.compile(r"(?:,\s*(?:and\s+)?|\s+and\s+)(?![^(]*\))")
_PAREN = re.compile(r"\s*\(([^()]*)\)")
# "A (1), B (1, 2) ((1) MIT, (2) CMU)": affiliations numbered in a block at the end.
_NUMBERED_BLOCK = re.compile(r"\s*\((\s*\(\d+\).*)\)\s*$")
_NUMBERED = re.compile(r"\((\d+)\)\s*([^()]+?)\s*,?\s*(?=\(\d+\)|$)")
_REFS = re.compile(r"\d+(?:\s*,\s*\d+)*")
_DOI_SPLIT = re.compile(r"[\s,;]+")
_SIZE = re.compile(r"(\d{1,9})\s*kb", re.IGNORECASE)
# Pages in a row without a record that end a list as failed: OAI-PMH lets a server cut
# pages as it likes, an empty one now and then included (arXiv's never are), not forever.
EMPTY_PAGES = 3


class Unreadable(Exception):
    """The body is not a complete OAI-PMH response."""


class OaiRow(ArxivRow):
    """A record as the harvest's snapshot stores it (OAI_SNAPSHOT)."""

    datestamp: dt.date
    version_dates: list[dt.datetime | None]  # none None: a record with one is rejected
    license: str | None
    version_sizes_kb: list[int | None]
    dois: list[str]
    author_affiliations: list[str | None]


@dataclass
class Harvest:
    """What one harvest got: records (even when it stopped early) and how it ended."""

    rows: dict[str, OaiRow] = field(default_factory=dict)  # by arXiv id, the newest kept
    stats: FetchStats = field(default_factory=FetchStats)
    error: str | None = None
    deleted: int = 0
    findings: Findings = field(default_factory=Findings)
    answered: dt.datetime | None = None  # the first response's responseDate
    per_set: dict[str, int] = field(default_factory=dict)

    def table(self) -> pa.Table:
        return pa.Table.from_pylist(list(self.rows.values()), schema=OAI_SNAPSHOT)


@dataclass(frozen=True)
class Page:
    answered: dt.datetime
    records: list[Any]  # <record> elements
    token: str | None  # None: the list is complete


def sets_for(categories: tuple[str, ...]) -> list[str]:
    """The OAI sets that hold the categories: `cs` for all of cs.*, else one per category
    (`cs:cs:AI`, as arXiv names them)."""
    cs = [c for c in categories if c.startswith("cs.")]
    whole = ["cs"] if len(cs) == _ALL_CS else []
    rest = [c for c in categories if not (whole and c.startswith("cs."))]
    return whole + [f"{c.split('.')[0]}:{c.split('.')[0]}:{c.split('.', 1)[1]}"
                    if "." in c else c for c in rest]


def harvest(cfg: ArxivConfig, since: dt.date, fetched_at: dt.datetime) -> Harvest:
    """Every record of the configured sets changed on or after `since`. Never raises for
    the source's faults: they end the harvest with what was read."""
    requests_ = Requests(cfg, time.monotonic() + cfg.max_run_seconds, name="arxiv",
                         limit=f"max_run_seconds ({cfg.max_run_seconds:g} s)")
    result = Harvest(stats=requests_.stats)
    try:
        for spec in sets_for(cfg.categories):
            params: dict[str, str] = {"verb": "ListRecords", "metadataPrefix": "arXivRaw",
                                      "set": spec, "from": since.isoformat()}
            result.per_set[spec] = 0
            resumed = _Resumption(spec)
            while params:
                url = f"{cfg.oai_url}?{urlencode(params)}"
                page = requests_.call(functools.partial(_get, url, cfg=cfg),
                                      _check, url)
                resumed.check(page)
                result.answered = result.answered or page.answered
                for record in page.records:
                    result.per_set[spec] += _keep(record, result, fetched_at)
                params = ({"verb": "ListRecords", "resumptionToken": page.token}
                          if page.token else {})
    except SourceError as exc:
        result.error = str(exc)
    return result


@dataclass
class _Resumption:
    """One list's pages so far, to stop a server that never ends it: a token it gave
    before (a loop), EMPTY_PAGES pages in a row without a record, or a resumed request
    answered with nothing and no token (noRecordsMatch to a token: the list cut short).
    Only the first request of a list may find nothing."""

    spec: str
    pages: int = 0
    empty: int = 0  # pages in a row without a record
    tokens: set[str] = field(default_factory=set)

    def check(self, page: Page) -> None:
        self.pages += 1
        self.empty = 0 if page.records else self.empty + 1
        if page.token is not None and page.token in self.tokens:
            raise SourceError(f"set {self.spec}: the resumptionToken {page.token[:60]!r} "
                              "came again, a loop; stopped")
        if self.empty >= EMPTY_PAGES:
            raise SourceError(f"set {self.spec}: {self.empty} pages in a row without a "
                              "record; stopped")
        if self.pages > 1 and not page.records and page.token is None:
            raise SourceError(f"set {self.spec}: a resumed list answered with no records "
                              "and no token (noRecordsMatch to a resumptionToken): the "
                              "rest of the list was never read")
        if page.token is not None:
            self.tokens.add(page.token)


def _get(url: str, deadline: float, *, cfg: ArxivConfig) -> Answer:
    headers = {"User-Agent": cfg.user_agent, "Accept": "application/xml, text/xml"}
    return outbound.get(url, headers, deadline)


def _check(answer: Answer) -> Page:
    status, headers, body = answer
    check_status(status, headers)
    try:
        root = xml_root(body, f"{{{_OAI}}}OAI-PMH", "an OAI-PMH response")
    except Malformed as exc:
        if status != 200:
            raise SourceError(f"HTTP {status}, not OAI-PMH") from None
        raise Transient(str(exc)) from None
    except NotExpected as exc:
        raise SourceError(f"HTTP {status}: {exc}") from None
    answered = _datetime(root.findtext("o:responseDate", None, _NS))
    error = root.find("o:error", _NS)
    if error is not None:
        if error.get("code") == "noRecordsMatch":
            return Page(answered, [], None)
        raise SourceError(f"OAI-PMH error {error.get('code')}: "
                          f"{clean_text(error.text or '')[:200]}")
    listing = root.find("o:ListRecords", _NS)
    if listing is None:
        raise SourceError(f"HTTP {status}: an OAI-PMH response without ListRecords")
    token = listing.findtext("o:resumptionToken", None, _NS)
    return Page(answered, listing.findall("o:record", _NS), (token or "").strip() or None)


def _datetime(text: str | None) -> dt.datetime:
    """The responseDate in UTC. OAI-PMH 2.0 §3.3.1 has it in UTC ("…Z"); one without a
    zone, or a bare day, is read as UTC too (a day as its start: the harvest then reads
    that day again, never past it)."""
    try:
        when = dt.datetime.fromisoformat((text or "").strip().replace("Z", "+00:00"))
    except ValueError:
        raise Transient(f"responseDate {clean_text(text or '')[:40]!r} is not a date"
                        ) from None
    return (when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when).astimezone(dt.UTC)


def _keep(record: Any, harvest_: Harvest, fetched_at: dt.datetime) -> int:
    """Keep a record's row (the newest version seen of a paper wins); 1 when kept."""
    if oversized := too_long(record):
        harvest_.findings.reject(_record_id(record), oversized)
        return 0
    header = record.find("o:header", _NS)
    if header is None:
        harvest_.findings.reject("?", "a record without a header")
        return 0
    if header.get("status") == "deleted":
        harvest_.deleted += 1
        return 0
    row = _row(record, header, fetched_at, harvest_.findings)
    if row is None:
        return 0
    held = harvest_.rows.get(row["arxiv_id"])
    if held is None or (held["version"], held["datestamp"]) <= (row["version"],
                                                                 row["datestamp"]):
        harvest_.rows[row["arxiv_id"]] = row
    return 1


def _record_id(record: Any) -> str:
    """The arXiv id a record names (its header's identifier without arXiv's prefix)."""
    said = record.findtext("o:header/o:identifier", "", _NS) or ""
    return clean_text(said).strip().removeprefix("oai:arXiv.org:")[:40] or "?"


def _row(record: Any, header: Any, fetched_at: dt.datetime, findings: Findings
         ) -> OaiRow | None:
    raw = record.find("o:metadata/r:arXivRaw", _NS)
    arxiv_id = clean_text(raw.findtext("r:id", "", _NS) if raw is not None else "").strip()
    if raw is None or not is_arxiv_id(arxiv_id):
        findings.reject(arxiv_id[:40] or "?", "not an arXivRaw record with an arXiv id")
        return None
    versions = _versions(raw, arxiv_id, fetched_at, findings)
    if versions is None:
        return None
    categories = clean_text(raw.findtext("r:categories", "", _NS)).split()
    try:
        datestamp = dt.date.fromisoformat(header.findtext("o:datestamp", "", _NS).strip())
    except ValueError:
        datestamp = None
    findings.check_categories(categories)
    if not versions or None in (d for _, d in versions) or not categories or not datestamp:
        findings.reject(arxiv_id, "a record without versions, dates or categories")
        return None
    authors, affiliations = split_authors(_text(raw, "r:authors") or "")
    doi = _text(raw, "r:doi")
    return {
        "arxiv_id": arxiv_id, "version": versions[-1][0],
        "title": _text(raw, "r:title") or "", "abstract": _text(raw, "r:abstract") or "",
        "authors": authors,
        "categories": categories, "primary_category": categories[0],
        "comment": _text(raw, "r:comments"), "journal_ref": _text(raw, "r:journal-ref"),
        "doi": _text(raw, "r:doi"), "published": versions[0][1], "updated": versions[-1][1],
        "fetched_at": fetched_at, "datestamp": datestamp,
        "version_dates": [d for _, d in versions], "license": _text(raw, "r:license"),
        "version_sizes_kb": _sizes(raw), "dois": [d for d in _DOI_SPLIT.split(doi or "") if d],
        "author_affiliations": affiliations,
    }


def _versions(raw: Any, arxiv_id: str, now: dt.datetime, findings: Findings
              ) -> list[tuple[int, dt.datetime | None]] | None:
    """Each version's number and date, v1 first; None (rejected, in `findings`) unless
    they are v1 … vn, each once (a record listing v1 and v9999 never makes a version
    9999), and none is dated past the run's clock (arXiv dates a version at submission,
    before any harvest sees it). A version dated before the one it replaced is kept and
    named an anomaly."""
    found = [(_number(v.get("version")), _rfc2822(v.findtext("r:date", "", _NS)))
             for v in raw.findall("r:version", _NS)]
    versions = sorted(found, key=lambda v: v[0])
    if [n for n, _ in versions] != list(range(1, len(versions) + 1)):
        said = ", ".join(clean_text(v.get("version") or "?")[:8]
                         for v in raw.findall("r:version", _NS)[:6])
        findings.reject(arxiv_id, f"versions {said} are not numbered v1 to v{len(found)}")
        return None
    dates = [d for _, d in versions]
    if late := [(n, d) for n, d in versions if d is not None and d > now + CLOCK_SKEW]:
        findings.reject(arxiv_id, f"v{late[0][0]} dated {late[0][1]:%Y-%m-%d %H:%M} UTC, "
                                  "after the run's clock")
        return None
    for n, (earlier, later) in enumerate(itertools.pairwise(dates), start=2):
        if earlier is not None and later is not None and later < earlier:
            findings.anomalies.append({"id": arxiv_id, f"v{n}_dated_before_v{n - 1}":
                                       later.isoformat()})
    return versions


def split_authors(text: str) -> tuple[list[str], list[str | None]]:
    """The names in arXiv's authors field and each one's affiliation (None: none given):
    "A (MIT, USA), B and C" → [A, B, C], [MIT, USA, None, None]; numbered affiliations
    ("A (1), B (2) ((1) MIT, (2) CMU)") are resolved."""
    numbered: dict[str, str] = {}
    if block := _NUMBERED_BLOCK.search(text):
        numbered = {n: a for n, a in _NUMBERED.findall(block[1])}
        text = text[:block.start()]
    names: list[str] = []
    affiliations: list[str | None] = []
    for part in _AUTHOR_SPLIT.split(text):
        name = " ".join(_PAREN.sub("", part).split())
        if not name:
            continue
        said = [" ".join(a.split()) for a in _PAREN.findall(part)]
        resolved = [numbered.get(n.strip()) or n for a in said
                    for n in (a.split(",") if _REFS.fullmatch(a) and numbered else [a])]
        names.append(name)
        affiliations.append("; ".join(a for a in resolved if a) or None)
    return names, affiliations


def _sizes(raw: Any) -> list[int | None]:
    """Each version's size in kB, v1 first (None where arXiv's text is not "<n>kb")."""
    out: list[int | None] = []
    for v in sorted(raw.findall("r:version", _NS), key=lambda v: _number(v.get("version"))):
        m = _SIZE.fullmatch((v.findtext("r:size", "", _NS) or "").strip())
        out.append(int(m[1]) if m else None)
    return out


def _number(label: str | None) -> int:
    m = re.fullmatch(r"v([1-9]\d{0,3})", label or "")
    return int(m[1]) if m else 0


def _text(raw: Any, path: str) -> str | None:
    text = raw.findtext(path, None, _NS)
    return None if text is None else (" ".join(clean_text(text).split()) or None)


def _rfc2822(text: str) -> dt.datetime | None:
    try:
        return email.utils.parsedate_to_datetime(text).astimezone(dt.UTC)
    except (TypeError, ValueError):
        return None


# -- the source ------------------------------------------------------------------------------


class OAISource:
    """The configured categories over OAI-PMH, from the last complete harvest's day."""

    name = "oai"
    label: Mapping[str, str] = {"zh-CN": "arXiv 修订与元数据（OAI-PMH）",
             "en": "arXiv revisions and metadata (OAI-PMH)"}
    schema = OAI_SNAPSHOT
    # It writes papers and versions, as the API source does, and its own table.
    tables: tuple[Table, ...] = (OAI_TABLE,)
    facts: tuple[Fact, ...] = (
        Fact("affiliations", {"zh-CN": "作者单位", "en": "Affiliations"}),
        Fact("license", {"zh-CN": "许可", "en": "License"}),
    )
    signals: tuple[Signal, ...] = ()
    picks: Picks | None = None
    links: tuple[Link, ...] = ()

    def enabled(self, cfg: Config) -> bool:
        return cfg.sources.arxiv.enabled

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        acfg = cfg.sources.arxiv
        before = not_after(watermark, started, skew=dt.timedelta(0))
        # A day's records may still arrive after a harvest: its day is read again.
        since = start_day(options, before, started, overlap_days=0,
                          backfill_days=acfg.backfill_days)
        got = harvest(acfg, since, started)
        batch = got.table()
        merged = self.merge(cfg, library, batch)
        status: RunStatus = ("ok" if got.error is None
                             else "partial" if batch.num_rows else "failed")
        after = (not_after(got.answered, started, skew=dt.timedelta(0))
                 if got.error is None else before)
        report = RunReport(self.name, status, merged.counts, got.stats.requests,
                           got.stats.retries, got.error, before, after or before)
        catch = Catch(report, since, {"sets": got.per_set, "deleted": got.deleted,
                                      **got.findings.details()})
        catch.add(self.name, merged)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        batch = to_table(batch, OAI_SNAPSHOT)
        entries = _as_entries(library.papers, batch)
        merged = merge_arxiv(library.papers, library.version_keys, entries,
                             cfg.sources.arxiv.categories)
        own, moved = _own_rows(library.tables.get(OAI_TABLE.name), batch, merged.papers)
        changed = pc.or_(pc.is_in(batch["arxiv_id"], value_set=merged.changed["arxiv_id"]),
                         pc.is_in(batch["arxiv_id"], value_set=moved))
        return Merged(merged.papers, batch.filter(changed), merged.counts,
                      merged.new_versions, tables={OAI_TABLE.name: own})


def _own_rows(held: pa.Table | None, batch: pa.Table, papers: pa.Table
              ) -> tuple[pa.Table, pa.Array[Any]]:
    """The oai table with the batch's records of stored papers in, a record's newest
    reading replacing the held row; and the ids whose row changed. Only the batch's rows
    go through Python: `rebuild` folds every snapshot into a table of the whole library."""
    held = OAI_TABLE.schema.empty_table() if held is None else held
    kept = batch.filter(pc.is_in(batch["arxiv_id"], value_set=papers["arxiv_id"]))
    before = {r["arxiv_id"]: r for r in held.filter(
        pc.is_in(held["arxiv_id"], value_set=kept["arxiv_id"])).to_pylist()}
    moved = []
    for r in kept.to_pylist():
        row = {"arxiv_id": r["arxiv_id"], "license": r["license"], "dois": r["dois"],
               "affiliations": list(dict.fromkeys(a for a in r["author_affiliations"] or ()
                                                  if a)) or None,
               "version_dates": r["version_dates"], "version_sizes_kb": r["version_sizes_kb"]}
        if before.get(row["arxiv_id"]) != row:
            moved.append(row)
    ids = pa.array([r["arxiv_id"] for r in moved], pa.string())
    own = pa.concat_tables([held.filter(pc.invert(pc.is_in(held["arxiv_id"], value_set=ids))),
                            pa.Table.from_pylist(moved, schema=OAI_TABLE.schema)])
    return own.take(pc.sort_indices(own, [("arxiv_id", "ascending")])), ids


def _as_entries(papers: pa.Table, batch: pa.Table) -> pa.Table:
    """The records as arXiv entries for the merge: of a paper's stored version, only the
    comment, journal-ref and DOI are the record's; an older version is left out."""
    entries = batch.select(ARXIV_SNAPSHOT.names)
    at = pc.index_in(entries["arxiv_id"], value_set=papers["arxiv_id"].combine_chunks())
    stored = papers.take(at)
    # stubs: fill_null is typed as coalesce (one type for values and fill) (both lines)
    version: pa.ChunkedArray[Any] = pc.fill_null(stored["version"], 0)  # type: ignore[arg-type]
    same = pc.fill_null(pc.equal(entries["version"], version), False)  # type: ignore[type-var]
    for name in ("title", "abstract", "authors", "categories", "primary_category",
                 "published", "updated"):
        column = pc.if_else(same, stored[name], entries[name])
        entries = entries.set_column(entries.schema.get_field_index(name),
                                     ARXIV_SNAPSHOT.field(name), column)
    return entries.filter(pc.greater_equal(entries["version"], version))


SOURCE = OAISource()
