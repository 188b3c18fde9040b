"""arXiv's OAI-PMH service as the replay plays it: the protocol logic and XML, pure functions.

`ArxivReplay` (pipeline/replay/arxiv.py) serves this at `/oai` (GET query or POST form) from
the same entries as its export API. Nothing here touches the network or the clock: the
caller passes `now` (the replay's `as_of`, or the wall clock).

Where each behaviour comes from
-------------------------------
arXiv's own service, arXiv/oaipmh (read at commit 27ad99e; paths under `oaipmh/`):

- `requests/routes.py`: one endpoint for GET and POST; a repeated parameter is
  `badArgument` (checked before the verb); a missing or unknown verb is `badVerb`.
- `factory.py`, `handle_oai_error`: every OAI error is answered with **HTTP 200** and an
  `<error code=…>` body (`templates/errors.xml`: the code's description, then
  " Reason: …"). The `<request>` element carries the query's attributes only for the errors
  that keep them (badResumptionToken, cannotDisseminateFormat, idDoesNotExist,
  noRecordsMatch), as `data/oai_errors.py` declares.
- `data/oai_config.py`: repositoryName `arXiv`, protocol 2.0, earliestDatestamp
  2005-09-16 (a `from` before it is badArgument "start date too early"), deletedRecord
  `persistent`, granularity `YYYY-MM-DD`; `config.py`: RECORDS_LIMIT 2500,
  IDENTIFIERS_LIMIT 20000 per response.
- `requests/data_queries.py`: the parameters each verb allows (anything else is
  badArgument); `from`/`until` only as YYYY-MM-DD, inclusive days in UTC (from 00:00:00,
  until 23:59:59); from > until, or until later than tomorrow, is badArgument; a set that
  does not exist is badArgument (not noRecordsMatch); a resumptionToken is exclusive.
- `requests/param_processing.py`: identifiers are `oai:arXiv.org:<id>`; any other prefix
  or a malformed id is idDoesNotExist.
- `processors/db.py`, `get_list_data`: records are chosen by the current version's
  modtime within [from, until] in the order (modtime, paper id); set membership is by
  **every** category of the paper (the arXiv_in_category table holds cross-lists too), a
  group or archive set also takes the aliases of its categories (cs.NA ~ math.NA,
  cs.SY ~ eess.SY, cs.IT ~ math.IT …).
- `processors/fetch_list.py`: limit+1 rows are read to see whether more remain; the page
  is shown sorted by (datestamp day, identifier); an empty selection is noRecordsMatch.
  Paging as arXiv does it: when a page spans several days, the token restarts `from` the
  last day and skips the records of that day already shown; within one day it skips on.
  The last page of a resumed list carries an empty `<resumptionToken/>`; a list that fits
  one page carries none.
- `processors/resume.py`: the token is `quote(urlencode(query + skip))`; it carries only
  `expirationDate` (the next UTC midnight after issue) - no `cursor`, no
  `completeListSize` (the 2023 answer in the shared fixtures, from the old service, had
  them; today's code does not). A token that does not decode to a verb and a numeric skip
  is badResumptionToken, and so is a token of another verb.
- `serializers/create_records.py`, `templates/record_formats.xml`: the arXivRaw record
  (id, submitter, one `version` per version with an RFC 2822 GMT `date` and `size` in kb,
  title, authors as one string, categories space separated, comments, journal-ref, doi,
  license, abstract) with the header's datestamp the current version's modtime; the
  header's setSpecs are every category (with aliases) in `group:archive:SUB` form from
  `processors/create_set_list.py`, `make_set_str` (ListIdentifiers: the categories as
  listed, without the aliases, as `create_records` builds them).
- `processors/create_set_list.py`, `templates/setSpec.xml`: ListSets lists groups
  (`cs`), archives (`cs:cs`, `physics:hep-th`) and categories (`cs:cs:AI`), no token.
- `templates/schema/arXivRaw.xsd`: the schema the records validate against
  (tests/data/arxiv-oai/arXivRaw.xsd is a copy).

The shared fixtures (/work/shared/fixtures/arxiv-today/oai/, see its README): the body of
a 503 ("Retry after N seconds", `SciX_arxiv_retry_after.html`), the envelope and header
shape of real answers (`SciX_GetRecord_data.xml`, `SciX_ListRecords_data_0.xml`).
arXiv/arxiv-docs `source/help/oa/index.md`: the datestamp is the record's last change;
metadata appears about 22:30 ET after the 20:00 ET announcement; tokens expire daily.

What is modelled, not recorded
------------------------------
- `OAI_LAG` (2 h 30 min after the announcement before a version shows in OAI-PMH) is the
  docs' "about 22:30 ET", not a measurement.
- The datestamp: arXiv's is the modtime of the current version's metadata row. Here it is
  the time of the record's last visible change: a version's announcement + OAI_LAG, an
  `amend` or a `delete`.
- Amendments (`ArxivReplay.amend`: doi, journal_ref, comment, license, title) show from
  their time on and hold for later versions too (a replacement starts from the metadata
  as it stands).
- Version sizes (deterministic from the id), the submitter (the first author), the
  license (a deterministic choice among arXiv's common licenses), the authors string
  ("A, B and C", arXiv's usual form) are made up; no populated arXivRaw answer from the
  live service has been recorded publicly. No affiliation is made up: the sample has none,
  and the demo's pages would show an invented one as the paper's.
- Deletion: arXiv's code declares `persistent` but has no path that emits a deleted
  header (arXiv withdraws by a new version). The replay follows OAI-PMH 2.0 §2.5.1:
  `<header status="deleted">` with identifier, datestamp and setSpecs, no metadata, in
  lists and GetRecord.
- Token expiry: resume.py advertises `expirationDate` but does not check it. The replay
  does, on its own clock, for the tokens it issued, so a client that honours the date is
  right with both. Tokens it never issued but that decode are accepted, as arXiv does.
- Only arXivRaw is served: ListMetadataFormats lists it alone (arXiv also serves oai_dc,
  arXiv, arXivOld); the other prefixes answer cannotDisseminateFormat.
- The set taxonomy: arXiv's groups and archives, every active cs category, and every other
  category the entries use (arXiv knows all of its categories; a set of a category the
  replay never saw is "Set does not exist" here). Set names beyond cs are the ids.
- baseURL in Identify and the `<request>` element are the replay's own URL (arXiv's are
  https://oaipmh.arxiv.org/oai).
- `tex2utf` and other text clean-up arXiv applies in other formats are not needed:
  arXivRaw shows the text as stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import format_datetime
from urllib.parse import parse_qs, quote, unquote, urlencode
from xml.sax.saxutils import escape

from pipeline.replay.sample import Entry

OAI_LAG = dt.timedelta(hours=2, minutes=30)  # modelled: the docs' "~22:30 ET" after 20:00 ET
RECORDS_LIMIT = 2500  # arXiv's config.py
IDENTIFIERS_LIMIT = 20000  # arXiv's config.py
ID_PREFIX = "oai:arXiv.org:"
REPOSITORY_NAME = "arXiv"
PROTOCOL_VERSION = "2.0"
EARLIEST_DATE = dt.datetime(2005, 9, 16, tzinfo=dt.UTC)
DELETED_RECORD = "persistent"
GRANULARITY = "YYYY-MM-DD"
ADMIN_EMAIL = "help@arxiv.org"
ARXIVRAW = ("arXivRaw", "https://oaipmh.arxiv.org/OAI/arXivRaw.xsd",
            "http://arxiv.org/OAI/arXivRaw/")
AMENDABLE = frozenset({"doi", "journal_ref", "comment", "license", "title"})
LICENSES = (  # arXiv's usual licenses; which one a paper has is modelled
    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    "http://creativecommons.org/licenses/by/4.0/",
    "http://creativecommons.org/licenses/by-nc-sa/4.0/",
)

_NEW_ID = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$")
_OLD_ID = re.compile(r"^([a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

# -- the taxonomy the sets are made of ------------------------------------------------------------

GROUPS = {  # arXiv's active groups, without the grp_ prefix
    "cs": "Computer Science", "econ": "Economics",
    "eess": "Electrical Engineering and Systems Science", "math": "Mathematics",
    "physics": "Physics", "q-bio": "Quantitative Biology", "q-fin": "Quantitative Finance",
    "stat": "Statistics",
}
ARCHIVE_GROUP = {
    "cs": "cs", "econ": "econ", "eess": "eess", "math": "math", "q-bio": "q-bio",
    "q-fin": "q-fin", "stat": "stat",
    **{a: "physics" for a in ("astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph",
                              "hep-th", "math-ph", "nlin", "nucl-ex", "nucl-th", "physics",
                              "quant-ph")},
}
CS_CATEGORIES = {
    "cs.AI": "Artificial Intelligence", "cs.AR": "Hardware Architecture",
    "cs.CC": "Computational Complexity",
    "cs.CE": "Computational Engineering, Finance, and Science",
    "cs.CG": "Computational Geometry", "cs.CL": "Computation and Language",
    "cs.CR": "Cryptography and Security", "cs.CV": "Computer Vision and Pattern Recognition",
    "cs.CY": "Computers and Society", "cs.DB": "Databases",
    "cs.DC": "Distributed, Parallel, and Cluster Computing", "cs.DL": "Digital Libraries",
    "cs.DM": "Discrete Mathematics", "cs.DS": "Data Structures and Algorithms",
    "cs.ET": "Emerging Technologies", "cs.FL": "Formal Languages and Automata Theory",
    "cs.GL": "General Literature", "cs.GR": "Graphics",
    "cs.GT": "Computer Science and Game Theory", "cs.HC": "Human-Computer Interaction",
    "cs.IR": "Information Retrieval", "cs.IT": "Information Theory",
    "cs.LG": "Machine Learning", "cs.LO": "Logic in Computer Science",
    "cs.MA": "Multiagent Systems", "cs.MM": "Multimedia", "cs.MS": "Mathematical Software",
    "cs.NA": "Numerical Analysis", "cs.NE": "Neural and Evolutionary Computing",
    "cs.NI": "Networking and Internet Architecture", "cs.OH": "Other Computer Science",
    "cs.OS": "Operating Systems", "cs.PF": "Performance", "cs.PL": "Programming Languages",
    "cs.RO": "Robotics", "cs.SC": "Symbolic Computation", "cs.SD": "Sound",
    "cs.SE": "Software Engineering", "cs.SI": "Social and Information Networks",
    "cs.SY": "Systems and Control",
}
_PAIRS = (("cs.NA", "math.NA"), ("cs.SY", "eess.SY"), ("cs.IT", "math.IT"),
          ("math.MP", "math-ph"), ("math.ST", "stat.TH"), ("econ.GN", "q-fin.EC"))
ALIASES = {**dict(_PAIRS), **{b: a for a, b in _PAIRS}}  # arXiv's alt_name, both ways


def archive_of(category: str) -> str:
    return category.split(".")[0]


def set_spec(category: str) -> str:
    """make_set_str for a category: cs.AI -> cs:cs:AI, hep-th -> physics:hep-th."""
    archive = archive_of(category)
    return f"{ARCHIVE_GROUP.get(archive, archive)}:{category.replace('.', ':')}"


def _header_categories(categories: Iterable[str]) -> list[str]:
    """create_records.Record: the categories and their aliases, without duplicates."""
    out: list[str] = []
    for cat in categories:
        for c in (cat, ALIASES.get(cat)):
            if c and c not in out:
                out.append(c)
    return out


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    number: int
    date: dt.datetime  # the version's submission time
    size_kb: int


@dataclass(frozen=True)
class Record:
    """A paper as OAI-PMH shows it at one moment."""

    arxiv_id: str
    modtime: dt.datetime  # the last visible change; the datestamp is its UTC day
    categories: tuple[str, ...]
    deleted: bool = False
    versions: tuple[Version, ...] = ()
    title: str = ""
    authors: tuple[str, ...] = ()
    abstract: str = ""
    comment: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    license: str | None = None

    @property
    def oai_id(self) -> str:
        return ID_PREFIX + self.arxiv_id

    @property
    def day(self) -> dt.date:
        return self.modtime.astimezone(dt.UTC).date()


@dataclass
class Changes:
    """What happened to papers besides new versions: amendments and deletions, each with the
    moment it becomes visible."""

    amendments: dict[str, list[tuple[dt.datetime, dict[str, str | None]]]] = field(
        default_factory=dict)
    deletions: dict[str, dt.datetime] = field(default_factory=dict)


def _hash(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def size_kb(arxiv_id: str, version: int) -> int:
    """A version's size: modelled, deterministic from the id."""
    return 100 + _hash(f"{arxiv_id}v{version}") % 4900


