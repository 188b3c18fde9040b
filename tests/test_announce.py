"""The announcement source against the replay of rss.arxiv.org (pipeline/replay/rss.py): a
paper the feed lists before OAI-PMH has it, a stale feed, a cross-list, a gap filled on
the next run, arXiv's 2,000-item cap, a body that is not RSS; and the completeness
ledger where it is shown (status, the job summary, the sources page, the home page)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import urllib.error
import urllib.request

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from pipeline import build, ingest, summary
from pipeline.cli import cli
from pipeline.config import Config
from pipeline.replay import rss, sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.sample import Entry
from pipeline.report import RunReport
from pipeline.sources import announce
from pipeline.sources.announce import FEED_CAP
from pipeline.store import Store
from pipeline.tables import ANNOUNCEMENTS
from tests.support.markdown import shown
from tests.support.replays import fast_arxiv

DAYS = sample.days()  # listing days, Monday to Friday
# The feed switches to a day's listing at midnight US-Eastern (arxiv-feed): half an hour on.
FEED_D1 = sample.announced_at(DAYS[1]) + dt.timedelta(hours=4, minutes=30)
FEED_D2 = sample.announced_at(DAYS[2]) + dt.timedelta(hours=4, minutes=30)
CATS = ("cs.CL", "cs.CV", "cs.LG")


@pytest.fixture
def three(config: Config) -> Config:
    """The replay's config, three categories."""
    return dataclasses.replace(config, sources=dataclasses.replace(
        config.sources, arxiv=dataclasses.replace(config.sources.arxiv, categories=CATS)))


def _run(cfg: Config, replay: ArxivReplay, source: str, now: dt.datetime) -> RunReport:
    replay.as_of = now
    return ingest.ingest(cfg, Store(cfg.store_path), source, now=now)


def _ledger(cfg: Config) -> dict[tuple[str, str], dict]:
    rows = Store(cfg.store_path).read("announcements").to_pylist()
    return {(r["day"].isoformat(), r["category"]): r for r in rows}


def _listed_on(day: str, category: str) -> list[Entry]:
    return [e for e in sample.entries()
            if e.version == 1 and e.announced == sample.announced_at(day)
            and category in e.categories]


@pytest.mark.slow
def test_a_paper_the_feed_lists_before_oai_pmh_has_it_is_on_the_site_after_the_run(
        three, replay, tmp_path):
    replay.oai_lag = dt.timedelta(hours=8)  # OAI-PMH late with the day
    assert _run(three, replay, "oai", FEED_D1).status == "ok"  # day 0 only, so far
    store = Store(three.store_path)
    day1 = {e.arxiv_id for c in CATS for e in _listed_on(DAYS[1], c)}
    assert not day1 & set(store.read("papers")["arxiv_id"].to_pylist())
    report = _run(three, replay, "announce", FEED_D1)
    assert report.status == "ok" and report.counts["new"] == len(day1)
    assert day1 <= set(store.read("papers")["arxiv_id"].to_pylist())
    assert replay.rss_log == ["+".join(CATS)]  # one feed for the three categories
    asked = {i for q in replay.log for i in q["id_list"][0].split(",")}
    assert asked == day1  # by id, nothing else
    ledger = _ledger(three)
    assert set(ledger) == {(DAYS[1], c) for c in CATS}
    for c in CATS:
        row = ledger[(DAYS[1], c)]
        assert row["missing"] == [] and not row["capped"]
        assert sorted(row["new"] + row["cross"]) == sorted(
            f"{e.arxiv_id}v1" for e in _listed_on(DAYS[1], c))
    sent = replay.headers[-len(replay.rss_log) - len(replay.log):]  # this run's, feed first
    assert "rss+xml" in sent[0]["Accept"] and all(
        a["User-Agent"].startswith("papertrail/") and a["Accept"] for a in sent)
    # On the site: its page, and the completeness line on the home page.
    cfg = dataclasses.replace(three, site=dataclasses.replace(three.site, language="en"))
    build.build(cfg, now=FEED_D1)
    paper = sorted(day1)[0]
    assert (cfg.output_path / "paper" / f"{paper}.html").is_file()
    home = (cfg.output_path / "index.html").read_text(encoding="utf-8")
    cv = len(_listed_on(DAYS[1], "cs.CV"))
    held = sum(len(_listed_on(DAYS[1], c)) for c in CATS)
    assert (f"arXiv&#39;s announcement of {DAYS[1]} (the new papers, cross-lists and new "
            f"versions it listed in this site&#39;s categories): {held:,} of {held:,} in the "
            "library") in home
    assert f"cs.CV: {cv:,} of {cv:,}" in home
    page = (cfg.output_path / "sources" / "index.html").read_text(encoding="utf-8")
    assert 'id="completeness"' in page and f"<td>{cv} / {cv}</td>" in page


