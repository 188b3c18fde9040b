"""arXiv ingestion end to end: the real `arxiv` client over HTTP to the local replay."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import time

import pyarrow.compute as pc
import pytest
from click.testing import CliRunner

from pipeline import ingest
from pipeline.cli import cli
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.sources import SOURCES
from pipeline.store import Store, StoreError, StoreLocked
from tests.support.replays import fast_arxiv

DAYS = sample.days()


def at(day: str) -> dt.datetime:
    """The simulated time of a run: after that day's announcement, once OAI-PMH has it."""
    return sample.run_at(day)


def run_on(day, replay, cfg, store, **kwargs):
    replay.as_of = at(day)
    return ingest.ingest_arxiv(cfg, store, now=replay.as_of, **kwargs)


def visible_at(when: dt.datetime) -> dict[str, sample.Entry]:
    newest: dict[str, sample.Entry] = {}
    for e in sample.entries():
        if e.announced <= when and (e.arxiv_id not in newest
                                    or e.version > newest[e.arxiv_id].version):
            newest[e.arxiv_id] = e
    return newest


@pytest.fixture
def store_after_first_day(replay, config, store):
    report = run_on(DAYS[0], replay, config, store)
    assert report.status == "ok"
    return store


def test_first_run_backfills_every_page(replay, config, store):
    cfg = fast_arxiv(config, replay.url, page_size=50, backfill_days=10)
    report = run_on(DAYS[-1], replay, cfg, store)
    expected = visible_at(at(DAYS[-1]))
    papers = store.read("papers")
    assert report.status == "ok"
    assert papers.num_rows == len(expected) == report.counts["new"]
    assert len(replay.log) == math.ceil(len(expected) / 50) == report.requests
    assert {(r["arxiv_id"], r["version"]) for r in papers.select(["arxiv_id", "version"])
            .to_pylist()} == {(e.arxiv_id, e.version) for e in expected.values()}
    # every request asks for the configured categories, newest update first
    first = replay.log[0]
    assert first["sortBy"] == ["lastUpdatedDate"] and first["sortOrder"] == ["descending"]
    assert first["search_query"][0].count("cat:cs.") == 40


def test_fields_are_recorded_as_arxiv_serves_them(store_after_first_day):
    papers = store_after_first_day.read("papers").to_pylist()
    by_id = {p["arxiv_id"]: p for p in papers}
    e = next(x for x in sample.entries() if x.version == 1)
    row = by_id[e.arxiv_id]
    assert row["title"] == e.title
    assert row["abstract"] == e.abstract
    assert row["authors"] == list(e.authors)
    assert row["categories"] == list(e.categories)
    assert row["primary_category"] == e.categories[0]
    assert row["published"] == e.published and row["updated"] == e.updated
    assert row["first_seen"] == at(DAYS[0]) == row["version_seen_at"]
    assert row["version"] == 1


@pytest.mark.slow
def test_v1_then_v2_is_one_paper_with_two_versions(replay, store_after_first_day, config):
    """The export API lists a paper by its first version's date today, so the v2 of an older
    paper comes through OAI-PMH, once arXiv's OAI-PMH has the day."""
    store = store_after_first_day
    revised = [e for e in sample.entries() if e.version == 2 and e.announced <= at(DAYS[2])
               and e.announced > at(DAYS[1])]
    run_on(DAYS[1], replay, config, store)
    assert revised, "the sample simulates revisions"
    assert run_on(DAYS[2], replay, config, store).counts["revised"] == 0
    harvested = at(DAYS[2]) + dt.timedelta(minutes=5)
    replay.as_of = harvested
    report = ingest.ingest(config, store, "oai", now=harvested)
    assert report.counts["revised"] == len(revised)
    target = revised[0]
    versions = store.read("versions").to_pylist()
    mine = [v for v in versions if v["arxiv_id"] == target.arxiv_id]
    assert [v["version"] for v in mine] == [1, 2]
    assert mine[0]["first_seen"] == at(DAYS[0]) and mine[1]["first_seen"] == harvested
    assert mine[1]["abstract"] == target.abstract != mine[0]["abstract"]
    paper = next(p for p in store.read("papers").to_pylist() if p["arxiv_id"] == target.arxiv_id)
    assert paper["version"] == 2
    assert paper["first_seen"] == at(DAYS[0])  # the ingestion clock keeps its first value
    assert paper["version_seen_at"] == harvested
    assert paper["published"] < paper["updated"] == target.updated