def license_of(arxiv_id: str) -> str:
    """A paper's license: modelled, a deterministic choice among arXiv's common ones."""
    return LICENSES[_hash(arxiv_id) % len(LICENSES)]


def records(entries: Iterable[Entry], changes: Changes, now: dt.datetime,
            lag: dt.timedelta = OAI_LAG) -> list[Record]:
    """Every paper OAI-PMH shows at `now`: each version once announced + OAI_LAG; the
    current version's metadata with the amendments visible by then; deleted ones as such."""
    by_id: dict[str, dict[int, Entry]] = {}
    for e in entries:
        if e.announced + lag <= now:
            by_id.setdefault(e.arxiv_id, {})[e.version] = e
    out = []
    for arxiv_id, versions in by_id.items():
        current = versions[max(versions)]
        times = [v.announced + lag for v in versions.values()]
        meta: dict[str, str | None] = {
            "title": current.title, "comment": current.comment,
            "journal_ref": current.journal_ref, "doi": current.doi,
            "license": license_of(arxiv_id)}
        for when, fields in sorted(changes.amendments.get(arxiv_id, []),
                                   key=lambda a: a[0]):
            if when <= now:
                meta.update(fields)
                times.append(when)
        deleted_at = changes.deletions.get(arxiv_id)
        if deleted_at is not None and deleted_at <= now:
            out.append(Record(arxiv_id, max(*times, deleted_at), current.categories,
                              deleted=True))
            continue
        out.append(Record(
            arxiv_id=arxiv_id, modtime=max(times), categories=current.categories,
            versions=tuple(Version(n, v.updated, size_kb(arxiv_id, n))
                           for n, v in sorted(versions.items())),
            title=meta["title"] or "", authors=current.authors, abstract=current.abstract,
            comment=meta["comment"], journal_ref=meta["journal_ref"], doi=meta["doi"],
            license=meta["license"]))
    return out


