"""The `versions` source against the arXiv replay (OAI-PMH and the export API by versioned
id), into a real store: a paper first stored at v3 gets the texts of v1 and v2 on the next
runs, bounded per run and resumed, rebuilt alike from the snapshots, and its page says
which text is pending until the diff can be shown."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest
from lxml import html as lxml_html

from pipeline import build as build_mod
from pipeline import ingest
from pipeline.config import Config
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.oai import OAI_LAG
from pipeline.replay.sample import Entry
from pipeline.report import RunReport
from pipeline.sources._source import VERSION_KEYS, Library
from pipeline.sources.versions import missing_texts
from pipeline.store import Store
from pipeline.tables import ANNOUNCEMENTS
from tests.support.replays import fast_arxiv

START = dt.datetime(2026, 4, 1, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def _versions(arxiv_id: str, n: int, start: dt.datetime) -> list[Entry]:
    """A cs.LG paper with `n` versions a day apart, each with its own title and abstract."""
    return [Entry(arxiv_id, v, f"Paper {arxiv_id}, take {v}",
                  f"We study {arxiv_id}. Version {v} finds {70 + v}% accuracy.", ("A. Author",),
                  ("cs.LG",), None, None, None, start, start + (v - 1) * DAY,
                  start + (v - 1) * DAY) for v in range(1, n + 1)]


def _after_outage(base_config: Config, replay: ArxivReplay, **changes: object) -> Config:
    """The store after one OAI-PMH run that first meets every paper at its last version."""
    cfg = fast_arxiv(base_config, replay.url, categories=("cs.LG",), backfill_days=30,
                     **changes)
    replay.as_of = START + 10 * DAY + OAI_LAG
    assert _run(cfg, replay, "oai").status == "ok"
    return cfg


def _run(cfg: Config, replay: ArxivReplay, source: str) -> RunReport:
    assert replay.as_of is not None
    return ingest.ingest(cfg, Store(cfg.store_path), source, now=replay.as_of)


def _texts(store: Store) -> dict[tuple[str, int], str]:
    return {(r["arxiv_id"], r["version"]): r["abstract"]
            for r in store.read("versions").to_pylist()}


def _missing(store: Store) -> list[str]:
    return missing_texts(Library(store.read("papers"),
                                 store.read("versions", columns=VERSION_KEYS),
                                 announcements=ANNOUNCEMENTS.empty_table()))


def test_a_paper_first_stored_at_v3_gets_the_texts_of_v1_and_v2(base_config):
    entries = [*_versions("2604.01234", 3, START), *_versions("2604.01235", 1, START)]
    with ArxivReplay(entries) as replay:
        cfg = _after_outage(base_config, replay)
        store = Store(cfg.store_path)
        assert set(_texts(store)) == {("2604.01234", 3), ("2604.01235", 1)}
        assert _missing(store) == ["2604.01234v1", "2604.01234v2"]
        before = store.read("papers")

        report = _run(cfg, replay, "versions")
        assert report.status == "ok" and report.requests == 1
        assert replay.log[-1]["id_list"] == ["2604.01234v1,2604.01234v2"]
        texts = _texts(store)
        assert texts[("2604.01234", 1)] == "We study 2604.01234. Version 1 finds 71% accuracy."
        assert texts[("2604.01234", 2)] == "We study 2604.01234. Version 2 finds 72% accuracy."
        assert report.counts["new"] == 2 and _missing(store) == []
        # History, not news: the paper stays at v3, its old versions dated as the paper
        # was first stored, so no revisions feed or watch event takes them for new.
        assert store.read("papers").equals(before)
        rows = {(r["arxiv_id"], r["version"]): r for r in store.read("versions").to_pylist()}
        first_seen = before.to_pylist()[0]["first_seen"]
        assert rows[("2604.01234", 1)]["first_seen"] == first_seen
        assert rows[("2604.01234", 1)]["updated"] == START

        # Nothing left: no request, nothing written but the run's row.
        again = _run(cfg, replay, "versions")
        assert again.status == "ok" and again.requests == 0
        assert len(store.snapshots("versions")) == 1

        # The snapshots alone give the same versions and papers.
        versions = store.read("versions")
        ingest.rebuild(cfg, store)
        assert store.read("versions").equals(versions)
        assert store.read("papers").equals(before)


def test_a_backlog_is_fetched_a_bounded_number_a_run_and_resumed_by_the_next(base_config):
    papers = [_versions(f"2604.{i:05d}", 3, START + i * dt.timedelta(minutes=1))
              for i in range(1, 31)]
    with ArxivReplay([e for p in papers for e in p]) as replay:
        cfg = _after_outage(base_config, replay, version_texts_per_run=25, id_batch_size=10)
        store = Store(cfg.store_path)
        assert len(_missing(store)) == 60
        asked, lefts = [], []
        for _ in range(3):
            report = _run(cfg, replay, "versions")
            details = json.loads(store.runs("versions").iloc[-1]["details"])
            asked.append(report.requests)
            lefts.append(details["left"])
            assert report.status == "ok"
        assert asked == [3, 3, 1] and lefts == [35, 10, 0]
        assert len(_texts(store)) == 90 and _missing(store) == []
        # The papers updated last come first.
        first = replay.log[-7]["id_list"][0].split(",")
        assert first[:2] == ["2604.00030v1", "2604.00030v2"]


def test_a_version_the_api_does_not_have_is_listed_and_the_rest_kept(base_config):
    entries = [*_versions("2604.01234", 3, START)]
    with ArxivReplay(entries) as replay:
        cfg = _after_outage(base_config, replay)
        replay.entries = [e for e in replay.entries if e.version != 1]  # withheld upstream
        report = _run(cfg, replay, "versions")
        details = json.loads(Store(cfg.store_path).runs("versions").iloc[-1]["details"])
        assert report.status == "ok" and report.counts["new"] == 1
        assert details["unanswered"] == ["2604.01234v1"] and details["left"] == 1


@pytest.mark.slow  # builds the site twice
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_the_page_says_which_text_is_pending_then_shows_the_diff(base_config, language):
    with ArxivReplay(_versions("2604.01234", 3, START)) as replay:
        cfg = _after_outage(base_config, replay)
        cfg = dataclasses.replace(cfg, site=dataclasses.replace(
            cfg.site, language=language, paper_pages_days=3650))
        page = cfg.output_path / "paper" / "2604.01234.html"

        def timeline() -> list[lxml_html.HtmlElement]:
            build_mod.build(cfg, now=replay.as_of)
            doc = lxml_html.parse(str(page))
            return doc.xpath("//section[@class='timeline']//li")  # type: ignore[no-any-return]

        items = timeline()
        assert [i.get("data-version") for i in items] == ["1", "2", "3"]
        pending = "text of v{} pending" if language == "en" else "v{} 的文本待补"
        for item, n in zip(items[:2], (1, 2), strict=True):
            assert item.get("class") == "pending"
            assert pending.format(n) in item.text_content()
        assert not items[2].xpath(".//p[@class='diff']")  # nothing to diff against yet

        _run(cfg, replay, "versions")
        items = timeline()
        assert not [i for i in items if i.get("class") == "pending"]
        assert {d.text for d in items[2].xpath(".//p[@class='diff']//del")} >= {"2", "72%"}
        assert {d.text for d in items[2].xpath(".//p[@class='diff']//ins")} >= {"3", "73%"}