def test_overlap_relisting_is_unchanged_and_writes_no_snapshot(replay, store_after_first_day,
                                                                config):
    store = store_after_first_day
    snaps_before = store.snapshots()
    report = run_on(DAYS[0], replay, config, store)  # the same listing again
    assert report.counts["new"] == report.counts["revised"] == 0
    assert report.counts["unchanged"] == store.read("papers").num_rows
    assert store.snapshots() == snaps_before


@pytest.mark.slow
def test_same_responses_twice_give_identical_tables(replay, config, tmp_path):
    def one_store(name):
        store = Store(tmp_path / name)
        run_on(DAYS[0], replay, config, store)
        run_on(DAYS[2], replay, config, store)
        return store

    a = one_store("a")
    papers, versions = a.read("papers"), a.read("versions")
    bytes_before = [p.read_bytes() for p in a.table_files("papers")]
    run_on(DAYS[2], replay, config, a)
    assert a.read("papers").equals(papers) and a.read("versions").equals(versions)
    assert [p.read_bytes() for p in a.table_files("papers")] == bytes_before
    b = one_store("b")
    assert [p.read_bytes() for p in b.table_files("papers")] == bytes_before
    assert [p.read_bytes() for p in b.table_files("versions")] == [
        p.read_bytes() for p in a.table_files("versions")]


def test_paper_first_seen_at_v3_keeps_its_number(config, tmp_path):
    base = next(e for e in sample.entries() if e.version == 1)
    v3 = dataclasses.replace(base, version=3, updated=base.updated + dt.timedelta(days=30),
                             announced=base.announced + dt.timedelta(days=30))
    with ArxivReplay([v3]) as api:
        cfg = fast_arxiv(config, api.url, backfill_days=60)
        store = Store(tmp_path / "v3")
        report = ingest.ingest_arxiv(cfg, store, now=v3.announced)
    assert report.counts["new"] == 1 and report.counts["revised"] == 0
    assert [(v["arxiv_id"], v["version"]) for v in store.read("versions").to_pylist()] == [
        (base.arxiv_id, 3)]
    assert store.read("papers")["version"].to_pylist() == [3]


def test_cross_lists_are_told_apart(replay, config, store):
    cfg = fast_arxiv(config, replay.url, categories=("cs.CL",))
    report = run_on(DAYS[0], replay, cfg, store)
    shown = visible_at(at(DAYS[0])).values()
    listed = [e for e in shown if "cs.CL" in e.categories]
    assert report.counts["new"] == len(listed)
    assert report.counts["cross_listed"] == sum(e.categories[0] != "cs.CL" for e in listed) > 0
    cross = pc.sum(store.read("papers")["cross_list"]).as_py()
    assert cross == report.counts["cross_listed"]


def test_watermark_and_overlap_drive_the_next_query(replay, store_after_first_day, config):
    store = store_after_first_day
    mark = store.watermark("arxiv")
    assert mark == max(e.updated for e in visible_at(at(DAYS[0])).values())
    report = run_on(DAYS[1], replay, config, store)
    since = dt.datetime.fromisoformat(
        json.loads(store.read("runs")["details"][-1].as_py())["since"])
    assert since == mark - dt.timedelta(hours=config.sources.arxiv.overlap_hours)
    assert report.watermark_before == mark < report.watermark_after


@pytest.mark.parametrize("fault", ["503", "500", "truncate", "empty"])
def test_a_transient_fault_is_retried(replay, config, store, fault):
    replay.as_of = at(DAYS[0])
    replay.inject(None, fault)  # the second page misbehaves once
    cfg = fast_arxiv(config, replay.url, page_size=100)
    report = ingest.ingest_arxiv(cfg, store, now=replay.as_of)
    assert report.status == "ok", report.error
    assert report.retries == 1
    assert store.read("papers").num_rows == len(visible_at(at(DAYS[0])))


def test_an_empty_first_page_is_retried(replay, config, store):
    replay.inject("empty")
    report = run_on(DAYS[0], replay, config, store)
    assert report.status == "ok" and report.retries == 1
    assert store.read("papers").num_rows == len(visible_at(at(DAYS[0])))