# -- errors ---------------------------------------------------------------------------------------

_DESCRIPTIONS = {  # data/oai_errors.py
    "badArgument": "The request includes illegal arguments, is missing required arguments, "
                   "includes a repeated argument, or values for arguments have an illegal "
                   "syntax.",
    "badResumptionToken": "The value of the resumptionToken argument is invalid or expired.",
    "badVerb": "Value of the verb argument is not a legal OAI-PMH verb, the verb argument is "
               "missing, or the verb argument is repeated.",
    "cannotDisseminateFormat": "The metadata format identified by the value given for the "
                               "metadataPrefix argument is not supported by the item or by "
                               "the repository.",
    "idDoesNotExist": "The value of the identifier argument is unknown or illegal in this "
                      "repository.",
    "noRecordsMatch": "The combination of the values of the from, until, set and "
                      "metadataPrefix arguments results in an empty list.",
}


class OAIError(Exception):
    def __init__(self, code: str, reason: str | None = None,
                 query: Mapping[str, str] | None = None) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.query = dict(query) if query else {}


# -- XML ------------------------------------------------------------------------------------------


def _t(text: str) -> str:
    return escape(text)


def _a(text: str) -> str:
    return escape(text, {'"': "&quot;"})


def _stamp(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _envelope(now: dt.datetime, base_url: str, query: Mapping[str, str], inner: str) -> bytes:
    if "resumptionToken" in query:  # macros.xml: only verb and token then
        query = {"verb": query["verb"], "resumptionToken": query["resumptionToken"]}
    attrs = "".join(f' {k}="{_a(v)}"' for k, v in query.items())
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ '
        'http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n'
        f"  <responseDate>{_stamp(now)}</responseDate>\n"
        f"  <request{attrs}>{_t(base_url)}</request>\n"
        f"{inner}"
        "</OAI-PMH>\n"
    ).encode()


