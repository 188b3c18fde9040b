"""The arXiv replay's OAI-PMH endpoint over HTTP: verbs, paging, datestamps, errors, faults.

Every answer is parsed with lxml and checked for the OAI-PMH envelope's shape; every arXivRaw
record is validated against arXiv's own schema (tests/data/arxiv-oai/arXivRaw.xsd).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.utils import format_datetime, parsedate_to_datetime
from urllib.parse import urlencode

import pytest
from lxml import etree

from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.oai import OAI_LAG, RECORDS_LIMIT, authors_text
from tests.support.replays import FIXTURES

OAI = "http://www.openarchives.org/OAI/2.0/"
RAW = "http://arxiv.org/OAI/arXivRaw/"
NS = {"o": OAI, "r": RAW}
DAYS = sample.days()
SCHEMA = etree.XMLSchema(etree.parse(str(FIXTURES / "arxiv-oai" / "arXivRaw.xsd")))
VERBS = {"Identify", "ListSets", "ListMetadataFormats", "ListRecords", "ListIdentifiers",
         "GetRecord"}


def shown(day: str, hours: float = 3) -> dt.datetime:
    """A moment `hours` after the announcement of `day`'s listing (OAI shows it after 2.5 h)."""
    return sample.announced_at(day) + dt.timedelta(hours=hours)


@dataclasses.dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def root(self) -> etree._Element:
        return etree.fromstring(self.body)

    def error(self) -> str | None:
        err = self.root.find("o:error", NS)
        return None if err is None else err.get("code")


def call(replay: ArxivReplay, post: bool = False, **params: str) -> Answer:
    data = urlencode(params)
    req = (urllib.request.Request(replay.oai_url, data=data.encode(), method="POST") if post
           else urllib.request.Request(f"{replay.oai_url}?{data}"))
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return Answer(resp.status, dict(resp.headers), resp.read())
    except urllib.error.HTTPError as exc:
        return Answer(exc.code, dict(exc.headers), exc.read())