def test_429_waits_for_retry_after(replay, config, store):
    replay.inject(Fault("429", seconds=1))
    started = time.monotonic()
    report = run_on(DAYS[0], replay, config, store)
    assert time.monotonic() - started >= 1.0
    assert report.status == "ok" and report.retries == 1


def test_a_stall_hits_the_timeout_then_retries(replay, config, store):
    # a timeout a loaded machine's answers still meet (the suite runs a worker per core)
    cfg = fast_arxiv(config, replay.url, timeout_seconds=1.0)
    replay.inject(Fault("stall", seconds=5))
    started = time.monotonic()
    report = run_on(DAYS[0], replay, cfg, store)
    assert report.status == "ok" and report.retries == 1
    assert time.monotonic() - started < 5  # we did not wait for the stalled answer


def test_delay_between_requests_is_honoured(replay, config, store):
    cfg = fast_arxiv(config, replay.url, page_size=100, delay_seconds=0.2)
    started = time.monotonic()
    report = run_on(DAYS[0], replay, cfg, store)
    assert report.requests == 3
    assert time.monotonic() - started >= 2 * 0.2


def test_persistent_failure_keeps_stored_data_and_records_it(replay, store_after_first_day,
                                                             config):
    store = store_after_first_day
    before = {n: [p.read_bytes() for p in store.table_files(n)] for n in ("papers", "versions")}
    mark = store.watermark("arxiv")
    replay.inject(*["503"] * (config.sources.arxiv.max_retries + 1))
    report = run_on(DAYS[1], replay, config, store)
    assert report.status == "failed"
    assert "HTTP 503" in report.error and "gave up after 4 retries" in report.error
    assert {n: [p.read_bytes() for p in store.table_files(n)] for n in before} == before
    last = store.runs("arxiv").iloc[-1]
    assert last["status"] == "failed" and "503" in last["error"]
    assert store.watermark("arxiv") == mark
    assert "next run resumes from" in report.line()


@pytest.mark.slow
def test_failure_mid_run_is_partial_and_the_next_run_resumes(replay, store_after_first_day,
                                                             config):
    store = store_after_first_day
    old = {p["arxiv_id"]: p for p in store.read("papers").to_pylist()}
    mark = store.watermark("arxiv")
    cfg = fast_arxiv(config, replay.url, page_size=100)
    replay.inject(None, *["503"] * (cfg.sources.arxiv.max_retries + 1))
    report = run_on(DAYS[2], replay, cfg, store)
    assert report.status == "partial"
    assert report.counts["fetched"] == 100
    assert store.watermark("arxiv") == mark  # a partial run does not move the watermark
    now = {p["arxiv_id"]: p for p in store.read("papers").to_pylist()}
    assert old.keys() <= now.keys()  # nothing stored was lost
    assert all(now[k]["first_seen"] == old[k]["first_seen"] for k in old)

    resumed = run_on(DAYS[2], replay, cfg, store)
    assert resumed.status == "ok"
    assert resumed.watermark_before == mark
    expected = visible_at(at(DAYS[2]))
    assert store.read("papers").num_rows == len(expected)
    assert store.watermark("arxiv") == max(e.updated for e in expected.values())


def test_max_pages_stops_early_as_partial(replay, config, store):
    cfg = fast_arxiv(config, replay.url, page_size=50)
    report = run_on(DAYS[0], replay, cfg, store, max_pages=2)
    assert report.status == "partial" and "--max-pages" in report.error
    assert report.counts["fetched"] == 100 and report.requests == 2


def test_total_time_is_bounded(replay, config, store):
    cfg = fast_arxiv(config, replay.url, max_run_seconds=1.0, backoff_seconds=0.4,
                     max_backoff_seconds=5, max_retries=10)
    replay.inject(*["503"] * 11)
    started = time.monotonic()
    report = run_on(DAYS[0], replay, cfg, store)
    assert time.monotonic() - started < 2.0
    assert report.status == "failed" and "max_run_seconds" in report.error


def test_corrupt_papers_file_is_reported_and_kept(replay, store_after_first_day, config):
    store = store_after_first_day
    path = store.table_files("papers")[0]
    damaged = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(damaged)
    replay.log.clear()
    with pytest.raises(StoreError) as err:
        run_on(DAYS[1], replay, config, store)
    assert str(path) in str(err.value) and "rebuild" in str(err.value)
    assert path.read_bytes() == damaged  # never silently replaced
    assert replay.log == []  # and no request was spent