def error_xml(err: OAIError, now: dt.datetime, base_url: str) -> bytes:
    text = _DESCRIPTIONS[err.code] + (f" Reason: {err.reason}" if err.reason else "")
    return _envelope(now, base_url, err.query,
                     f'  <error code="{err.code}">{_t(text)}</error>\n')


def header_xml(r: Record, categories: Iterable[str], indent: str = "    ") -> str:
    status = ' status="deleted"' if r.deleted else ""
    sets = "".join(f"{indent}  <setSpec>{_t(set_spec(c))}</setSpec>\n" for c in categories)
    return (f"{indent}<header{status}>\n"
            f"{indent}  <identifier>{_t(r.oai_id)}</identifier>\n"
            f"{indent}  <datestamp>{r.day.isoformat()}</datestamp>\n"
            f"{sets}{indent}</header>\n")


def authors_text(authors: Iterable[str]) -> str:
    """The authors field as arXivRaw serves it, typed (arXiv/oaipmh templates/
    record_formats.xml, `<authors>{{current_meta.authors}}`): "A, B and C". The sample
    holds no affiliations, so none is served: an entry whose name carries one typed in
    parentheses (a test's) is served as it is."""
    names = list(authors)
    return names[0] if len(names) < 2 else ", ".join(names[:-1]) + " and " + names[-1]


