"""The OAI-PMH source against the replay of arXiv's OAI-PMH (pipeline/replay/oai.py): the
revisions and metadata changes the export API no longer finds, a long outage caught up
in one run, and arXiv's flow control, errors and deletions."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
import time
from collections.abc import Callable

import pyarrow.compute as pc
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipeline import ingest
from pipeline.config import Config
from pipeline.derive.readings import readings
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.oai import OAI_LAG, Record, Version, record_xml
from pipeline.replay.sample import Entry
from pipeline.report import RunReport
from pipeline.sources.oai import EMPTY_PAGES, sets_for, split_authors
from pipeline.store import Store
from tests.support.replays import fast_arxiv

DAYS = sample.days()
T1 = sample.announced_at(DAYS[0]) + dt.timedelta(hours=1)
# Past the first simulated revisions (day 3 re-announces every 20th paper of day 1 as v2),
# once OAI-PMH shows them.
T3 = sample.announced_at(DAYS[2]) + OAI_LAG + dt.timedelta(minutes=5)


def _run(cfg: Config, replay: ArxivReplay, source: str, now: dt.datetime) -> RunReport:
    replay.as_of = now
    return ingest.ingest(cfg, Store(cfg.store_path), source, now=now)


def test_revisions_of_papers_older_than_the_window_arrive_with_their_text(config, replay):
    assert _run(config, replay, "arxiv", T1).status == "ok"
    before = len(replay.log)
    report = _run(config, replay, "oai", T3)
    assert report.status == "ok" and len(replay.log) == before  # no export API request
    revised = {e.arxiv_id: e for e in sample.entries()
               if e.version == 2 and e.announced + OAI_LAG <= T3}
    assert revised and report.counts["revised"] >= len(revised)
    store = Store(config.store_path)
    versions = store.read("versions").to_pandas().set_index(["arxiv_id", "version"])
    for arxiv_id, entry in revised.items():
        assert versions.loc[(arxiv_id, 2), "title"] == " ".join(entry.title.split())
    papers = store.read("papers").to_pandas().set_index("arxiv_id")
    assert (papers.loc[list(revised), "version"] == 2).all()
    assert store.snapshots("oai") and not store.check()


def test_a_doi_added_without_a_new_version_is_stored_as_a_reading(config, replay):
    _run(config, replay, "arxiv", T1)
    _run(config, replay, "oai", T1 + OAI_LAG)
    store = Store(config.store_path)
    paper = next(p for p in store.read("papers").to_pylist() if not p["doi"])
    replay.amend(paper["arxiv_id"], T1 + dt.timedelta(days=1), doi="10.1145/3600000.1",
                 journal_ref="Proc. ACM 1 (2026) 1-20")
    snapshots = len(store.snapshots("oai"))
    report = _run(config, replay, "oai", T1 + dt.timedelta(days=1, hours=1))
    assert report.status == "ok" and len(store.snapshots("oai")) == snapshots + 1
    row = store.read("papers").filter(pc.equal(pc.field("arxiv_id"), paper["arxiv_id"]))
    assert row["doi"].to_pylist() == ["10.1145/3600000.1"]
    assert row["version"].to_pylist() == [paper["version"]]  # no new version
    said = readings(store, [paper["arxiv_id"]])[paper["arxiv_id"]]
    assert said[0].doi is None and said[-1].doi == "10.1145/3600000.1"
    assert said[-1].journal_ref == "Proc. ACM 1 (2026) 1-20"


def test_a_harvest_that_finds_nothing_is_ok_and_moves_on(config, replay):
    first = _run(config, replay, "oai", T1 + OAI_LAG)
    assert first.status == "ok" and first.counts["fetched"] > 0
    again = _run(config, replay, "oai", T1 + OAI_LAG + dt.timedelta(minutes=10))
    assert again.status == "ok" and again.counts["new"] == again.counts["revised"] == 0
    assert len(Store(config.store_path).snapshots("oai")) == 1


def _synthetic(n: int, start: dt.datetime, days: int) -> list[Entry]:
    """`n` new cs.LG papers announced evenly over `days` days."""
    step = dt.timedelta(days=days) / n
    return [Entry(f"2603.{i + 1:05d}", 1, f"Paper {i}", f"Abstract of paper {i}.", ("A. Author",),
                  ("cs.LG",), None, None, None, start + i * step, start + i * step,
                  start + i * step) for i in range(n)]


@pytest.mark.slow
def test_a_106_day_outage_is_caught_up_in_one_run_without_the_api(base_config):
    start = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    entries = _synthetic(12_500, start, 106)
    with ArxivReplay(entries) as replay:
        cfg = fast_arxiv(base_config, replay.url, categories=("cs.LG",), backfill_days=1)
        assert _run(cfg, replay, "oai", start).status == "ok"  # before the outage
        began = time.monotonic()
        report = _run(cfg, replay, "oai", start + dt.timedelta(days=107))
        took = time.monotonic() - began
        assert report.status == "ok" and report.counts["new"] == 12_500
        assert Store(cfg.store_path).rows("papers") == 12_500 and replay.log == []
        pages = -(-12_500 // replay.oai_page_size)
        assert report.requests == pages and all(q.get("set") == ["cs:cs:LG"] or
                                                "resumptionToken" in q for q in replay.oai_log)
        print(f"12,500 records in {report.requests} requests, {took:.1f} s")


def test_flow_control_503_is_waited_out(config, replay):
    replay.inject(Fault("503", seconds=1))
    began = time.monotonic()
    report = _run(config, replay, "oai", T1 + OAI_LAG)
    assert report.status == "ok" and report.retries == 1 and time.monotonic() - began >= 1


def test_a_body_that_is_not_oai_pmh_fails_the_run_and_keeps_the_watermark(config, replay):
    assert _run(config, replay, "oai", T1 + OAI_LAG).status == "ok"
    store = Store(config.store_path)
    mark, papers = store.watermark("oai"), store.read("papers")
    replay.inject(*[Fault("truncate")] * 5)
    report = _run(config, replay, "oai", T3)
    assert report.status == "failed" and "malformed XML" in report.error
    assert store.watermark("oai") == mark and store.read("papers").equals(papers)


def test_a_deleted_record_is_counted_and_nothing_is_removed(config, replay):
    _run(config, replay, "oai", T1 + OAI_LAG)
    store = Store(config.store_path)
    gone = store.read("papers")["arxiv_id"][0].as_py()
    replay.delete(gone, T1 + dt.timedelta(days=1))
    report = _run(config, replay, "oai", T1 + dt.timedelta(days=1, hours=1))
    assert report.status == "ok"
    assert store.runs("oai").iloc[-1]["details"].count('"deleted": 1') == 1
    assert gone in store.read("papers")["arxiv_id"].to_pylist()


def test_a_resumption_token_that_expires_mid_harvest_is_resumed_by_the_next_run(config,
                                                                                replay):
    late = dt.datetime.combine(T1.date(), dt.time(23, 59), dt.UTC)
    replay.oai_page_size = 50
    replay.inject(None, Fault("stall", seconds=0.6))  # the second page waits

    def midnight_passes() -> None:
        time.sleep(0.3)
        replay.as_of = late + dt.timedelta(minutes=2)

    ticker = threading.Thread(target=midnight_passes)
    replay.as_of = late
    ticker.start()
    cut = ingest.ingest(config, Store(config.store_path), "oai", now=late)
    ticker.join()
    assert cut.status == "partial" and "badResumptionToken" in cut.error
    assert Store(config.store_path).watermark("oai") is None
    done = _run(config, replay, "oai", late + dt.timedelta(minutes=5))
    assert done.status == "ok"
    visible = {e.arxiv_id for e in sample.entries() if e.announced + OAI_LAG <= replay.as_of}
    assert Store(config.store_path).rows("papers") == len(visible)


@pytest.mark.parametrize(("categories", "sets"), [
    (("cs.RO",), ["cs:cs:RO"]),
    (("cs.RO", "stat.ML"), ["cs:cs:RO", "stat:stat:ML"]),
])
def test_categories_are_read_as_arxivs_sets(categories, sets):
    assert sets_for(categories) == sets


def test_all_of_cs_is_one_set(base_config):
    assert sets_for(base_config.sources.arxiv.categories) == ["cs"]


def test_every_request_to_arxiv_says_who_sends_it_and_what_it_accepts(config, replay):
    cfg = dataclasses.replace(config, sources=dataclasses.replace(
        config.sources, arxiv=dataclasses.replace(config.sources.arxiv,
                                                  contact="owner@example.org")))
    _run(cfg, replay, "arxiv", T1)
    _run(cfg, replay, "oai", T1 + OAI_LAG)
    assert replay.headers and all("owner@example.org" in h["User-Agent"] and h["Accept"]
                                  for h in replay.headers)


def test_a_wave_of_429s_ends_the_run_bounded_and_the_next_run_resumes(config, replay):
    retries = config.sources.arxiv.max_retries
    replay.inject(*[Fault("429")] * (retries + 1))  # "Rate exceeded", no Retry-After
    first = _run(config, replay, "oai", T1 + OAI_LAG)
    assert first.status == "failed" and "HTTP 429" in first.error
    assert first.requests == retries + 1  # backoff between them, never a tight loop
    store = Store(config.store_path)
    assert store.watermark("oai") is None and store.rows("papers") == 0
    again = _run(config, replay, "oai", T1 + OAI_LAG + dt.timedelta(hours=1))
    assert again.status == "ok" and store.rows("papers") == again.counts["new"] > 0


def test_what_arxivraw_adds_is_kept_and_a_typed_affiliation_splits_no_name(base_config):
    # A paper first read over OAI-PMH whose authors' field carries an affiliation with
    # commas, as a submitter types it ("Ann Lee (MIT, Cambridge, USA)"): no name of it.
    # The sample has no affiliation (the replay invents none); this one entry is given one.
    first = sample.entries()[0]
    typed = ("Ann Lee (MIT, Cambridge, USA)", *first.authors[1:])
    rest = [e for e in sample.entries() if e.arxiv_id != first.arxiv_id]
    with ArxivReplay([dataclasses.replace(e, authors=typed) if e.arxiv_id == first.arxiv_id
                      else e for e in sample.entries()]) as replay:
        config = fast_arxiv(base_config, replay.url)
        assert _run(config, replay, "oai", T1 + OAI_LAG).status == "ok"
        store = Store(config.store_path)
        papers = {p["arxiv_id"]: p for p in store.library().to_pylist()}
        entries = {e.arxiv_id: e for e in rest if e.arxiv_id in papers}
        assert all(papers[i]["authors"] == list(entries[i].authors) for i in entries)
        assert papers[first.arxiv_id]["authors"] == ["Ann Lee", *first.authors[1:]]
        assert papers[first.arxiv_id]["affiliations"] == ["MIT, Cambridge, USA"]
        assert [p["arxiv_id"] for p in papers.values() if p["affiliations"]] == [first.arxiv_id]
        assert all(p["license"] and p["license"].startswith("http") for p in papers.values())
        assert all(len(p["version_sizes_kb"]) == len(p["version_dates"]) == p["version"]
                   for p in papers.values())
        # a second DOI in the field: both kept, in order
        some = next(iter(entries))
        replay.amend(some, T1 + dt.timedelta(days=1), doi="10.1/a 10.2/b")
        _run(config, replay, "oai", T1 + dt.timedelta(days=1, hours=1))
        row = next(p for p in Store(config.store_path).library().to_pylist()
                   if p["arxiv_id"] == some)
        assert row["dois"] == ["10.1/a", "10.2/b"]
        assert not store.check()


@pytest.mark.parametrize(("field", "names", "affiliations"), [
    ("Ann Lee (MIT, Cambridge, USA), Bo Chen and Cy Dee", ["Ann Lee", "Bo Chen", "Cy Dee"],
     ["MIT, Cambridge, USA", None, None]),
    ("A. Smith (1), B. Jones (1, 2) ((1) MIT, (2) CMU)", ["A. Smith", "B. Jones"],
     ["MIT", "MIT; CMU"]),
    ("Ann Lee, Bo Chen, and Cy Dee", ["Ann Lee", "Bo Chen", "Cy Dee"], [None, None, None]),
    ("X Y and Z W (ETH Zurich)", ["X Y", "Z W"], [None, "ETH Zurich"]),
    ("", [], []),
])
def test_arxivs_authors_field_splits_into_names_and_affiliations(field, names, affiliations):
    assert split_authors(field) == (names, affiliations)


@pytest.mark.parametrize(("abstract", "kept"), [
    ("We study\x0c it.", "We study it."),  # a raw U+000C: dropped, the record kept
    ("x" * 11_000_000, None),  # past lxml's 10 MB per text node: the record set aside
], ids=["form-feed", "11-MB-abstract"])
def test_one_hostile_record_costs_itself_at_most_and_the_harvest_goes_on(base_config, abstract,
                                                                        kept):
    entries = sample.entries()
    bad = entries[0]
    with ArxivReplay([dataclasses.replace(bad, abstract=abstract), *entries[1:]]) as replay:
        replay.oai_page_size = 20  # the bad record's page, then many more
        cfg = fast_arxiv(base_config, replay.url)
        report = _run(cfg, replay, "oai", T1 + OAI_LAG)
        store = Store(cfg.store_path)
        assert report.status == "ok" and report.requests > 2
        assert store.watermark("oai") is not None
        visible = {e.arxiv_id for e in entries if e.announced + OAI_LAG <= T1 + OAI_LAG}
        held = set(store.read("papers")["arxiv_id"].to_pylist())
        details = json.loads(store.runs("oai").iloc[-1]["details"])
        if kept is None:
            assert held == visible - {bad.arxiv_id}
            assert details["rejected"] == [{"id": repr(bad.arxiv_id),
                                            "why": "abstract of 11,000,000 characters, "
                                                   "over 100,000"}]
        else:
            assert held == visible and details["rejected_count"] == 0
            paper = store.read("papers").filter(pc.equal(pc.field("arxiv_id"), bad.arxiv_id))
            assert paper["abstract"].to_pylist() == [kept]


# -- a hostile OAI-PMH server: what arXiv's never answers, which the harvest must survive ----

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
NOW = dt.datetime(2026, 6, 22, 3, tzinfo=dt.UTC)
OK_DATE = dt.datetime(2026, 6, 20, 12, tzinfo=dt.UTC)


def _record(arxiv_id: str, *versions: tuple[int, dt.datetime]) -> str:
    """An arXivRaw record as the replay writes arXiv's (pipeline/replay/oai.py)."""
    return record_xml(Record(arxiv_id, NOW - dt.timedelta(hours=1), ("cs.LG",),
                             versions=tuple(Version(n, d, 100) for n, d in versions),
                             title=f"Paper {arxiv_id}", authors=("A. Author",),
                             abstract="An abstract."))