@pytest.mark.slow
def test_rebuild_from_snapshots_yields_the_same_tables(replay, config, store):
    for day in DAYS:
        run_on(day, replay, config, store)
    papers, versions = store.read("papers"), store.read("versions")
    store.table_files("papers")[0].write_bytes(b"garbage")
    result = ingest.rebuild(config, store)
    assert result["papers"] == papers.num_rows
    assert store.read("papers").equals(papers)
    assert store.read("versions").equals(versions)


def test_a_second_writer_gets_a_clear_message(replay, config, store):
    with store.lock(), pytest.raises(StoreLocked) as err:
        run_on(DAYS[0], replay, config, Store(store.root))
    assert "locked by another papertrail process" in str(err.value)
    assert '"pid"' in str(err.value)


def test_a_stale_lock_is_detected_and_taken_over(replay, config, store, caplog):
    store.root.mkdir(parents=True)
    (store.root / ".lock").write_text('{"pid": 999999, "host": "gone"}')
    report = run_on(DAYS[0], replay, config, store)
    assert report.status == "ok"
    assert store.stale_lock == '{"pid": 999999, "host": "gone"}'
    assert "stale lock" in caplog.text


def test_runs_are_accounted(replay, store_after_first_day, config):
    runs = store_after_first_day.read("runs").to_pylist()
    assert len(runs) == 1
    run = runs[0]
    assert run["source"] == "arxiv" and run["status"] == "ok" and run["error"] is None
    assert run["fetched"] == run["new"] == len(visible_at(at(DAYS[0])))
    assert run["revised"] == run["unchanged"] == 0
    assert run["requests"] == 2 and run["retries"] == 0
    assert run["started"] == at(DAYS[0]) <= run["finished"]
    assert run["watermark_before"] is None
    assert run["watermark_after"] == store_after_first_day.watermark("arxiv")


# -- untrusted ids, categories, dates and text ----------------------------------------------------

T1 = at(DAYS[0])


def _entry(arxiv_id: str, **changes: object) -> sample.Entry:
    """A sample paper under another id, announced before T1 unless told otherwise."""
    base = next(e for e in sample.entries() if e.version == 1 and e.announced <= T1)
    return dataclasses.replace(base, arxiv_id=arxiv_id, **changes)


def _details(store: Store) -> dict:
    return json.loads(store.read("runs")["details"][-1].as_py())


def test_entries_with_invalid_ids_are_rejected_counted_and_not_stored(config, tmp_path):
    good = _entry("2606.00001")
    bad = ["2613.00001", "hello", "2606.123", "hep-th/0801001"]
    with ArxivReplay([good, *(_entry(i) for i in bad)]) as api:
        store = Store(tmp_path / "ids")
        report = ingest.ingest_arxiv(fast_arxiv(config, api.url), store, now=T1)
    assert report.status == "ok" and report.counts["new"] == 1
    assert store.read("papers")["arxiv_id"].to_pylist() == ["2606.00001"]
    details = _details(store)
    assert details["rejected_count"] == 4
    assert sorted(r["id"] for r in details["rejected"]) == sorted(repr(f"{i}v1") for i in bad)
    assert {r["why"] for r in details["rejected"]} == {"not an arXiv id"}


def test_an_entry_over_the_xml_text_limit_is_set_aside_and_the_rest_kept(config, tmp_path):
    # lxml refuses a text node over 10 MB unless told otherwise: one such abstract made the
    # whole page unreadable, every run.
    huge = _entry("2606.00005", abstract="x" * 11_000_000)
    with ArxivReplay([_entry("2606.00004"), huge, _entry("2606.00006")]) as api:
        store = Store(tmp_path / "huge")
        report = ingest.ingest_arxiv(fast_arxiv(config, api.url), store, now=T1)
    assert report.status == "ok" and report.counts["new"] == 2
    assert sorted(store.read("papers")["arxiv_id"].to_pylist()) == ["2606.00004", "2606.00006"]
    assert store.watermark("arxiv") is not None
    details = _details(store)
    assert details["rejected_count"] == 1
    assert details["rejected"] == [{"id": repr("2606.00005v1"),
                                    "why": "summary of 11,000,000 characters, over 100,000"}]