def arxivraw_xml(r: Record) -> str:
    ind = "          "
    lines = [
        '        <arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://arxiv.org/OAI/arXivRaw/ '
        'https://oaipmh.arxiv.org/OAI/arXivRaw.xsd">',
        f"{ind}<id>{_t(r.arxiv_id)}</id>",
        f"{ind}<submitter>{_t(r.authors[0] if r.authors else 'arXiv')}</submitter>",
    ]
    for v in r.versions:
        lines += [f'{ind}<version version="v{v.number}">',
                  f"{ind}  <date>{format_datetime(v.date.astimezone(dt.UTC), usegmt=True)}"
                  "</date>",
                  f"{ind}  <size>{v.size_kb}kb</size>",
                  f"{ind}</version>"]
    lines += [f"{ind}<title>{_t(r.title)}</title>",
              f"{ind}<authors>{_t(authors_text(r.authors))}</authors>",
              f"{ind}<categories>{_t(' '.join(r.categories))}</categories>"]
    for tag, value in (("comments", r.comment), ("journal-ref", r.journal_ref),
                       ("doi", r.doi), ("license", r.license), ("abstract", r.abstract)):
        if value:
            lines.append(f"{ind}<{tag}>{_t(value)}</{tag}>")
    lines.append("        </arXivRaw>")
    return "\n".join(lines) + "\n"


def record_xml(r: Record) -> str:
    head = header_xml(r, _header_categories(r.categories), "      ")
    if r.deleted:
        return f"    <record>\n{head}    </record>\n"
    return (f"    <record>\n{head}      <metadata>\n{arxivraw_xml(r)}      </metadata>\n"
            "    </record>\n")


# -- the verbs ------------------------------------------------------------------------------------


@dataclass
class Repository:
    """What one answer needs: the records at `now`, the clock, where it is served, the page
    sizes, and the tokens issued so far (token -> expiry; the caller keeps it across calls)."""

    records: list[Record]
    now: dt.datetime
    base_url: str
    page_size: int = RECORDS_LIMIT
    ids_page_size: int = IDENTIFIERS_LIMIT
    tokens: dict[str, dt.datetime] = field(default_factory=dict)
    extra_categories: frozenset[str] = frozenset()  # categories to offer as sets

    def categories(self) -> dict[str, str]:
        """Every category the replay knows, with its name: cs's, and those in use."""
        seen = set(self.extra_categories)
        for r in self.records:
            seen.update(r.categories)
        seen.update([ALIASES[c] for c in seen if c in ALIASES])
        known = dict(CS_CATEGORIES)
        for c in sorted(seen):
            if archive_of(c) in ARCHIVE_GROUP:
                known.setdefault(c, c)
        return known


def answer(params: Mapping[str, list[str]], repo: Repository) -> bytes:
    """The body for one request (arXiv answers every OAI-PMH outcome with HTTP 200)."""
    try:
        for values in params.values():
            if len(values) > 1:
                raise OAIError("badArgument", "Duplicate parameters not allowed")
        flat = {k: v[0] for k, v in params.items()}
        verbs: dict[str, Callable[[dict[str, str], Repository], bytes]] = {
            "GetRecord": _get_record, "ListRecords": _list_records,
            "ListIdentifiers": _list_identifiers, "Identify": _identify,
            "ListMetadataFormats": _list_metadata_formats, "ListSets": _list_sets}
        verb = verbs.get(flat.get("verb", ""))
        if verb is None:
            raise OAIError("badVerb", "Invalid verb provided")
        return verb(flat, repo)
    except OAIError as err:
        return error_xml(err, repo.now, repo.base_url)