def _answer(records: str = "", *, token: str | None = None, error: str | None = None,
            date: str = "2026-06-22T03:00:00Z") -> bytes:
    inner = (f'  <error code="{error}">no records</error>\n' if error else
             f"  <ListRecords>\n{records}"
             f"    <resumptionToken>{token or ''}</resumptionToken>\n  </ListRecords>\n")
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="{OAI_NS}">\n'
            f"  <responseDate>{date}</responseDate>\n  <request>x</request>\n{inner}"
            "</OAI-PMH>\n").encode()


def _hostile(httpserver: HTTPServer, base_config: Config,
             answer: Callable[[int], bytes]) -> tuple[Config, list[dict[str, str]]]:
    """A config whose OAI-PMH is `answer(n)` for its n-th request (from 0); the queries."""
    asked: list[dict[str, str]] = []

    def handle(request: Request) -> Response:
        asked.append(dict(request.args))
        return Response(answer(len(asked) - 1), content_type="text/xml")

    httpserver.expect_request("/oai").respond_with_handler(handle)
    return fast_arxiv(base_config, httpserver.url_for("/api/query"), categories=("cs.LG",),
                      max_run_seconds=5), asked


@pytest.mark.parametrize(("said", "mark"), [
    ("2026-06-22T03:00:00", NOW),  # no zone: OAI-PMH's dates are UTC
    ("2026-06-22", dt.datetime(2026, 6, 22, tzinfo=dt.UTC)),  # a bare day: its start
])
def test_a_response_date_without_a_zone_is_read_as_utc(httpserver, base_config, said, mark):
    cfg, _ = _hostile(httpserver, base_config,
                      lambda n: _answer(_record("2606.00001", (1, OK_DATE)), date=said))
    report = ingest.ingest(cfg, Store(cfg.store_path), "oai", now=NOW)
    assert report.status == "ok" and report.counts["new"] == 1
    assert Store(cfg.store_path).watermark("oai") == mark