def test_a_mirror_that_ignores_start_makes_a_partial_run_that_says_what_it_fell_short(
        config, tmp_path):
    entries = [_entry(f"2606.{i:05d}") for i in range(1, 31)]
    with ArxivReplay(entries, ignores_start=True) as api:
        cfg = fast_arxiv(config, api.url, page_size=10)
        store = Store(cfg.store_path)
        report = ingest.ingest_arxiv(cfg, store, now=T1)
    assert report.status == "partial" and report.counts["new"] == 10
    assert "announced 30 results and sent 10" in report.error
    details = _details(store)
    assert details["shortfall_count"] == 1
    assert [(s["results"], s["got"]) for s in details["shortfall"]] == [(30, 10)]
    from pipeline import build

    build.build(cfg)  # the sources page says so, in the site's language
    page = (cfg.output_path / "sources" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('id="set-aside"'):]
    assert "服务器少发了结果" in section and "10 / 30 (" in section
    assert 'class="status-partial"' in page


def test_unknown_categories_are_kept_and_flagged_in_the_ledger(config, tmp_path):
    odd = _entry("2606.00002", categories=("cs.LG", "68T05", "I.2.7"))
    with ArxivReplay([odd, _entry("2606.00003")]) as api:
        store = Store(tmp_path / "cats")
        report = ingest.ingest_arxiv(fast_arxiv(config, api.url), store, now=T1)
    assert report.status == "ok"
    papers = {p["arxiv_id"]: p for p in store.read("papers").to_pylist()}
    assert papers["2606.00002"]["categories"] == ["cs.LG", "68T05", "I.2.7"]
    assert _details(store)["unknown_categories"] == {"68T05": 1, "I.2.7": 1}


def test_an_entry_dated_2099_neither_freezes_the_watermark_nor_the_next_run(config, tmp_path):
    future = _entry("2606.00004", updated=dt.datetime(2099, 1, 1, tzinfo=dt.UTC))
    with ArxivReplay([future, _entry("2606.00005")]) as api:
        cfg = fast_arxiv(config, api.url)
        store = Store(tmp_path / "future")
        first = ingest.ingest_arxiv(cfg, store, now=T1)
        assert first.status == "ok" and first.counts["new"] == 2
        assert store.watermark("arxiv") <= T1 + dt.timedelta(hours=1)
        assert _details(store)["anomaly_count"] == 1
        assert _details(store)["anomalies"] == [
            {"id": "2606.00004v1", "updated": "2099-01-01T00:00:00+00:00"}]

        later = T1 + dt.timedelta(hours=3)
        api.entries.append(_entry("2606.00006", updated=later - dt.timedelta(hours=1),
                                  announced=later - dt.timedelta(hours=1)))
        second = ingest.ingest_arxiv(cfg, store, now=later)
    assert second.status == "ok" and second.counts["new"] == 1
    assert "2606.00006" in store.read("papers")["arxiv_id"].to_pylist()
    assert store.watermark("arxiv") <= later + dt.timedelta(hours=1)


def test_a_stored_future_watermark_is_read_as_the_runs_clock(replay, store_after_first_day,
                                                            config):
    store = store_after_first_day
    store.append_run({"run_id": "20990101T000000Z-arxiv-000000", "source": "arxiv",
                      "started": T1, "finished": T1, "status": "ok",
                      "watermark_after": dt.datetime(2099, 1, 1, tzinfo=dt.UTC)})
    report = run_on(DAYS[2], replay, config, store)
    assert report.status == "ok"
    assert report.counts["new"] + report.counts["revised"] > 0
    assert report.watermark_before == at(DAYS[2]) + dt.timedelta(hours=1)


def test_control_characters_from_arxiv_are_removed_not_fatal(config, tmp_path):
    dirty = _entry("2606.00007", title="Robust\x01 parsing\x7f", abstract="We\x0c study\x85 it.",
                   authors=("Ann\x1b Lee", "Bo\x9f Chen"), comment="5 pages\x00")
    with ArxivReplay([dirty]) as api:
        store = Store(tmp_path / "text")
        report = ingest.ingest_arxiv(fast_arxiv(config, api.url), store, now=T1)
    assert report.status == "ok", report.error
    [paper] = store.read("papers").to_pylist()
    assert (paper["title"], paper["abstract"]) == ("Robust parsing", "We study it.")
    assert paper["authors"] == ["Ann Lee", "Bo Chen"] and paper["comment"] == "5 pages"