def _identify(params: dict[str, str], repo: Repository) -> bytes:
    if set(params) != {"verb"}:
        raise OAIError("badArgument", "No other parameters allowed for Identify")
    inner = (
        "  <Identify>\n"
        f"    <repositoryName>{REPOSITORY_NAME}</repositoryName>\n"
        f"    <baseURL>{_t(repo.base_url)}</baseURL>\n"
        f"    <protocolVersion>{PROTOCOL_VERSION}</protocolVersion>\n"
        f"    <adminEmail>{ADMIN_EMAIL}</adminEmail>\n"
        f"    <earliestDatestamp>{EARLIEST_DATE.date().isoformat()}</earliestDatestamp>\n"
        f"    <deletedRecord>{DELETED_RECORD}</deletedRecord>\n"
        f"    <granularity>{GRANULARITY}</granularity>\n"
        "  </Identify>\n"
    )
    return _envelope(repo.now, repo.base_url, {"verb": "Identify"}, inner)


def _paper_id(identifier: str) -> str:
    """param_processing.process_identifier: the arXiv id, without a version."""
    if not identifier.startswith(ID_PREFIX):
        raise OAIError("idDoesNotExist", f"All identifiers start with: {ID_PREFIX}")
    short = identifier[len(ID_PREFIX):]
    m = _NEW_ID.match(short) or _OLD_ID.match(short)
    if not m:
        raise OAIError("idDoesNotExist", "Invalid arXiv_id structure")
    return m.group(1)


def _find(repo: Repository, arxiv_id: str) -> Record | None:
    return next((r for r in repo.records if r.arxiv_id == arxiv_id), None)


def _list_metadata_formats(params: dict[str, str], repo: Repository) -> bytes:
    query = {"verb": "ListMetadataFormats"}
    if "identifier" in params:
        if set(params) != {"verb", "identifier"}:
            raise OAIError("badArgument", "Only identifier parameter allowed")
        arxiv_id = _paper_id(params["identifier"])
        query["identifier"] = params["identifier"]
        if _find(repo, arxiv_id) is None:
            raise OAIError("idDoesNotExist", "No paper with that ID.", query)
    elif set(params) != {"verb"}:
        raise OAIError("badArgument", "Only allowed parameters are verb, identifier")
    prefix, schema, namespace = ARXIVRAW
    inner = ("  <ListMetadataFormats>\n    <metadataFormat>\n"
             f"      <metadataPrefix>{prefix}</metadataPrefix>\n"
             f"      <schema>{schema}</schema>\n"
             f"      <metadataNamespace>{namespace}</metadataNamespace>\n"
             "    </metadataFormat>\n  </ListMetadataFormats>\n")
    return _envelope(repo.now, repo.base_url, query, inner)


def _list_sets(params: dict[str, str], repo: Repository) -> bytes:
    if "resumptionToken" in params:
        if set(params) != {"verb", "resumptionToken"}:
            raise OAIError("badArgument", "No other paramters allowed with resumptionToken")
        raise OAIError("badArgument", "Invalid token")  # arXiv never pages its sets
    if set(params) != {"verb"}:
        raise OAIError("badArgument", "No other parameters allowed")
    items: dict[str, str] = dict(GROUPS)
    for archive, group in ARCHIVE_GROUP.items():
        items.setdefault(f"{group}:{archive}", archive)
    for cat, name in repo.categories().items():
        items.setdefault(set_spec(cat), name)  # hep-th: archive and category are one set
    inner = "".join(f"    <set>\n      <setSpec>{_t(spec)}</setSpec>\n"
                    f"      <setName>{_t(name)}</setName>\n    </set>\n"
                    for spec, name in items.items())
    return _envelope(repo.now, repo.base_url, {"verb": "ListSets"},
                     f"  <ListSets>\n{inner}  </ListSets>\n")