def test_no_records_match_to_a_resumption_token_is_a_failure_not_the_end(httpserver,
                                                                          base_config):
    cfg, asked = _hostile(httpserver, base_config, lambda n: _answer(
        _record("2606.00001", (1, OK_DATE)), token="t1") if n == 0
        else _answer(error="noRecordsMatch"))
    report = ingest.ingest(cfg, Store(cfg.store_path), "oai", now=NOW)
    assert report.status == "partial" and "noRecordsMatch" in report.error
    assert asked[1] == {"verb": "ListRecords", "resumptionToken": "t1"}
    store = Store(cfg.store_path)
    assert store.watermark("oai") is None  # the unread rest is read again next run
    assert store.read("papers")["arxiv_id"].to_pylist() == ["2606.00001"]  # what came, kept


@pytest.mark.parametrize(("token", "why", "requests"), [
    (lambda n: "same", "came again", 2),  # a token that repeats
    (lambda n: f"t{n}", f"{EMPTY_PAGES} pages in a row without a record", EMPTY_PAGES),
])
def test_a_list_that_never_ends_is_stopped_after_a_few_requests(httpserver, base_config,
                                                                 token, why, requests):
    first = _record("2606.00001", (1, OK_DATE))
    cfg, asked = _hostile(httpserver, base_config, lambda n: _answer(
        first if n == 0 and requests == 2 else "", token=token(n)))
    report = ingest.ingest(cfg, Store(cfg.store_path), "oai", now=NOW)
    assert report.status in ("partial", "failed") and why in report.error
    assert len(asked) == report.requests == requests  # never until max_run_seconds
    assert Store(cfg.store_path).watermark("oai") is None