def test_a_stale_feed_is_said_and_nothing_of_it_is_recorded(three, replay):
    replay.stale = {"cs.CV"}
    report = _run(three, replay, "announce", FEED_D2)
    assert report.status == "partial"
    assert f"cs.CV ({DAYS[1]})" in report.error and "not trusted" in report.error
    ledger = _ledger(three)
    assert set(ledger) == {(DAYS[2], "cs.CL"), (DAYS[2], "cs.LG")}  # no cs.CV row, of any day
    # Halved until the stale category stood alone; the fresh halves were believed.
    assert replay.rss_log == ["cs.CL+cs.CV+cs.LG", "cs.CL", "cs.CV+cs.LG", "cs.CV", "cs.LG"]
    details = json.loads(Store(three.store_path).runs("announce").iloc[-1]["details"])
    assert details["stale"] == {"cs.CV": DAYS[1]}
    stale_only = {e.arxiv_id for e in _listed_on(DAYS[1], "cs.CV")} - {
        e.arxiv_id for c in ("cs.CL", "cs.LG") for e in _listed_on(DAYS[2], c)}
    assert not stale_only & set(Store(three.store_path).read("papers")["arxiv_id"].to_pylist())
    replay.stale = set()
    assert _run(three, replay, "announce", FEED_D2 + dt.timedelta(hours=1)).status == "ok"
    assert _ledger(three)[(DAYS[2], "cs.CV")]["missing"] == []


def test_a_whole_feed_a_day_behind_is_stale_without_reading_every_category(three, replay):
    replay.stale = set(CATS)
    report = _run(three, replay, "announce", FEED_D2)
    assert report.status == "partial" and "not trusted" in report.error
    assert len(replay.rss_log) == 3 and _ledger(three) == {}


def test_a_paper_announced_as_a_cross_list_only(config, replay):
    # Its primary category is one this copy does not follow.
    cross = next(e for e in _listed_on(DAYS[1], "cs.LG") if e.primary_category != "cs.LG")
    cfg = fast_arxiv(config, replay.url, categories=("cs.LG",))
    report = _run(cfg, replay, "announce", FEED_D1)
    assert report.status == "ok" and report.counts["cross_listed"] >= 1
    row = _ledger(cfg)[(DAYS[1], "cs.LG")]
    assert f"{cross.arxiv_id}v1" in row["cross"] and f"{cross.arxiv_id}v1" not in row["new"]
    papers = Store(cfg.store_path).read("papers")
    stored = papers.filter(pc.equal(papers["arxiv_id"], cross.arxiv_id)).to_pylist()
    assert stored and stored[0]["cross_list"] and stored[0]["primary_category"] == \
        cross.primary_category
    assert row["missing"] == []