def _get_record(params: dict[str, str], repo: Repository) -> bytes:
    if set(params) != {"verb", "identifier", "metadataPrefix"}:
        raise OAIError("badArgument", "Parameters provided did not match expected. "
                       "Expected: identifier, metadataPrefix, verb")
    query = {"verb": "GetRecord"}
    arxiv_id = _paper_id(params["identifier"])
    query["identifier"] = params["identifier"]
    if params["metadataPrefix"] != ARXIVRAW[0]:
        raise OAIError("cannotDisseminateFormat", "Did not recognize requested format", query)
    query["metadataPrefix"] = params["metadataPrefix"]
    record = _find(repo, arxiv_id)
    if record is None:
        raise OAIError("idDoesNotExist", "Nothing found for this ID", query)
    return _envelope(repo.now, repo.base_url, query,
                     f"  <GetRecord>\n{record_xml(record)}  </GetRecord>\n")


def _list_records(params: dict[str, str], repo: Repository) -> bytes:
    return _list(params, repo, just_ids=False)


def _list_identifiers(params: dict[str, str], repo: Repository) -> bytes:
    return _list(params, repo, just_ids=True)


def _token(params: Mapping[str, str], skip: int) -> str:
    """resume.ResToken.to_token."""
    fields = {k: v for k, v in params.items() if k != "resumptionToken"}
    fields["skip"] = str(skip)
    return quote(urlencode(fields))


def _from_token(token: str) -> tuple[dict[str, str], int]:
    """resume.ResToken.from_token."""
    try:
        parsed = {k: v[0] for k, v in parse_qs(unquote(token)).items()}
    except Exception as exc:  # resume.py turns any decoding failure into this error
        raise OAIError("badResumptionToken",
                       "Token decoding failed or format is invalid.") from exc
    if "verb" not in parsed or not parsed.get("skip", "").isdigit():
        raise OAIError("badResumptionToken", "Token decoding failed or format is invalid.")
    return parsed, int(parsed.pop("skip"))


def _day(value: str, name: str) -> dt.datetime:
    try:
        if not _DATE.fullmatch(value):
            raise ValueError(value)
        return dt.datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=dt.UTC)
    except ValueError as exc:
        raise OAIError("badArgument", f"{name} date format must be YYYY-MM-DD") from exc


def _set_filter(spec: str, repo: Repository) -> Callable[[Record], bool]:
    """data_queries._parse_set, then db.process_requested_subject as a predicate."""
    parts = spec.split(":")
    if len(parts) == 1:
        if spec not in GROUPS:
            raise OAIError("badArgument", "Set does not exist")
        archives = {a for a, g in ARCHIVE_GROUP.items() if g == spec}
        cats: set[str] = set()
    elif len(parts) == 2:
        group, archive = parts
        if ARCHIVE_GROUP.get(archive) != group:
            raise OAIError("badArgument", "Set does not exist")
        archives, cats = {archive}, set()
    elif len(parts) == 3:
        group, archive, sub = parts
        cat = f"{archive}.{sub}"
        if cat not in repo.categories() or ARCHIVE_GROUP.get(archive) != group:
            raise OAIError("badArgument", "Set does not exist")
        archives, cats = set(), {cat, *([ALIASES[cat]] if cat in ALIASES else [])}
    else:
        raise OAIError("badArgument", "Set has too many levels")

    def member(c: str) -> bool:
        alias = ALIASES.get(c)
        return (c in cats or archive_of(c) in archives
                or (alias is not None and archive_of(alias) in archives))

    return lambda r: any(member(c) for c in r.categories)


def _resumed(params: dict[str, str], repo: Repository, query: dict[str, str]
             ) -> tuple[dict[str, str], int]:
    """A list request's own arguments and where to start: those a resumptionToken carries
    (checked), else the request's; `query` gets the token as arXiv echoes it."""
    verb = params["verb"]
    skip = 0
    if "resumptionToken" in params:
        if set(params) != {"verb", "resumptionToken"}:
            raise OAIError("badArgument", "No other paramters allowed with resumptionToken")
        token = params["resumptionToken"]
        token_params, skip = _from_token(token)
        query["resumptionToken"] = _token(token_params, skip)
        # keyed by the canonical form: a client may send it once or twice URL-decoded
        expires = repo.tokens.get(query["resumptionToken"])
        if expires is not None and repo.now >= expires:  # modelled: arXiv advertises it
            raise OAIError("badResumptionToken", "Token has expired.", query)
        if verb != token_params["verb"]:
            raise OAIError("badResumptionToken", "token from different verb", query)
        params = token_params
    return params, skip