def envelope(answer: Answer, replay: ArxivReplay) -> etree._Element:
    """The shape OAI-PMH.xsd gives the envelope: responseDate, request, then one verb
    element or errors; records of header (+ metadata unless deleted); a token last."""
    assert answer.status == 200
    assert answer.headers["Content-Type"].startswith("text/xml")
    root = answer.root
    assert root.tag == f"{{{OAI}}}OAI-PMH"
    kids = list(root)
    assert [k.tag for k in kids[:2]] == [f"{{{OAI}}}responseDate", f"{{{OAI}}}request"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", kids[0].text or "")
    assert kids[1].text == replay.oai_url
    rest = [etree.QName(k).localname for k in kids[2:]]
    assert rest == ["error"] * len(rest) or (len(rest) == 1 and rest[0] in VERBS), rest
    if rest and rest[0] == "error":
        assert rest and all(k.get("code") for k in kids[2:])
    for header in root.iter(f"{{{OAI}}}header"):
        tags = [etree.QName(k).localname for k in header]
        assert tags[:2] == ["identifier", "datestamp"] and set(tags[2:]) <= {"setSpec"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", header.findtext("o:datestamp", None, NS))
    for record in root.iter(f"{{{OAI}}}record"):
        tags = [etree.QName(k).localname for k in record]
        deleted = record.find("o:header", NS).get("status") == "deleted"
        assert tags == (["header"] if deleted else ["header", "metadata"])
    for raw in root.iter(f"{{{RAW}}}arXivRaw"):
        doc = etree.fromstring(etree.tostring(raw))
        assert SCHEMA.validate(doc), SCHEMA.error_log
    for lst in kids[2:]:
        tokens = lst.findall("o:resumptionToken", NS)
        assert len(tokens) <= 1 and (not tokens or lst[-1] is tokens[0])
    return root


def harvest(replay: ArxivReplay, verb: str = "ListRecords",
            **params: str) -> Iterator[etree._Element]:
    """Every page of one list, following the tokens."""
    answer = call(replay, verb=verb, metadataPrefix="arXivRaw", **params)
    while True:
        root = envelope(answer, replay)
        yield root
        token = root.find(f"o:{verb}/o:resumptionToken", NS)
        if token is None or not token.text:
            return
        answer = call(replay, verb=verb, resumptionToken=token.text)


def visible(now: dt.datetime) -> dict[str, list[sample.Entry]]:
    """Each paper's versions OAI-PMH shows at `now`, oldest first."""
    out: dict[str, list[sample.Entry]] = {}
    for e in sorted(sample.entries(), key=lambda e: e.version):
        if e.announced + OAI_LAG <= now:
            out.setdefault(e.arxiv_id, []).append(e)
    return out


def datestamp(versions: list[sample.Entry]) -> str:
    return (versions[-1].announced + OAI_LAG).date().isoformat()


def raw(record: etree._Element) -> dict[str, object]:
    meta = record.find("o:metadata/r:arXivRaw", NS)
    return {
        "id": meta.findtext("r:id", None, NS),
        "datestamp": record.findtext("o:header/o:datestamp", None, NS),
        "versions": [(v.get("version"), parsedate_to_datetime(v.findtext("r:date", None, NS)))
                     for v in meta.findall("r:version", NS)],
        **{etree.QName(k).localname: k.text for k in meta if etree.QName(k).localname
           not in ("id", "version")},
    }


@pytest.fixture
def oai() -> Iterator[ArxivReplay]:
    with ArxivReplay(sample.entries(), as_of=shown(DAYS[-1])) as server:
        yield server


def test_identify_says_what_arxivs_does(oai):
    root = envelope(call(oai, verb="Identify"), oai)
    ident = root.find("o:Identify", NS)
    assert {etree.QName(k).localname: k.text for k in ident} == {
        "repositoryName": "arXiv", "baseURL": oai.oai_url, "protocolVersion": "2.0",
        "adminEmail": "help@arxiv.org", "earliestDatestamp": "2005-09-16",
        "deletedRecord": "persistent", "granularity": "YYYY-MM-DD"}
    assert oai.oai_log == [{"verb": ["Identify"]}] and oai.log == []
    assert oai.oai_page_size == RECORDS_LIMIT == 2500


def test_list_sets_follow_arxivs_names(oai):
    root = envelope(call(oai, verb="ListSets"), oai)
    specs = [s.text for s in root.iterfind("o:ListSets/o:set/o:setSpec", NS)]
    assert len(specs) == len(set(specs))
    seen = {c for e in sample.entries() for c in e.categories}
    assert {"cs", "cs:cs", "math", "physics:hep-th", "stat:stat:ML", "eess:eess:SY",
            "physics:quant-ph", "math:math:NA"} <= set(specs)
    assert {f"cs:cs:{c[3:]}" for c in seen if c.startswith("cs.")} <= set(specs)
    names = {s.findtext("o:setSpec", None, NS): s.findtext("o:setName", None, NS)
             for s in root.iterfind("o:ListSets/o:set", NS)}
    assert names["cs"] == "Computer Science" and names["cs:cs:LG"] == "Machine Learning"
    assert call(oai, verb="ListSets", resumptionToken="x").error() == "badArgument"


def test_list_metadata_formats_offers_arxivraw(oai):
    root = envelope(call(oai, verb="ListMetadataFormats"), oai)
    assert [p.text for p in root.iterfind(".//o:metadataPrefix", NS)] == ["arXivRaw"]
    some = next(iter(visible(oai.as_of)))
    assert envelope(call(oai, verb="ListMetadataFormats",
                         identifier=f"oai:arXiv.org:{some}"), oai) is not None
    assert call(oai, verb="ListMetadataFormats",
                identifier="oai:arXiv.org:2606.99999").error() == "idDoesNotExist"


@pytest.mark.parametrize("verb", ["ListRecords", "ListIdentifiers"])
def test_paging_returns_every_paper_once_with_every_version(oai, verb):
    oai.oai_page_size = oai.oai_ids_page_size = 97
    expected = visible(oai.as_of)
    pages = list(harvest(oai, verb, set="cs"))
    assert len(pages) > len(expected) // 97
    got: list[str] = []
    for i, page in enumerate(pages):
        lst = page.find(f"o:{verb}", NS)
        headers = lst.findall(".//o:header", NS)
        assert 0 < len(headers) <= 97
        keys = [(h.findtext("o:datestamp", None, NS), h.findtext("o:identifier", None, NS))
                for h in headers]
        assert keys == sorted(keys)  # arXiv shows a page by (datestamp, identifier)
        got += [k[1] for k in keys]
        token = lst.find("o:resumptionToken", NS)
        if i == 0:
            assert "resumptionToken" not in page.find("o:request", NS).attrib
        if i < len(pages) - 1:  # arXiv's token: an expiry date, no cursor, no list size
            assert set(token.attrib) == {"expirationDate"} and token.text
            assert token.get("expirationDate") == "2026-06-27T00:00:00Z"
            assert set(page.find("o:request", NS).attrib) == {"verb", "resumptionToken"} \
                or i == 0
        else:  # the end of a resumed list: an empty token
            assert token is not None and not token.text and not token.attrib
        if verb == "ListRecords":
            for record in lst.iterfind("o:record", NS):
                r = raw(record)
                versions = expected[str(r["id"])]
                assert r["versions"] == [(f"v{e.version}", e.updated) for e in versions]
                assert r["title"] == versions[-1].title
                assert r["datestamp"] == datestamp(versions)
    stamps = [d.text for page in pages for d in page.iterfind(".//o:datestamp", NS)]
    assert stamps == sorted(stamps)  # pages follow each other in datestamp order
    assert sorted(got) == sorted(f"oai:arXiv.org:{i}" for i in expected)
    assert len(got) == len(set(got))
    assert len(oai.oai_log) == len(pages) and oai.log == []


def test_a_token_sent_decoded_still_works_and_still_expires(oai):
    oai.oai_page_size = 100
    first = envelope(call(oai, verb="ListRecords", metadataPrefix="arXivRaw"), oai)
    token = first.find(".//o:resumptionToken", NS).text
    naive = f"{oai.oai_url}?verb=ListRecords&resumptionToken={token}"  # not encoded again
    with urllib.request.urlopen(naive, timeout=10) as resp:
        assert etree.fromstring(resp.read()).find("o:ListRecords", NS) is not None
    oai.as_of = dt.datetime(2026, 6, 27, tzinfo=dt.UTC)
    with urllib.request.urlopen(naive, timeout=10) as resp:
        assert etree.fromstring(resp.read()).find("o:error", NS).get("code") == \
            "badResumptionToken"


def test_sets_hold_every_category_of_a_paper_and_its_aliases():
    base = sample.entries()[0]
    entries = [dataclasses.replace(base, arxiv_id="2606.00001", categories=("cs.LG",
                                                                           "stat.ML")),
               dataclasses.replace(base, arxiv_id="2606.00002", categories=("math.NA",)),
               dataclasses.replace(base, arxiv_id="2606.00003", categories=("eess.SP",))]
    with ArxivReplay(entries, as_of=shown(DAYS[-1])) as oai:

        def members(spec: str) -> list[str]:
            answer = call(oai, verb="ListIdentifiers", metadataPrefix="arXivRaw", set=spec)
            return [i.text[-5:] for i in envelope(answer, oai).iterfind(".//o:identifier", NS)]

        assert members("stat:stat:ML") == members("stat") == ["00001"]  # a cross-list
        assert members("cs") == ["00001", "00002"]  # math.NA is cs.NA's alias
        assert members("cs:cs:NA") == members("math:math:NA") == ["00002"]
        assert members("cs:cs") == ["00001", "00002"]
        assert members("eess") == ["00003"]
        root = envelope(call(oai, verb="GetRecord", identifier="oai:arXiv.org:2606.00002",
                             metadataPrefix="arXivRaw"), oai)
        assert [s.text for s in root.iterfind(".//o:setSpec", NS)] == ["math:math:NA",
                                                                        "cs:cs:NA"]


def test_one_page_has_no_token(oai):
    page = envelope(call(oai, verb="ListIdentifiers", metadataPrefix="arXivRaw"), oai)
    assert page.find("o:ListIdentifiers/o:resumptionToken", NS) is None
    assert len(page.findall(".//o:header", NS)) == len(visible(oai.as_of))


def test_from_and_until_are_inclusive_days_on_the_datestamp(oai):
    expected = visible(oai.as_of)
    stamps = {f"oai:arXiv.org:{i}": datestamp(v) for i, v in expected.items()}

    def ids(**params: str) -> dict[str, str]:
        out = {}
        for page in harvest(oai, "ListIdentifiers", **params):
            for h in page.iterfind(".//o:header", NS):
                out[h.findtext("o:identifier", None, NS)] = h.findtext("o:datestamp", None, NS)
        return out

    day = ids(**{"from": DAYS[2], "until": DAYS[2]})
    assert day == {i: s for i, s in stamps.items() if s == DAYS[2]}
    # the revised papers of the first day are in the third day's harvest
    assert any(len(expected[i.rsplit(":", 1)[1]]) == 2 for i in day)
    assert ids(**{"from": DAYS[3]}) == {i: s for i, s in stamps.items() if s >= DAYS[3]}
    assert ids(until=DAYS[1]) == {i: s for i, s in stamps.items() if s <= DAYS[1]}


def test_a_revision_shows_in_a_later_harvest_with_both_versions():
    v2 = next(e for e in sample.entries() if e.version == 2)
    v1 = next(e for e in sample.entries() if e.arxiv_id == v2.arxiv_id and e.version == 1)
    ident = f"oai:arXiv.org:{v2.arxiv_id}"
    re_day = v2.announced.date().isoformat()
    with ArxivReplay(sample.entries(), as_of=v2.announced + dt.timedelta(hours=1)) as oai:
        # announced, but not yet in OAI-PMH: the record is still the first version's
        r = raw(envelope(call(oai, verb="GetRecord", identifier=ident,
                              metadataPrefix="arXivRaw"), oai).find(".//o:record", NS))
        assert [v for v, _ in r["versions"]] == ["v1"]
        assert r["datestamp"] == (v1.announced + OAI_LAG).date().isoformat()
        assert call(oai, verb="ListRecords", metadataPrefix="arXivRaw",
                    **{"from": re_day}).error() == "noRecordsMatch"
        oai.as_of = v2.announced + OAI_LAG
        records = [rec for page in harvest(oai, **{"from": re_day})
                   for rec in page.iterfind(".//o:record", NS)]
    mine = [raw(rec) for rec in records
            if rec.findtext("o:header/o:identifier", None, NS) == ident]
    assert len(mine) == 1
    assert mine[0]["versions"] == [("v1", v1.updated), ("v2", v2.updated)]
    assert mine[0]["datestamp"] == re_day and mine[0]["abstract"] == v2.abstract
    version = records[0].find(".//r:version", NS)
    date = version.findtext("r:date", None, NS)
    assert date.endswith(" GMT") and date == format_datetime(
        parsedate_to_datetime(date), usegmt=True)
    assert re.fullmatch(r"\d+kb", version.findtext("r:size", None, NS))


def test_an_amendment_moves_the_datestamp_and_shows_the_doi(oai):
    paper = next(i for i, v in visible(shown(DAYS[0])).items() if len(v) == 1
                 and len(visible(oai.as_of)[i]) == 1)
    ident = f"oai:arXiv.org:{paper}"
    oai.amend(paper, shown(DAYS[3], 5), doi="10.1234/papertrail.1", journal_ref="J. Test 1")
    oai.amend(paper, oai.as_of + dt.timedelta(days=1), doi="10.9999/later")  # not yet

    def record() -> dict[str, object]:
        return raw(envelope(call(oai, verb="GetRecord", identifier=ident,
                                 metadataPrefix="arXivRaw"), oai).find(".//o:record", NS))

    r = record()
    assert r["doi"] == "10.1234/papertrail.1" and r["journal-ref"] == "J. Test 1"
    assert r["datestamp"] == DAYS[3]
    day = [h.findtext("o:identifier", None, NS) for page in harvest(
        oai, "ListIdentifiers", **{"from": DAYS[3], "until": DAYS[3]})
        for h in page.iterfind(".//o:header", NS)]
    assert ident in day
    first = call(oai, verb="ListIdentifiers", metadataPrefix="arXivRaw", until=DAYS[0])
    assert ident.encode() not in first.body
    oai.as_of = shown(DAYS[3], 4)  # before the amendment
    assert record()["datestamp"] == DAYS[0] and "doi" not in record()
    # the export API keeps the entry as given
    with urllib.request.urlopen(f"{oai.url}?id_list={paper}", timeout=10) as resp:
        assert b"10.1234" not in resp.read()
    with pytest.raises(TypeError):
        oai.amend(paper, oai.as_of, authors="Someone Else")


def test_a_deleted_record_answers_with_a_deleted_header(oai):
    paper = next(iter(visible(shown(DAYS[0]))))
    ident = f"oai:arXiv.org:{paper}"
    oai.delete(paper, shown(DAYS[3], 1))
    root = envelope(call(oai, verb="GetRecord", identifier=ident, metadataPrefix="arXivRaw"),
                    oai)
    header = root.find("o:GetRecord/o:record/o:header", NS)
    assert header.get("status") == "deleted"
    assert header.findtext("o:identifier", None, NS) == ident
    assert header.findtext("o:datestamp", None, NS) == DAYS[3]
    assert root.find(".//o:metadata", NS) is None
    for verb in ("ListRecords", "ListIdentifiers"):
        headers = [h for page in harvest(oai, verb, **{"from": DAYS[3]})
                   for h in page.iterfind(".//o:header", NS)
                   if h.findtext("o:identifier", None, NS) == ident]
        assert len(headers) == 1 and headers[0].get("status") == "deleted"
        assert headers[0].findall("o:setSpec", NS)
    oai.as_of = shown(DAYS[2])
    assert envelope(call(oai, verb="GetRecord", identifier=ident, metadataPrefix="arXivRaw"),
                    oai).find(".//o:header", NS).get("status") is None


def test_an_empty_list_is_no_records_match(oai):
    for params in ({"from": "2020-01-01", "until": "2020-01-31"}, {"set": "cs:cs:GL"},
                   {"set": "physics:gr-qc"}):
        answer = call(oai, verb="ListRecords", metadataPrefix="arXivRaw", **params)
        root = envelope(answer, oai)
        assert answer.error() == "noRecordsMatch" and root.find("o:ListRecords", NS) is None
        assert root.find("o:request", NS).get("metadataPrefix") == "arXivRaw"
    oai.as_of = sample.announced_at(DAYS[0]) + dt.timedelta(hours=2)  # before the lag
    assert call(oai, verb="ListIdentifiers",
                metadataPrefix="arXivRaw").error() == "noRecordsMatch"


def test_tokens_expire_at_the_next_utc_midnight(oai):
    oai.oai_page_size = 100
    first = envelope(call(oai, verb="ListRecords", metadataPrefix="arXivRaw"), oai)
    token = first.find(".//o:resumptionToken", NS)
    assert token.get("expirationDate") == "2026-06-27T00:00:00Z"
    oai.as_of = dt.datetime(2026, 6, 26, 23, 59, tzinfo=dt.UTC)
    assert call(oai, verb="ListRecords", resumptionToken=token.text).error() is None
    oai.as_of = dt.datetime(2026, 6, 27, 0, 0, tzinfo=dt.UTC)
    expired = call(oai, verb="ListRecords", resumptionToken=token.text)
    assert envelope(expired, oai) is not None and expired.error() == "badResumptionToken"
    assert expired.root.find("o:request", NS).get("resumptionToken")
    oai.as_of = shown(DAYS[-1])
    fresh = envelope(call(oai, verb="ListRecords", metadataPrefix="arXivRaw"), oai)
    token = fresh.find(".//o:resumptionToken", NS)
    for bad in ("garbage", "verb%3DListRecords", "skip%3D10"):
        assert call(oai, verb="ListRecords", resumptionToken=bad).error() == \
            "badResumptionToken"
    assert call(oai, verb="ListIdentifiers", resumptionToken=token.text).error() == \
        "badResumptionToken"  # a token of another verb


@pytest.mark.parametrize(("params", "code"), [
    ({"verb": "ListRecords"}, "badArgument"),  # no metadataPrefix
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "foo": "bar"}, "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2026-6-22"},
     "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2026-06-22T00:00:00Z"},
     "badArgument"),  # arXiv's granularity is the day
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2026-06-25",
      "until": "2026-06-24"}, "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2001-01-01"},
     "badArgument"),  # before earliestDatestamp
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "until": "2026-07-30"},
     "badArgument"),  # later than tomorrow
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "cs:cs:ZZ"},
     "badArgument"),  # no such set
    ({"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "math:cs"},
     "badArgument"),
    ({"verb": "ListRecords", "resumptionToken": "x", "metadataPrefix": "arXivRaw"},
     "badArgument"),  # a token is exclusive
    ({"verb": "Identify", "metadataPrefix": "arXivRaw"}, "badArgument"),
    ({"verb": "GetRecord", "metadataPrefix": "arXivRaw"}, "badArgument"),
    ({"verb": "ListRecords", "metadataPrefix": "oai_dc"}, "cannotDisseminateFormat"),
    ({"verb": "GetRecord", "metadataPrefix": "arXiv",
      "identifier": "oai:arXiv.org:2606.19617"}, "cannotDisseminateFormat"),
    ({"verb": "Frobnicate"}, "badVerb"),
    ({}, "badVerb"),
])
def test_bad_requests_get_oai_errors_with_http_200(oai, params, code):
    for post in (False, True):
        answer = call(oai, post=post, **params)
        root = envelope(answer, oai)
        assert answer.error() == code
        if code in ("badArgument", "badVerb"):  # arXiv echoes no attributes for these
            assert root.find("o:request", NS).attrib == {}