def test_a_gap_is_fetched_by_id_on_the_next_run(three, replay):
    # The feed answers; every id_list request fails past its retries.
    replay.inject(Fault("stall", 0.0), *[Fault("500")] * (three.sources.arxiv.max_retries + 1))
    first = _run(three, replay, "announce", FEED_D1)
    assert first.status == "partial" and "HTTP 500" in first.error
    gap = _ledger(three)[(DAYS[1], "cs.CV")]
    assert gap["missing"] and sorted(gap["missing"]) == sorted(gap["new"] + gap["cross"])
    assert json.loads(Store(three.store_path).runs("announce").iloc[-1]["details"])[
        "still_missing"] > 0
    replay.log.clear()
    second = _run(three, replay, "announce", FEED_D2)
    assert second.status == "ok"
    asked = {i for q in replay.log for i in q["id_list"][0].split(",")}
    assert {v.rsplit("v", 1)[0] for v in gap["missing"]} <= asked  # yesterday's gap, by id
    ledger = _ledger(three)
    assert ledger[(DAYS[1], "cs.CV")]["missing"] == [] and ledger[(DAYS[2], "cs.CV")][
        "missing"] == []
    assert ledger[(DAYS[1], "cs.CV")]["new"] == gap["new"]  # what arXiv announced stays


def _synthetic(n: int, category: str, first: int) -> list[Entry]:
    when = sample.announced_at(DAYS[1])
    submitted = when - dt.timedelta(hours=8)
    return [Entry(f"2606.{first + i:05d}", 1, f"Paper {first + i}", "Abstract.", ("A. Author",),
                  (category,), None, None, None, submitted, submitted, when) for i in range(n)]


def test_the_2000_item_cap_splits_the_feed_and_marks_a_capped_category(base_config):
    entries = [*_synthetic(2100, "cs.LG", 10000), *_synthetic(50, "cs.CV", 30000)]
    with ArxivReplay(entries) as replay:
        cfg = fast_arxiv(base_config, replay.url, categories=("cs.CV", "cs.LG"))
        report = _run(cfg, replay, "announce", FEED_D1)
        assert replay.rss_log == ["cs.CV+cs.LG", "cs.CV", "cs.LG"]
    assert report.status == "ok"
    ledger = _ledger(cfg)
    lg, cv = ledger[(DAYS[1], "cs.LG")], ledger[(DAYS[1], "cs.CV")]
    assert lg["capped"] and len(lg["new"]) == 2000 and not cv["capped"] and len(cv["new"]) == 50
    # arxiv-feed cuts new papers of the lowest ids (it orders them newest id first).
    assert min(lg["new"]) == "2606.10100v1"
    details = json.loads(Store(cfg.store_path).runs("announce").iloc[-1]["details"])
    assert details["capped"] == ["cs.LG"]
    out = CliRunner().invoke(cli, ["--config", str(cfg.path), "status"])
    # "+": the feed stopped at the cap, arXiv may have announced more.
    assert "cs.LG: 2,000 of 2,000+" in out.output and "cs.CV: 50 of 50+" not in out.output
    assert "announced 2026-06-23: 2,050 of 2,050 held" in out.output


def test_a_body_that_is_not_rss_is_an_error_never_nothing_announced(three, replay):
    replay.inject(Fault("page"))
    report = _run(three, replay, "announce", FEED_D1)
    assert report.status == "failed" and "an HTML page, not an RSS feed" in report.error
    assert report.counts["fetched"] == 0 and _ledger(three) == {}
    assert Store(three.store_path).watermark("announce") is None
    replay.inject(*[Fault("truncate")] * (three.sources.arxiv.max_retries + 1))
    report = _run(three, replay, "announce", FEED_D1)
    assert report.status == "failed" and "malformed XML" in report.error


def test_a_weekend_feed_is_empty_and_records_no_announcement(three, replay):
    saturday = dt.datetime(2026, 6, 27, 12, tzinfo=dt.UTC)
    report = _run(three, replay, "announce", saturday)
    assert report.status == "ok" and _ledger(three) == {}
    details = json.loads(Store(three.store_path).runs("announce").iloc[-1]["details"])
    assert details["no_announcement"] is True


