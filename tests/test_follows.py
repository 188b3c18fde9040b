"""A fork's [[follows]] fetch what they name from all of arXiv, through the export API replay
(arXiv's behaviour since November 2025): followed authors by `au:`, watched papers by
`id_list`, within `[sources.arxiv] lookups_per_run` requests a run."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import ingest, outbound
from pipeline.cli import cli
from pipeline.derive import scope
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.faults import Fault
from pipeline.replay.sample import Entry
from pipeline.site.i18n import say, strings
from pipeline.site.model.follows import match as match_follows
from pipeline.site.model.views import load
from pipeline.sources import _http
from pipeline.sources.arxiv import Author, look_up
from pipeline.store import Store
from pipeline.text.reasons import Code, Reason
from tests.support.replays import fast_arxiv
from tests.support.site import make_config

NOW = dt.datetime(2026, 6, 26, 1, 0, tzinfo=dt.UTC)


def paper(arxiv_id: str, categories: tuple[str, ...], authors: tuple[str, ...],
          days_ago: float = 1.0, title: str = "A study") -> Entry:
    t = NOW - dt.timedelta(days=days_ago)
    return Entry(arxiv_id=arxiv_id, version=1, title=title, abstract="We report a finding.",
                 authors=authors, categories=categories, comment=None, journal_ref=None,
                 doi=None, published=t, updated=t, announced=t)


ROBOT = paper("2606.00001", ("cs.RO",), ("Ada Robot",))
CROSS = paper("2606.00002", ("cs.LG", "cs.RO"), ("Bo Cross",))  # cross-listed into cs.RO
VISION = paper("2606.00003", ("cs.CV",), ("Cy Vision",))
ADVISOR = paper("2606.00004", ("cs.LG",), ("L. Yang", "Dee Student"), days_ago=200)
NAMESAKE = paper("2606.00005", ("cs.CL",), ("Wei Yang",), days_ago=2)  # another Yang
WATCHED = paper("2605.00006", ("math.OC",), ("Eve Optimal",), days_ago=40)
ENTRIES = [ROBOT, CROSS, VISION, ADVISOR, NAMESAKE, WATCHED]


def robotics_fork(root: Path, follows: str = "", arxiv: str = "") -> config_mod.Config:
    return make_config(root, None, '[sources.arxiv]\ncategories = ["cs.RO"]\n'
                       f'{arxiv}\n[sources.hf]\nenabled = false\n{follows}')


ADVISOR_FOLLOW = """
[[follows]]
name = "advisor"
authors = ["Lin Yang"]
match_initials = true
watch = ["2605.00006"]
"""


def ingest_once(cfg: config_mod.Config, api: ArxivReplay, now: dt.datetime = NOW):
    report = ingest.ingest_arxiv(fast_arxiv(cfg, api.url), Store(cfg.store_path), now=now)
    return report, Store(cfg.store_path).read("papers")["arxiv_id"].to_pylist()


def follows_details(cfg: config_mod.Config) -> dict:
    runs = Store(cfg.store_path).read("runs").to_pylist()
    return json.loads(runs[-1]["details"])["follows"]


def test_a_robotics_fork_gets_its_advisors_cs_lg_paper_and_a_watched_paper_outside(tmp_path):
    cfg = robotics_fork(tmp_path, ADVISOR_FOLLOW)
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        report, stored = ingest_once(cfg, api)
        asked = [q for q in api.log if "cat:" not in q.get("search_query", [""])[0]]
    assert report.status == "ok", report.error
    # The categories bring cs.RO and the cross-list; the follows the advisor (listed as
    # "L. Yang", matched by initials) and the watched math.OC paper; not the namesake.
    assert sorted(stored) == sorted([ROBOT.arxiv_id, CROSS.arxiv_id, ADVISOR.arxiv_id,
                                     WATCHED.arxiv_id])
    assert [q.get("id_list") for q in asked if q.get("id_list", [""])[0]] == [["2605.00006"]]
    [au] = [q for q in asked if q.get("search_query", [""])[0].startswith("au:")]
    assert au["search_query"] == ['au:"yang"'] and au["sortBy"] == ["submittedDate"]
    assert int(au["start"][0]) == 0 and int(au["max_results"][0]) <= 200
    details = follows_details(cfg)
    assert details["skipped"] == [] and details["fetched"] == 2


def test_without_initials_the_whole_name_is_asked_and_l_yang_is_not_the_person(tmp_path):
    cfg = robotics_fork(tmp_path, ADVISOR_FOLLOW.replace("true", "false"))
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        _, stored = ingest_once(cfg, api)
        queries = [q.get("search_query", [""])[0] for q in api.log]
    assert 'au:"lin yang"' in queries
    assert ADVISOR.arxiv_id not in stored and WATCHED.arxiv_id in stored


def test_a_watched_paper_stored_inside_the_categories_is_not_looked_up_again(tmp_path):
    cfg = robotics_fork(tmp_path, '[[follows]]\nwatch = ["2606.00001"]\n')
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        ingest_once(cfg, api)
        ingest_once(cfg, api, NOW + dt.timedelta(hours=1))
        id_lists = [q for q in api.log if q.get("id_list", [""])[0]]
    # The first run's harvest stored it (OAI-PMH keeps it current from then on): no id_list.
    assert id_lists == []


AUTHORS = """
[[follows]]
authors = ["Ada Robot", "Bo Cross", "Cy Vision", "Eve Optimal"]
watch = ["2605.00006"]
"""


def test_the_look_ups_stay_within_lookups_per_run_and_the_next_runs_take_the_rest(tmp_path):
    cfg = robotics_fork(tmp_path, AUTHORS, "lookups_per_run = 3")
    asked: list[list[str]] = []
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        for hour in range(3):
            before = len(api.log)
            report, stored = ingest_once(cfg, api, NOW + dt.timedelta(hours=hour))
            looked = [q for q in api.log[before:] if "cat:" not in
                      q.get("search_query", [""])[0]]
            assert len(looked) <= 3 and report.status == "ok"
            asked.append([q.get("search_query", q.get("id_list"))[0] for q in looked])
            assert len(follows_details(cfg)["skipped"]) == 2  # 4 authors, 2 fit with the ids
    # Every run asks the ids, then two authors, the next two in the next run, and so on.
    assert all(run[0] == "" or run[0] == "2605.00006" for run in asked)
    authors_asked = {q for run in asked for q in run if q.startswith("au:")}
    assert authors_asked == {'au:"ada robot"', 'au:"bo cross"', 'au:"cy vision"',
                             'au:"eve optimal"'}
    assert VISION.arxiv_id in stored  # Cy Vision is followed: his cs.CV paper comes


def test_a_server_answering_500_ends_the_look_ups_after_the_bounded_retries(tmp_path):
    cfg = robotics_fork(tmp_path, AUTHORS)
    authors = [Author(a, False) for a in cfg.follows[0].authors]
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        acfg = fast_arxiv(cfg, api.url, max_retries=2).sources.arxiv
        api.inject(*[Fault("500")] * 50)
        done = look_up(acfg, ["2605.00006"], authors, NOW)
        sent = len(api.log)
    # The id_list request: 1 try + 2 retries, then nothing more of a failing server.
    assert sent == 3 and done.stats.requests == 3
    assert "HTTP 500 (gave up after 2 retries)" in done.error
    assert done.skipped == ["Ada Robot", "Bo Cross", "Cy Vision", "Eve Optimal"]


def test_a_run_whose_harvest_failed_asks_no_look_ups(tmp_path):
    cfg = robotics_fork(tmp_path, AUTHORS)
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        cfg = fast_arxiv(cfg, api.url, max_retries=2)
        api.inject(*[Fault("500")] * 50)
        report = ingest.ingest_arxiv(cfg, Store(cfg.store_path), now=NOW)
        sent = len(api.log)
    assert sent == 3 and report.status == "failed" and "gave up after 2 retries" in report.error


@pytest.mark.slow
def test_requests_give_up_on_a_500_after_max_retries():
    cfg = config_mod.ArxivConfig(max_retries=3, backoff_seconds=0, max_backoff_seconds=0)
    requests = _http.Requests(cfg, deadline=float("inf"), name="test-500", limit="test")
    sent = []

    def send(deadline: float) -> int:
        sent.append(deadline)
        return 500

    def check(status: int) -> int:
        outbound.check_status(status, {})
        return status

    with pytest.raises(_http.SourceError, match=r"HTTP 500 \(gave up after 3 retries"):
        requests.call(send, check, "here")
    assert len(sent) == 4


def test_a_follow_with_match_initials_matches_l_yang(tmp_path):
    cfg = robotics_fork(tmp_path, ADVISOR_FOLLOW)
    papers = pa.table({"arxiv_id": ["a", "b", "c"],
                       "authors": [["L. Yang"], ["Wei Yang"], ["Lin  YANG"]],
                       "categories": [["cs.LG"], ["cs.CL"], ["cs.LG"]]})
    assert scope.followed(cfg.follows, papers).tolist() == [True, False, True]
    strict = dataclasses.replace(cfg.follows[0], match_initials=False)
    assert scope.followed((strict,), papers).tolist() == [False, False, True]


def test_topics_check_says_which_follows_cannot_be_served(tmp_path):
    follows = (ADVISOR_FOLLOW + '\n[[follows]]\nname = "vision"\ncategories = ["cs.CV"]\n'
               '\n[[follows]]\nauthors = ["Ada Robot", "Bo Cross", "Cy Vision"]\n')
    cfg = robotics_fork(tmp_path, follows, "lookups_per_run = 2")
    with ArxivReplay([ROBOT], as_of=NOW) as api:
        ingest_once(cfg, api)  # the watched paper is not on this arXiv
    result = CliRunner().invoke(cli, ["--config", str(cfg.path), "topics", "check"])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.output.splitlines() if line.startswith("warn  ")]
    assert warned == [
        "warn  follows[0] (advisor): watched 2605.00006 not in the store yet (no run has "
        "looked it up since it was added, or arXiv has no such paper)",
        "warn  follows[1] (vision): categories cs.CV are not in [sources.arxiv] categories: "
        "nothing fetches them, so only papers its authors or watched ids bring match",
        "warn  follows: 4 authors to look up and room for 1 a run ([sources.arxiv] "
        "lookups_per_run = 2): each is looked up every 4 runs"]
    off = robotics_fork(tmp_path, ADVISOR_FOLLOW, "enabled = false")
    result = CliRunner().invoke(cli, ["--config", str(off.path), "topics", "check"])
    assert "warn  follows[0] (advisor): its authors and watched papers are not fetched from " \
           "outside the categories ([sources.arxiv] enabled = false)" in result.output


def test_why_a_follow_matched_is_said_in_the_sites_language(tmp_path):
    cfg = robotics_fork(tmp_path, ADVISOR_FOLLOW)
    with ArxivReplay(ENTRIES, as_of=NOW) as api:
        ingest_once(cfg, api)
    followed = match_follows(cfg.follows, load(cfg, Store(cfg.store_path), now=NOW))
    why = {p.arxiv_id: w for p, w in followed.papers}
    advisor = Reason(Code.FOLLOW, ("advisor",))
    assert why == {
        ADVISOR.arxiv_id: (advisor, Reason(Code.AUTHOR_AS, ("Lin Yang", "L. Yang"))),
        WATCHED.arxiv_id: (advisor, Reason(Code.WATCH, (WATCHED.arxiv_id,)))}
    assert say(why[ADVISOR.arxiv_id], strings("zh-CN")) == "advisor：作者 Lin Yang（署名 L. Yang）"
    assert say(why[WATCHED.arxiv_id], strings("en")) == f"advisor: watch {WATCHED.arxiv_id}"