def test_a_repeated_argument_is_bad_argument(oai):
    url = f"{oai.oai_url}?verb=ListRecords&metadataPrefix=arXivRaw&metadataPrefix=arXivRaw"
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        body = resp.read()
    assert etree.fromstring(body).find("o:error", NS).get("code") == "badArgument"
    assert oai.oai_log[-1] == {"verb": ["ListRecords"], "metadataPrefix": ["arXivRaw"] * 2}


def test_post_answers_as_get(oai):
    get = call(oai, verb="ListIdentifiers", metadataPrefix="arXivRaw", until=DAYS[0])
    post = call(oai, post=True, verb="ListIdentifiers", metadataPrefix="arXivRaw",
                until=DAYS[0])
    assert get.body == post.body and get.error() is None


def test_get_record_and_id_does_not_exist(oai):
    paper, versions = next(iter(visible(oai.as_of).items()))
    for ident in (f"oai:arXiv.org:{paper}", f"oai:arXiv.org:{paper}v1"):
        root = envelope(call(oai, verb="GetRecord", identifier=ident,
                             metadataPrefix="arXivRaw"), oai)
        r = raw(root.find("o:GetRecord/o:record", NS))
        assert r["id"] == paper and r["title"] == versions[-1].title
        assert r["categories"] == " ".join(versions[-1].categories)
        assert r["submitter"] == versions[-1].authors[0]
    for ident in ("oai:arXiv.org:2606.99999", f"arXiv:{paper}", "oai:arXiv.org:not-an-id"):
        answer = call(oai, verb="GetRecord", identifier=ident, metadataPrefix="arXivRaw")
        envelope(answer, oai)
        assert answer.error() == "idDoesNotExist"
    unknown = call(oai, verb="GetRecord", identifier="oai:arXiv.org:2606.99999",
                   metadataPrefix="arXivRaw")
    assert unknown.root.find("o:request", NS).attrib == {
        "verb": "GetRecord", "identifier": "oai:arXiv.org:2606.99999",
        "metadataPrefix": "arXivRaw"}
    # announced later than the replay's clock: not there yet
    late = next(i for i in visible(oai.as_of) if i not in visible(shown(DAYS[0])))
    oai.as_of = shown(DAYS[0])
    assert call(oai, verb="GetRecord", identifier=f"oai:arXiv.org:{late}",
                metadataPrefix="arXivRaw").error() == "idDoesNotExist"