def test_status_and_the_job_summary_say_the_completeness(three, replay):
    _run(three, replay, "announce", FEED_D1)
    out = CliRunner().invoke(cli, ["--config", str(three.path), "status"]).output
    listed = sum(len(_listed_on(DAYS[1], c)) for c in CATS)
    cv = len(_listed_on(DAYS[1], "cs.CV"))
    assert f"completeness: announced {DAYS[1]}: {listed:,} of {listed:,} held" in out
    assert f"cs.CV: {cv:,} of {cv:,}" in out  # few categories: each is named
    rows = json.loads(CliRunner().invoke(cli, ["--config", str(three.path), "status",
                                               "--json"]).output)
    announced = next(r for r in rows if r["source"] == "announce")["completeness"]
    assert {c["category"]: (c["held"], c["announced"]) for c in announced}["cs.CV"] == (cv, cv)
    text = shown(summary.markdown(Store(three.store_path)))
    assert f"Completeness: announced {DAYS[1]}: {listed:,} of {listed:,} held" in text


def test_the_replay_serves_arxiv_feed_answers(replay):
    replay.as_of = FEED_D2
    with urllib.request.urlopen(f"{replay.base}/rss/cs.CV+cs.LG") as answer:
        body = answer.read().decode()
        assert answer.headers["Content-Type"] == "application/rss+xml"
        assert int(answer.headers["Cache-Control"].split("=")[1]) == 23 * 3600 + 30 * 60
    kinds = [k.split("<")[0] for k in body.split("<arxiv:announce_type>")[1:]]
    assert set(kinds) == {"new", "cross", "replace", "replace-cross"}
    assert kinds == sorted(kinds, key=["new", "cross", "replace", "replace-cross"].index)
    assert "<pubDate>Wed, 24 Jun 2026 00:00:00 -0400</pubDate>" in body
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{replay.base}/rss/cs.XX")
    assert refused.value.code == 400 and b"Feed error for query" in refused.value.read()


# -- a hostile feed (pytest-httpserver): what arxiv-feed never serves; the export API is the
# replay's, for what the source then asks by id ----------------------------------------------

TODAY = announce.arxiv_day(FEED_D1)


def _hostile_feed(httpserver: HTTPServer, base_config: Config, replay: ArxivReplay,
                  items: list[tuple[str, Entry]], day: dt.date = TODAY) -> Config:
    """cs.LG's feed as arxiv-feed writes one (pipeline/replay/rss.py), with these items."""
    body = rss.document(["cs.LG"], items, day, lambda _: "http://arxiv.org/licenses/")
    httpserver.expect_request("/rss/cs.LG").respond_with_data(
        body, content_type="application/rss+xml")
    cfg = fast_arxiv(base_config, replay.url, categories=("cs.LG",))
    return dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources, arxiv=(
        dataclasses.replace(cfg.sources.arxiv, feed_url=httpserver.url_for("/rss/")))))


def _details(cfg: Config) -> dict:
    return json.loads(Store(cfg.store_path).runs("announce").iloc[-1]["details"])


def _asked(replay: ArxivReplay) -> list[str]:
    return [i for q in replay.log for i in q["id_list"][0].split(",")]


def test_a_feed_claiming_a_future_day_is_set_aside(httpserver, base_config):
    papers = _synthetic(5, "cs.LG", 10000)
    with ArxivReplay(papers) as replay:
        cfg = _hostile_feed(httpserver, base_config, replay, [("new", e) for e in papers],
                            day=dt.date(2099, 1, 1))
        report = _run(cfg, replay, "announce", FEED_D1)
        assert replay.log == []  # nothing of it asked for by id
    assert report.status == "partial" and "claimed a day after arXiv's today" in report.error
    assert _ledger(cfg) == {} and _details(cfg)["ahead"] == {"cs.LG": "2099-01-01"}
    assert Store(cfg.store_path).watermark("announce") is None