def test_versions_are_checked_and_a_bad_record_is_set_aside(httpserver, base_config):
    later = OK_DATE + dt.timedelta(days=1)
    records = "".join([
        _record("2606.00001", (1, OK_DATE), (2, later)),  # kept
        _record("2606.00002", (0, OK_DATE)),  # v0
        _record("2606.00003", (1, OK_DATE), (9999, later)),  # a gap in the numbering
        _record("2606.00004", (1, OK_DATE), (2, dt.datetime(2100, 1, 1, tzinfo=dt.UTC))),
        _record("2606.00005", (1, later), (2, OK_DATE)),  # v2 before v1: kept, named
        _record("2606.00006", (1, OK_DATE), (1, later)),  # v1 twice
    ])
    cfg, _ = _hostile(httpserver, base_config, lambda n: _answer(records))
    report = ingest.ingest(cfg, Store(cfg.store_path), "oai", now=NOW)
    assert report.status == "ok" and report.counts["new"] == 2
    store = Store(cfg.store_path)
    papers = {p["arxiv_id"]: p["version"] for p in store.read("papers").to_pylist()}
    assert papers == {"2606.00001": 2, "2606.00005": 2}
    details = json.loads(store.runs("oai").iloc[-1]["details"])
    why = {r["id"].strip("'"): r["why"] for r in details["rejected"]}
    assert why == {
        "2606.00002": "versions v0 are not numbered v1 to v1",
        "2606.00003": "versions v1, v9999 are not numbered v1 to v2",
        "2606.00004": "v2 dated 2100-01-01 00:00 UTC, after the run's clock",
        "2606.00006": "versions v1, v1 are not numbered v1 to v2",
    }
    assert details["anomalies"] == [{"id": "2606.00005",
                                     "v2_dated_before_v1": OK_DATE.isoformat()}]