def _window(params: dict[str, str], repo: Repository, query: dict[str, str]
            ) -> tuple[dt.datetime, dt.datetime, Callable[[Record], bool]]:
    """A list request's arguments checked as arXiv checks them: the first and last moment
    and the set it asks for; `query` gets each as arXiv echoes it."""
    if "metadataPrefix" not in params:
        raise OAIError("badArgument", "metadataPrefix required.")
    allowed = {"verb", "metadataPrefix", "from", "until", "set"}
    if set(params) - allowed:
        raise OAIError("badArgument", "Unallowed parameter. Allowed parameters: verb, "
                       "metadataPrefix, from, until, set")
    if params["metadataPrefix"] != ARXIVRAW[0]:
        raise OAIError("cannotDisseminateFormat", "Did not recognize requested format", query)
    query["metadataPrefix"] = params["metadataPrefix"]
    start = EARLIEST_DATE
    if params.get("from"):
        start = _day(params["from"], "from")
        query["from"] = params["from"]
    end = repo.now.astimezone(dt.UTC).replace(hour=23, minute=59, second=59, microsecond=0)
    if params.get("until"):
        end = _day(params["until"], "until").replace(hour=23, minute=59, second=59)
        query["until"] = params["until"]
    in_set: Callable[[Record], bool] = lambda r: True  # noqa: E731
    if params.get("set"):
        in_set = _set_filter(params["set"], repo)
        query["set"] = params["set"]
    if start > end:
        raise OAIError("badArgument", "until date must be greater than or equal to from date")
    if start < EARLIEST_DATE:
        raise OAIError("badArgument", "start date too early")
    if end > repo.now + dt.timedelta(days=1):
        raise OAIError("badArgument", "until date too late")
    return start, end, in_set


def _list(params: dict[str, str], repo: Repository, just_ids: bool) -> bytes:
    """data_queries.list_data and fetch_list.fetch_list."""
    query: dict[str, str] = {"verb": params["verb"]}
    params, skip = _resumed(params, repo, query)
    start, end, in_set = _window(params, repo, query)
    limit = repo.ids_page_size if just_ids else repo.page_size
    chosen = sorted((r for r in repo.records if start <= r.modtime <= end and in_set(r)),
                    key=lambda r: (r.modtime, r.arxiv_id))[skip:skip + limit + 1]
    if not chosen:
        raise OAIError("noRecordsMatch", None, query)
    last = chosen[-1]  # the one past the limit, if there is one
    shown = sorted(chosen, key=lambda r: (r.day, r.oai_id))
    token_xml = "    <resumptionToken/>\n" if "resumptionToken" in query else ""
    if len(shown) > limit:
        if last.day == shown[0].day:  # all one day: skip on
            next_params, next_skip = query, skip + limit
        else:  # restart from the last day, past what of it this page shows
            next_skip = sum(1 for r in shown if r.day == last.day) - 1
            # arXiv writes the new from into the query it echoes in <request>, too
            query["from"] = last.day.isoformat()
            next_params = query
        token = _token(next_params, next_skip)
        expires = (repo.now.astimezone(dt.UTC) + dt.timedelta(days=1)).replace(
            hour=0, minute=0, second=0, microsecond=0)
        repo.tokens[token] = expires
        token_xml = (f'    <resumptionToken expirationDate="{_stamp(expires)}">{_t(token)}'
                     "</resumptionToken>\n")
        shown = [r for r in shown if r.arxiv_id != last.arxiv_id]
    if just_ids:
        body = "".join(header_xml(r, r.categories) for r in shown)
        inner = f"  <ListIdentifiers>\n{body}{token_xml}  </ListIdentifiers>\n"
    else:
        body = "".join(record_xml(r) for r in shown)
        inner = f"  <ListRecords>\n{body}{token_xml}  </ListRecords>\n"
    return _envelope(repo.now, repo.base_url, query, inner)


def amended(fields: Mapping[str, str | None]) -> dict[str, str | None]:
    """Check an amendment's fields: only metadata arXiv lets a submitter change in place."""
    unknown = set(fields) - AMENDABLE
    if unknown:
        raise TypeError(f"cannot amend {sorted(unknown)}; amendable: {sorted(AMENDABLE)}")
    return dict(fields)