def test_guids_are_read_strictly_and_a_bad_one_is_rejected(httpserver, base_config):
    good, twice, zero, new_v2 = _synthetic(4, "cs.LG", 10000)
    with ArxivReplay([good, twice, zero, new_v2]) as replay:
        cfg = _hostile_feed(httpserver, base_config, replay, [
            ("new", good),
            ("replace", dataclasses.replace(twice, arxiv_id=f"{twice.arxiv_id}v1", version=3)),
            ("replace", dataclasses.replace(zero, version=0)),
            ("new", dataclasses.replace(new_v2, version=2)),
        ])
        report = _run(cfg, replay, "announce", FEED_D1)
        assert _asked(replay) == [good.arxiv_id]
    assert report.status == "ok"
    assert _ledger(cfg)[(TODAY.isoformat(), "cs.LG")]["new"] == [f"{good.arxiv_id}v1"]
    rejected = {r["id"].strip("'"): r["why"] for r in _details(cfg)["rejected"]}
    assert rejected == {
        f"oai:arXiv.org:{twice.arxiv_id}v1v3": "a feed item without an arXiv id and version",
        f"oai:arXiv.org:{zero.arxiv_id}v0": "a feed item without an arXiv id and version",
        f"oai:arXiv.org:{new_v2.arxiv_id}v2": "announced as new, but not its v1"}


def test_the_feeds_findings_and_the_by_id_fetchs_are_both_kept(httpserver, base_config):
    paper = dataclasses.replace(_synthetic(1, "cs.LG", 10000)[0],
                                categories=("cs.LG", "68T05"))  # an MSC class, as arXiv has
    with ArxivReplay([paper]) as replay:
        cfg = _hostile_feed(httpserver, base_config, replay, [
            ("new", dataclasses.replace(paper, categories=("cs.LG", "cs.XYZ"))),
            ("new", dataclasses.replace(paper, arxiv_id="not-an-id"))])
        assert _run(cfg, replay, "announce", FEED_D1).status == "ok"
    details = _details(cfg)
    assert details["unknown_categories"] == {"cs.XYZ": 1, "68T05": 1}
    assert details["rejected"] == [{"id": "'oai:arXiv.org:not-an-idv1'", "from": "feed",
                                    "why": "a feed item without an arXiv id and version"}]


def test_a_feed_past_arxivs_size_and_the_by_id_fetch_are_bounded(httpserver, base_config,
                                                                monkeypatch):
    monkeypatch.setattr(announce, "MAX_BY_ID", 150)
    papers = _synthetic(FEED_CAP + 300, "cs.LG", 10000)
    with ArxivReplay(papers) as replay:
        cfg = _hostile_feed(httpserver, base_config, replay, [("new", e) for e in papers])
        first = _run(cfg, replay, "announce", FEED_D1)
        asked = _asked(replay)
        assert len(asked) == len(set(asked)) == 150
        details = _details(cfg)
        assert details["dropped_past_cap"] == {"cs.LG": 300}
        assert details["deferred_by_id"] == details["still_missing"] == FEED_CAP - 150
        row = _ledger(cfg)[(TODAY.isoformat(), "cs.LG")]
        assert row["capped"] and len(row["new"]) == FEED_CAP
        assert len(row["missing"]) == FEED_CAP - 150
        replay.log.clear()
        second = _run(cfg, replay, "announce", FEED_D1 + dt.timedelta(hours=1))
        assert not set(_asked(replay)) & set(asked) and len(_asked(replay)) == 150  # resumed
    assert first.counts["new"] == second.counts["new"] == 150


def test_a_ledger_row_of_a_future_day_is_never_asked_for_again(config, replay):
    # As a release that trusted a feed's day wrote it: a day in 2099, its papers missing.
    store = Store(config.store_path)
    with store.lock():
        store.append("announcements", pa.Table.from_pylist([{
            "day": dt.date(2099, 1, 1), "category": "cs.LG", "new": ["2606.99999v1"],
            "cross": [], "replace": [], "capped": False, "missing": ["2606.99999v1"],
            "checked": FEED_D1 - dt.timedelta(days=1)}], schema=ANNOUNCEMENTS))
    assert _run(config, replay, "announce", FEED_D1).status == "ok"
    assert _asked(replay) and "2606.99999" not in _asked(replay)