# -- a server that trickles -----------------------------------------------------------------------


@pytest.mark.slow
def test_a_trickling_response_ends_the_run_at_max_run_seconds(replay, store_after_first_day,
                                                             config):
    store = store_after_first_day
    before = {n: [p.read_bytes() for p in store.table_files(n)] for n in ("papers", "versions")}
    mark = store.watermark("arxiv")
    cfg = fast_arxiv(config, replay.url, max_run_seconds=2.0, timeout_seconds=30.0)
    replay.inject(Fault("trickle", seconds=0.2))
    began = time.monotonic()
    report = run_on(DAYS[1], replay, cfg, store)
    assert time.monotonic() - began < 3.0
    assert report.status == "failed"
    assert "max_run_seconds (2 s) reached while reading" in report.error
    assert {n: [p.read_bytes() for p in store.table_files(n)] for n in before} == before
    assert store.watermark("arxiv") == mark


def test_a_trickling_response_is_cut_at_the_request_timeout_and_retried(replay, config, store):
    cfg = fast_arxiv(config, replay.url, timeout_seconds=0.5)
    replay.inject(Fault("trickle", seconds=0.2))
    began = time.monotonic()
    report = run_on(DAYS[0], replay, cfg, store)
    assert time.monotonic() - began < 2.0
    assert report.status == "ok" and report.retries == 1
    assert store.read("papers").num_rows == len(visible_at(at(DAYS[0])))


@pytest.mark.slow  # builds the site
def test_the_sources_page_lists_what_a_run_set_aside(config, tmp_path):
    from pipeline import build

    hostile = ["<script>alert(1)</script>", "../../theme/templates/base"]
    entries = [_entry("2606.00006"), *(_entry(i) for i in hostile),
               _entry("2606.00007", updated=dt.datetime(2099, 1, 1, tzinfo=dt.UTC)),
               _entry("2606.00008", categories=("cs.LG", "68T05"))]
    with ArxivReplay(entries) as api:
        cfg = fast_arxiv(config, api.url)
        ingest.ingest_arxiv(cfg, Store(cfg.store_path), now=T1)
    build.build(cfg)
    page = (cfg.output_path / "sources" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('id="set-aside"'):]
    assert "未入库" in section and "日期超前" in section and "未知分类" in section
    assert "&lt;script&gt;alert(1)&lt;/script&gt;v1" in section and "<script>alert" not in page
    assert "2606.00007" in section and "2099-01-01" in section and "68T05 × 1" in section


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_source_that_raises_fails_alone_and_the_run_goes_on(name, tmp_path, replay,
                                                             hf_replay, monkeypatch):
    """However a source's catch-up breaks (upstream data no check foresaw, as a
    responseDate without a zone once did in `not_after`), `papertrail run` records that
    source failed and still runs the others, enrich, digest and the site."""
    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("can't compare offset-naive and offset-aware datetimes")

    monkeypatch.setattr(SOURCES[name], "catch_up", broken)
    path = tmp_path / "papertrail.toml"
    path.write_text(f"""
[store]
path = "data"
[sources.arxiv]
api_url = "{replay.url}"
oai_url = "{replay.base}/oai"
feed_url = "{replay.base}/rss/"
delay_seconds = 0
timeout_seconds = 2
[sources.hf]
endpoint = "{hf_replay.endpoint}"
delay_seconds = 0
""", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "run"])
    assert result.exit_code == 0, result.output
    lines = {line.split(":")[0]: line for line in result.output.splitlines() if ":" in line}
    assert lines[name].startswith(f"{name}: failed") and "raised TypeError at " in lines[name]
    assert all(not lines[other].startswith(f"{other}: failed")
               for other in SOURCES if other != name)
    assert {"enrich", "digest"} <= lines.keys()
    assert (tmp_path / "output" / "index.html").is_file()
    store = Store(tmp_path / "data")
    assert store.runs(name).iloc[-1]["status"] == "failed" and store.watermark(name) is None
