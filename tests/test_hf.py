"""Hugging Face daily papers against the local HF replay (and the arXiv replay for joins)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import json
import time
from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer

from pipeline import ingest
from pipeline.config import Config
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.hf import HFReplay, file_days
from pipeline.sources import hf
from pipeline.store import Store
from tests.support.replays import FIXTURES, fast_hf

HF_DIR = FIXTURES / "hf"
FETCHED = dt.datetime(2026, 6, 27, tzinfo=dt.UTC)


def _day(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


def _at(day: str, hour: int = 23) -> dt.datetime:
    return dt.datetime.combine(_day(day), dt.time(hour), dt.UTC)


def _only_days(cfg: Config, **changes: object) -> Config:
    return dataclasses.replace(cfg, sources=dataclasses.replace(
        cfg.sources, hf=dataclasses.replace(cfg.sources.hf, **changes)))


@pytest.fixture
def fixture_replay() -> Iterator[HFReplay]:
    """The HF replay over the shared fixture files of both shapes (2024 raw and today's)."""
    with HFReplay(file_days(sorted(HF_DIR.glob("hf_daily_papers_*.json")))) as server:
        yield server


# -- parsing both shapes --------------------------------------------------------------------------


def test_todays_shape_keeps_the_signals_that_sit_inside_paper(fixture_replay: HFReplay,
                                                              base_config: Config) -> None:
    cfg = fast_hf(base_config, fixture_replay.endpoint).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2026-08-21")], FETCHED)
    assert fetch.error is None and len(fetch.rows) == 17
    row = next(r for r in fetch.rows if r["arxiv_id"] == "2608.19880")
    assert row["upvotes"] == 163 and row["github_stars"] == 8 and row["num_comments"] == 1
    assert row["github_repo"] == "https://github.com/google-research/envharness"
    assert row["project_page"] == "https://envharness.com/"
    assert "LLM agents" in row["ai_keywords"]
    assert row["ai_summary"].startswith("EnvHarness and EnvRigger")
    assert row["organization"] == "Google"
    assert row["submitted_on_daily_at"] == dt.datetime(2026, 8, 21, tzinfo=dt.UTC)
    assert row["hf_day"] == _day("2026-08-21")
    assert fetch.table().num_rows == 17  # conforms to HF_SNAPSHOT


def test_2024_raw_shape_parses_with_top_level_fallbacks(fixture_replay: HFReplay,
                                                        base_config: Config) -> None:
    cfg = fast_hf(base_config, fixture_replay.endpoint).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2024-04-04")], FETCHED)
    assert fetch.error is None and len(fetch.rows) == 8
    row = next(r for r in fetch.rows if r["arxiv_id"] == "2404.02258")
    assert row["upvotes"] == 33
    assert row["num_comments"] == 0  # only at the top level in this shape
    assert row["github_repo"] is None and row["ai_keywords"] is None
    assert row["title"] == ("Mixture-of-Depths: Dynamically allocating compute in "
                            "transformer-based language models")
    assert row["submitted_on_daily_at"] == dt.datetime(2024, 4, 4, 4, 18, 46, 165000,
                                                       tzinfo=dt.UTC)


def test_items_without_a_usable_arxiv_id_are_skipped_not_fatal(base_config: Config) -> None:
    good = json.loads(sample.hf_daily("2026-06-22"))[0]
    items = [good, {"paper": {"id": "<script>"}}, {"title": "no paper"}, "junk", None]
    with HFReplay({"2026-06-22": json.dumps(items).encode()}) as server:
        fetch = hf.fetch_days(fast_hf(base_config, server.endpoint).sources.hf,
                              [_day("2026-06-22")], FETCHED)
    assert fetch.error is None
    assert [r["arxiv_id"] for r in fetch.rows] == [good["paper"]["id"]]
    assert fetch.findings.rejected == [
        {"id": "'<script>'", "why": "paper id is not an arXiv id"},
        {"id": repr({"title": "no paper"}), "why": "not an item with a paper object"},
        {"id": "'junk'", "why": "not an item with a paper object"},
        {"id": "None", "why": "not an item with a paper object"}]


def test_paging_reads_every_item_once(hf_replay: HFReplay, base_config: Config) -> None:
    cfg = fast_hf(base_config, hf_replay.endpoint, page_size=5).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2026-06-23")], FETCHED)
    expected = [it["paper"]["id"] for it in json.loads(sample.hf_daily("2026-06-23"))]
    assert [r["arxiv_id"] for r in fetch.rows] == expected
    assert fetch.stats.requests == len(expected) // 5 + 1
    assert [q["p"] for q in hf_replay.log][:3] == ["0", "1", "2"]


# -- faults ---------------------------------------------------------------------------------------


def test_a_404_day_is_nothing_that_day_not_a_failure(hf_replay: HFReplay,
                                                      base_config: Config) -> None:
    cfg = fast_hf(base_config, hf_replay.endpoint).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2026-06-21"), _day("2026-06-22")], FETCHED)
    assert fetch.error is None
    assert fetch.days == {"2026-06-21": 0, "2026-06-22": 9}
    assert fetch.last_day == _day("2026-06-22")


def test_an_injected_404_on_a_sample_day_also_reads_as_empty(hf_replay: HFReplay,
                                                               base_config: Config) -> None:
    hf_replay.inject("404")
    cfg = fast_hf(base_config, hf_replay.endpoint).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2026-06-22")], FETCHED)
    assert fetch.error is None and fetch.rows == [] and fetch.stats.retries == 0


def test_429_then_success_waits_for_retry_after(hf_replay: HFReplay,
                                                base_config: Config) -> None:
    hf_replay.inject(Fault("429", seconds=1))
    cfg = fast_hf(base_config, hf_replay.endpoint).sources.hf  # backoff alone: 0.01 s
    began = time.monotonic()
    fetch = hf.fetch_days(cfg, [_day("2026-06-22")], FETCHED)
    assert time.monotonic() - began >= 1.0
    assert fetch.error is None and len(fetch.rows) == 9
    assert fetch.stats.retries == 1 and fetch.stats.requests == 2


def test_500s_are_retried_then_give_up_with_the_reason(hf_replay: HFReplay,
                                                       base_config: Config) -> None:
    hf_replay.inject("500", "500", "500")
    cfg = fast_hf(base_config, hf_replay.endpoint, max_retries=2).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2026-06-22")], FETCHED)
    assert fetch.error is not None and "HTTP 500" in fetch.error
    assert "gave up after 2 retries" in fetch.error
    assert fetch.stats.requests == 3 and fetch.last_day is None


def test_a_stall_times_out(hf_replay: HFReplay, base_config: Config) -> None:
    hf_replay.inject(Fault("stall", seconds=3))
    cfg = fast_hf(base_config, hf_replay.endpoint, timeout_seconds=0.3,
                  max_retries=0).sources.hf
    began = time.monotonic()
    fetch = hf.fetch_days(cfg, [_day("2026-06-22")], FETCHED)
    assert time.monotonic() - began < 2.5
    assert fetch.error is not None and "no complete response within 0.3 s" in fetch.error


def test_malformed_json_fails_the_run_and_keeps_the_store(hf_config: Config, store: Store,
                                                          hf_replay: HFReplay) -> None:
    assert ingest.ingest_hf(hf_config, store, now=_at("2026-06-22")).status == "ok"
    papers = store.read("papers")
    hf_replay.inject("truncate")
    report = ingest.ingest_hf(hf_config, store, now=_at("2026-06-23"))
    assert report.status == "failed"
    assert "malformed JSON" in report.error
    run = store.runs("hf").iloc[-1]
    assert run["status"] == "failed" and "malformed JSON" in run["error"]
    assert store.read("papers").equals(papers)
    assert store.watermark("hf") == _at("2026-06-22", 0)


def test_a_failure_after_some_days_is_partial_and_keeps_what_was_read(
        hf_config: Config, store: Store, hf_replay: HFReplay) -> None:
    cfg = _only_days(hf_config, backfill_days=1)
    hf_replay.days["2026-06-23"] = b'[{"paper": {"id": "2606.'  # day 1 fine, day 2 broken
    report = ingest.ingest_hf(cfg, store, now=_at("2026-06-23"))
    assert report.status == "partial" and "2026-06-23" in report.error
    assert report.watermark_after is None  # the first run never finished cleanly
    assert set(store.read("hf")["hf_day"].to_pylist()) == {_day("2026-06-22")}


# -- the run: accounting, joins, updates, rebuild -------------------------------------------------


def test_first_run_backfills_and_records_the_run_like_arxiv(hf_config: Config,
                                                             store: Store) -> None:
    cfg = _only_days(hf_config, backfill_days=2)
    report = ingest.ingest_hf(cfg, store, now=_at("2026-06-24", 12))
    assert report.status == "ok" and report.error is None
    run = store.runs("hf").iloc[-1]
    details = json.loads(run["details"])
    assert list(details["days"]) == ["2026-06-22", "2026-06-23", "2026-06-24"]
    assert run["fetched"] == 9 + 37 + 21 == report.counts["fetched"]
    assert run["requests"] == report.requests > 3  # 3 HF days + the arXiv id batches
    assert run["watermark_after"].to_pydatetime() == _at("2026-06-24", 0)
    assert store.watermark("hf") == _at("2026-06-24", 0)
    assert len(store.snapshots("hf")) == 1

    again = ingest.ingest_hf(cfg, store, now=_at("2026-06-24", 13))
    assert json.loads(store.runs("hf").iloc[-1]["details"])["since"] == "2026-06-22"  # overlap
    assert again.counts["new"] == 0 and again.counts["revised"] == 0
    assert len(store.snapshots("hf")) == 1  # nothing changed: no new snapshot


def test_a_pick_missing_from_the_store_is_fetched_from_arxiv_by_id(
        hf_config: Config, store: Store, replay: ArxivReplay) -> None:
    cfg = _only_days(hf_config, backfill_days=1)
    picks = [it["paper"]["id"] for it in json.loads(sample.hf_daily("2026-06-22"))]
    in_sample = {e.arxiv_id: e for e in sample.entries()}
    joinable = [i for i in picks if i in in_sample]
    assert joinable, "the sample day must have picks the arXiv replay knows"
    report = ingest.ingest_hf(cfg, store, now=_at("2026-06-22"))
    id_requests = [q["id_list"][0] for q in replay.log if q.get("id_list")]
    assert id_requests and set(joinable) <= set(",".join(id_requests).split(","))
    papers = store.library().to_pandas().set_index("arxiv_id")
    for arxiv_id in joinable:
        assert papers.loc[arxiv_id, "title"] == in_sample[arxiv_id].title
        assert papers.loc[arxiv_id, "hf_day"] == _day("2026-06-22")
        assert papers.loc[arxiv_id, "hf_upvotes"] >= 0
    assert len(store.snapshots("arxiv")) == 1  # so rebuild reproduces the joined records
    assert report.counts["new"] == len(joinable)
    # Derived columns are filled for the fetched picks right away.
    assert papers.loc[joinable, "ai_related"].notna().all()


def test_upvotes_update_on_later_runs_and_the_first_day_is_kept(
        hf_config: Config, store: Store, hf_replay: HFReplay) -> None:
    cfg = _only_days(hf_config, backfill_days=1)
    ingest.ingest_hf(cfg, store, now=_at("2026-06-22"))
    papers = store.library().to_pandas().set_index("arxiv_id")
    pick = papers[papers["hf_day"].notna()].index[0]
    items = json.loads(sample.hf_daily("2026-06-22"))
    item = next(it for it in items if it["paper"]["id"] == pick)
    item["paper"]["upvotes"] = 999
    item["paper"]["githubStars"] = 4242
    hf_replay.days["2026-06-25"] = json.dumps([item]).encode()
    report = ingest.ingest_hf(cfg, store, now=_at("2026-06-25"))
    after = store.library().to_pandas().set_index("arxiv_id")
    assert after.loc[pick, "hf_upvotes"] == 999 and after.loc[pick, "hf_stars"] == 4242
    assert after.loc[pick, "hf_day"] == _day("2026-06-22")
    assert report.counts["revised"] >= 1


def test_disabled_hf_is_recorded_as_skipped(config: Config, store: Store) -> None:
    cfg = _only_days(config, enabled=False)
    report = ingest.ingest_hf(cfg, store, now=_at("2026-06-22"))
    assert report.status == "skipped"
    assert store.runs("hf").iloc[-1]["status"] == "skipped"


@pytest.mark.slow
def test_rebuild_reproduces_the_tables_after_arxiv_and_hf_runs(
        hf_config: Config, store: Store, replay: ArxivReplay) -> None:
    cfg = _only_days(hf_config, backfill_days=1)
    for day in sample.days()[:3]:
        replay.as_of = sample.run_at(day)
        assert ingest.ingest_arxiv(cfg, store, now=replay.as_of).status == "ok"
        assert ingest.ingest_hf(cfg, store, now=_at(day)).status == "ok"
    papers, versions, picks = store.read("papers"), store.read("versions"), store.read("hf")
    assert picks.num_rows > 0
    assert {s.source for s in store.snapshots()} == {"arxiv", "hf"}
    ingest.rebuild(cfg, store)
    assert store.read("papers").equals(papers)
    assert store.read("versions").equals(versions)
    assert store.read("hf").equals(picks)


def test_an_empty_list_is_nothing_that_day(base_config: Config) -> None:
    with HFReplay({"2026-06-27": b"[]"}) as server:
        fetch = hf.fetch_days(fast_hf(base_config, server.endpoint).sources.hf,
                              [_day("2026-06-27")], FETCHED)
    assert fetch.error is None and fetch.days == {"2026-06-27": 0}
    assert fetch.last_day == _day("2026-06-27")


def test_arxiv_failing_for_the_picks_makes_the_run_partial(
        hf_config: Config, store: Store, replay: ArxivReplay) -> None:
    cfg = _only_days(hf_config, backfill_days=1)
    cfg = dataclasses.replace(cfg, sources=dataclasses.replace(
        cfg.sources, arxiv=dataclasses.replace(cfg.sources.arxiv, max_retries=1)))
    replay.inject("503", "503")
    report = ingest.ingest_hf(cfg, store, now=_at("2026-06-22"))
    assert report.status == "partial"
    assert report.error.startswith("arXiv by id:") and "HTTP 503" in report.error
    assert store.watermark("hf") is None  # the next run reads these days again
    assert store.read("papers").num_rows == 0 and store.snapshots() == []


def test_rejected_picks_are_listed_in_the_run_ledger(hf_config: Config, store: Store,
                                                     hf_replay: HFReplay) -> None:
    items = json.loads(sample.hf_daily("2026-06-22"))
    items[0]["paper"]["id"] = "2606.1234567"
    items[1]["paper"]["id"] = "x" * 500
    hf_replay.days["2026-06-22"] = json.dumps(items).encode()
    report = ingest.ingest_hf(_only_days(hf_config, backfill_days=0), store,
                              now=_at("2026-06-22"))
    assert report.status == "ok" and report.counts["fetched"] == len(items) - 2
    details = json.loads(store.runs("hf").iloc[-1]["details"])
    assert details["rejected_count"] == 2
    assert details["rejected"] == [
        {"id": "'2606.1234567'", "why": "paper id is not an arXiv id"},
        {"id": repr("x" * 500)[:80], "why": "paper id is not an arXiv id"}]


def test_control_characters_and_lone_surrogates_in_hf_text_are_cleaned(
        base_config: Config) -> None:
    item = json.loads(sample.hf_daily("2026-06-22"))[0]
    item["paper"]["title"] = "Robust\x00 parsing\x1b"
    item["paper"]["ai_summary"] = "A summary\x85 with \ud800 in it"
    item["paper"]["ai_keywords"] = ["LLM\x07", "\x01"]
    body = json.dumps([item]).encode()  # ASCII JSON: the surrogate travels as \ud800
    assert b"\\ud800" in body
    with HFReplay({"2026-06-22": body}) as server:
        fetch = hf.fetch_days(fast_hf(base_config, server.endpoint).sources.hf,
                              [_day("2026-06-22")], FETCHED)
    [row] = fetch.rows
    assert row["title"] == "Robust parsing"
    assert row["ai_summary"] == "A summary with \ufffd in it"
    assert row["ai_keywords"] == ["LLM"]
    assert fetch.table().num_rows == 1  # and it converts to Arrow (UTF-8)


def test_a_trickling_hf_response_is_cut_at_the_request_timeout(hf_replay: HFReplay,
                                                                base_config: Config) -> None:
    hf_replay.inject(Fault("trickle", seconds=0.2))
    cfg = fast_hf(base_config, hf_replay.endpoint, timeout_seconds=1.0).sources.hf
    began = time.monotonic()
    fetch = hf.fetch_days(cfg, [_day("2026-06-22")], FETCHED)
    assert time.monotonic() - began < 2.0
    assert fetch.error is None and len(fetch.rows) == 9 and fetch.stats.retries == 1


def test_a_trickling_hf_response_ends_at_the_run_deadline(hf_replay: HFReplay,
                                                          base_config: Config) -> None:
    hf_replay.inject(Fault("trickle", seconds=0.2))
    cfg = fast_hf(base_config, hf_replay.endpoint, timeout_seconds=30.0).sources.hf
    began = time.monotonic()
    fetch = hf.fetch_days(cfg, [_day("2026-06-22"), _day("2026-06-23")], FETCHED,
                          deadline=began + 1.5)
    assert time.monotonic() - began < 2.5
    assert fetch.error == ("2026-06-22: the run's time limit reached while reading "
                           f"{hf_replay.endpoint.rstrip('/')}/api/daily_papers?date=2026-06-22")
    assert fetch.rows == [] and fetch.last_day is None


def test_a_stored_future_hf_watermark_does_not_freeze_ingest(hf_config: Config,
                                                             store: Store) -> None:
    now = _at("2026-06-22")
    store.append_run({"run_id": "20990101T000000Z-hf-000000", "source": "hf", "started": now,
                      "finished": now, "status": "ok",
                      "watermark_after": dt.datetime(2099, 1, 1, tzinfo=dt.UTC)})
    report = ingest.ingest_hf(_only_days(hf_config, overlap_days=0), store, now=now)
    assert report.status == "ok" and report.counts["fetched"] == 9
    assert json.loads(store.runs("hf").iloc[-1]["details"])["days"] == {"2026-06-22": 9}


def test_a_compressed_list_is_decoded_once(httpserver: HTTPServer, base_config: Config) -> None:
    body = sample.hf_daily("2026-06-22")
    httpserver.expect_request("/api/daily_papers").respond_with_data(
        gzip.compress(body), content_type="application/json",
        headers={"Content-Encoding": "gzip"})
    cfg = fast_hf(base_config, httpserver.url_for("/").rstrip("/")).sources.hf
    fetch = hf.fetch_days(cfg, [_day("2026-06-22")], FETCHED)
    assert fetch.error is None
    assert [r["arxiv_id"] for r in fetch.rows] == [it["paper"]["id"] for it in json.loads(body)]