def test_hostile_text_is_escaped_and_round_trips():
    base = sample.entries()[0]
    title = 'A <b>bold</b> & "quoted" \'title\' ]]> &amp; </title><x>'
    evil = dataclasses.replace(base, arxiv_id="2606.00001", title=title,
                               authors=("Ann <Admin> & Co", "Bob \"B\" O'Neil"),
                               comment="<!-- 5 pages --> & <script>",
                               abstract="x < y && y > z]]>")
    with ArxivReplay([evil], as_of=shown(DAYS[-1])) as oai:
        oai.amend("2606.00001", shown(DAYS[-1], 1), doi="10.1/<a&b>")
        for answer in (call(oai, verb="GetRecord", identifier="oai:arXiv.org:2606.00001",
                            metadataPrefix="arXivRaw"),
                       call(oai, verb="ListRecords", metadataPrefix="arXivRaw")):
            r = raw(envelope(answer, oai).find(".//o:record", NS))
            assert r["title"] == title and r["comments"] == evil.comment
            assert r["abstract"] == evil.abstract and r["doi"] == "10.1/<a&b>"
            assert r["authors"] == authors_text(evil.authors)
            assert r["authors"].startswith("Ann <Admin> & Co") and \
                r["authors"].endswith(" and Bob \"B\" O'Neil")


def test_faults_apply_to_oai(oai):
    oai.inject(Fault("503", seconds=7), Fault("503"), Fault("429", seconds=3), "truncate")
    busy = call(oai, verb="Identify")
    assert busy.status == 503 and busy.headers["Retry-After"] == "7"
    assert busy.body == b"<html><body>\n<h1>Retry after 7 seconds</h1>\n</body></html>\n"
    recorded = (FIXTURES / "arxiv-oai" / "retry_after.html").read_bytes()
    assert busy.body == recorded.replace(b" 1 ", b" 7 ")  # arXiv's page, with our number
    plain = call(oai, verb="Identify")
    assert plain.status == 503 and "Retry-After" not in plain.headers
    limited = call(oai, verb="Identify")
    assert limited.status == 429 and limited.headers["Retry-After"] == "3"
    cut = call(oai, verb="Identify")
    assert cut.status == 200
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(cut.body)
    assert envelope(call(oai, verb="Identify"), oai) is not None
    assert len(oai.oai_log) == 5 and oai.log == []


def test_stall_trickle_and_empty_work_on_oai(oai):
    oai.inject(Fault("stall", seconds=0.2), Fault("trickle", seconds=0.0001), "empty")
    started = dt.datetime.now(dt.UTC)
    stalled = call(oai, verb="Identify")
    assert (dt.datetime.now(dt.UTC) - started).total_seconds() >= 0.2
    assert envelope(stalled, oai) is not None
    assert envelope(call(oai, verb="Identify"), oai).find("o:Identify", NS) is not None
    empty = envelope(call(oai, verb="ListIdentifiers", metadataPrefix="arXivRaw",
                          until=DAYS[0]), oai)
    assert empty.find("o:ListIdentifiers", NS) is not None
    assert empty.find(".//o:header", NS) is None


def test_the_authors_field_is_the_samples_names_and_invents_no_affiliation():
    # arXiv's "A, B and C"; the sample holds no affiliation, so none is served
    entries = sample.entries()[:60]
    said = [authors_text(e.authors) for e in entries]
    assert said[0] == ", ".join(entries[0].authors[:-1]) + " and " + entries[0].authors[-1]
    assert [t for t in said if "(" in t] == [
        t for t, e in zip(said, entries, strict=True) if any("(" in a for a in e.authors)]
