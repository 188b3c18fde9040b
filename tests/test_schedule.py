"""The update workflow's schedule follows arXiv's clock in summer and winter time, and the
scheduled runs GitHub missed show on the sources page, in the home banner and in the job
summary."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline import runs, schedule, summary
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.store import Store
from tests.support.replays import fast_arxiv, ingest_arxiv_paths

REPO = Path(__file__).resolve().parents[1]
EASTERN = ZoneInfo("America/New_York")
UTC = dt.UTC


def workflow_crons() -> list[str]:
    doc = yaml.safe_load((REPO / ".github/workflows/update.yml").read_text(encoding="utf-8"))
    on = doc.get(True, doc.get("on"))  # YAML 1.1 reads a bare `on` key as True
    return [entry["cron"] for entry in on["schedule"]]


def first_after(moment: dt.datetime, crons: list[str]) -> dt.datetime:
    return schedule.slots(moment - dt.timedelta(seconds=1), moment + dt.timedelta(days=1),
                          crons)[0]


def test_the_workflow_runs_on_the_schedule_the_pipeline_checks_against():
    assert workflow_crons() == list(schedule.CRONS)


# Sunday to Thursday of a week in summer (EDT, UTC-4) and one in winter (EST, UTC-5).
WEEKS = {"summer": dt.date(2026, 7, 12), "winter": dt.date(2026, 1, 11)}


@pytest.mark.parametrize("season", WEEKS)
def test_the_cron_lines_run_soon_after_the_announcement_and_after_oai_pmh_has_it(season):
    crons = workflow_crons()
    offsets = set()
    for n in range(5):  # Sunday .. Thursday evenings, US-Eastern
        day = WEEKS[season] + dt.timedelta(days=n)
        announced = dt.datetime.combine(day, dt.time(20, 0), EASTERN)
        oai = dt.datetime.combine(day, dt.time(22, 30), EASTERN)
        offsets.add(announced.utcoffset())
        after_announcement = first_after(announced, crons) - announced
        after_oai = first_after(oai, crons) - oai
        assert after_announcement <= dt.timedelta(minutes=10), (day, after_announcement)
        assert after_oai <= dt.timedelta(minutes=15), (day, after_oai)
        # ... and each by the line meant for it, not by the hourly one
        assert schedule.Cron(crons[0]).times(announced, announced + dt.timedelta(minutes=10))
        assert list(schedule.Cron(crons[1]).times(oai, oai + dt.timedelta(minutes=15)))
    assert offsets == {dt.timedelta(hours=-4 if season == "summer" else -5)}


def test_every_hour_has_a_run():
    start = dt.datetime(2026, 3, 7, 0, 0, tzinfo=UTC)  # over the switch to summer time
    times = schedule.slots(start, start + dt.timedelta(days=3), workflow_crons())
    assert len(times) >= 72
    assert max(b - a for a, b in zip([start, *times], times, strict=False)) <= \
        dt.timedelta(hours=1)


def test_cron_fields_read_as_github_reads_them():
    monday = dt.datetime(2026, 7, 13, tzinfo=UTC)
    week = list(schedule.Cron("5 0,1 * * 1-5").times(monday - dt.timedelta(days=1),
                                                   monday + dt.timedelta(days=6)))
    assert len(week) == 10 and {t.weekday() for t in week} == {0, 1, 2, 3, 4}
    assert {(t.hour, t.minute) for t in week} == {(0, 5), (1, 5)}
    # */n steps; Sunday is 0 and 7; day of month and day of week restricted: either matches
    assert len(list(schedule.Cron("*/15 3 * * 7").times(monday - dt.timedelta(days=2),
                                                        monday))) == 4
    assert schedule.Cron("5/20 * * * *").minutes == {5, 25, 45}
    either = list(schedule.Cron("0 12 1 * 1").times(monday, monday + dt.timedelta(days=31)))
    assert [t.day for t in either] == [13, 20, 27, 1, 3, 10]
    for bad in ("5 0 * *", "61 * * * *", "0 24 * * *", "0 0 * * 8"):
        with pytest.raises(ValueError):
            schedule.Cron(bad)


@pytest.fixture
def scheduled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs from here on are the workflow's scheduled runs."""
    monkeypatch.setenv(schedule.TRIGGER_ENV, "schedule")


def record(store: Store, *at: dt.datetime) -> None:
    for started in at:
        with runs.recorded(store, "hf", started=started) as run:
            run.record(status="ok", fetched=0, new=0, revised=0, unchanged=0)


def hourly(start: dt.datetime, hours: int, late: int = 0) -> list[dt.datetime]:
    return [start + dt.timedelta(hours=h, minutes=17 + late) for h in range(hours)]


# Monday 2026-07-13 in UTC: after Sunday's announcement (00:05, 02:40 slots on arXiv's clock)
MONDAY = dt.datetime(2026, 7, 13, tzinfo=UTC)
SINCE = MONDAY - dt.timedelta(days=30)


def test_runs_on_time_or_late_within_the_grace_leave_no_gap(tmp_path, scheduled):
    store = Store(tmp_path / "data")
    record(store, *hourly(MONDAY - dt.timedelta(hours=3), 8, late=40),
           MONDAY + dt.timedelta(minutes=8), MONDAY + dt.timedelta(hours=2, minutes=55))
    assert schedule.gaps(store.runs(), since=SINCE) == []


def test_a_stretch_without_scheduled_runs_is_a_gap_naming_the_arxiv_slots_in_it(
        tmp_path, scheduled):
    store = Store(tmp_path / "data")
    before = hourly(MONDAY - dt.timedelta(hours=3), 3)  # Sunday 21:17 .. 23:17 UTC
    after = hourly(MONDAY + dt.timedelta(hours=6), 2)  # 06:17, 07:17
    record(store, *before, *after)
    (gap,) = schedule.gaps(store.runs(), since=SINCE)
    assert (gap.last, gap.next) == (before[-1], after[0])
    # slots 00:05 00:17 01:05 01:17 02:17 02:40 03:17 03:40 04:17 (05:17 is within the grace)
    assert (gap.missed, gap.arxiv) == (9, 4)
    assert gap.hours == pytest.approx(7.0)
    assert schedule.gaps(store.runs(), since=after[0]) == []  # older than asked: not listed


def test_only_runs_the_schedule_started_close_a_gap(tmp_path, monkeypatch):
    store = Store(tmp_path / "data")
    monkeypatch.setenv(schedule.TRIGGER_ENV, "schedule")
    record(store, MONDAY)
    monkeypatch.setenv(schedule.TRIGGER_ENV, "workflow_dispatch")  # a run by hand
    record(store, MONDAY + dt.timedelta(hours=3))
    monkeypatch.delenv(schedule.TRIGGER_ENV)  # a local run
    record(store, MONDAY + dt.timedelta(hours=4))
    monkeypatch.setenv(schedule.TRIGGER_ENV, "schedule")
    record(store, MONDAY + dt.timedelta(hours=6))
    (gap,) = schedule.gaps(store.runs(), since=SINCE)
    assert (gap.last, gap.next) == (MONDAY, MONDAY + dt.timedelta(hours=6))
    details = store.runs()["details"].tolist()
    assert [isinstance(d, str) and '"trigger": "schedule"' in d for d in details] == \
        [True, False, False, True]


def test_damaged_details_are_no_scheduled_run(tmp_path, scheduled):
    store = Store(tmp_path / "data")
    record(store, MONDAY, MONDAY + dt.timedelta(hours=5))
    frame = store.runs()
    frame.loc[0, "details"] = "{not json"
    assert schedule.gaps(frame, since=SINCE) == []
    assert len(schedule.gaps(store.runs(), since=SINCE)) == 1


def test_the_job_summary_lists_the_missed_runs_of_the_last_week(tmp_path, scheduled):
    store = Store(tmp_path / "data")
    record(store, MONDAY, MONDAY + dt.timedelta(hours=4), MONDAY + dt.timedelta(hours=5))
    text = summary.markdown(store)
    assert "### Missed scheduled runs (last 7 days, 90 min grace)" in text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("- ⚠ 2026")]
    assert line == ("- ⚠ 2026-07-13 00:00 → 2026-07-13 04:00 UTC: no scheduled run for 4.0 h, "
                    "5 missed (2 right after an arXiv announcement)")


def test_a_summary_of_runs_on_time_says_nothing_of_missed_runs(tmp_path, scheduled):
    store = Store(tmp_path / "data")
    record(store, *hourly(MONDAY, 5))
    assert "Missed" not in summary.markdown(store)


@pytest.mark.parametrize(("language", "said"), [
    ("zh-CN", ("错过的计划运行", "小时没有计划运行，错过 {missed} 次", "计划运行有缺失：")),
    ("en", ("Missed scheduled runs", " h, {missed} missed (", "Scheduled runs were missed: ")),
])
@pytest.mark.slow
def test_the_sources_page_and_the_home_banner_show_a_gap(tmp_path, scheduled, language, said):
    path = tmp_path / "papertrail.toml"
    path.write_text(f'[store]\npath = "data"\n[site]\nlanguage = "{language}"\n'
                    'output = "out"\n', encoding="utf-8")
    cfg = config_mod.load(path)
    store = Store(cfg.store_path)
    days = sample.days()[:2]
    with ArxivReplay(sample.entries()) as api:
        for day in days:  # one scheduled run a day: the hourly slots between are missed
            api.as_of = sample.run_at(day)
            ingest_arxiv_paths(fast_arxiv(cfg, api.url), store, api.as_of)
    build_mod.build(cfg, now=store.runs()["finished"].max().to_pydatetime())
    heading, row, banner = said
    sources = (cfg.output_path / "sources" / "index.html").read_text("utf-8")
    assert f'<h2 id="missed-runs">{heading}</h2>' in sources
    (item,) = re.findall(r'<ul class="entries missed-runs"><li>(.*?)</li></ul>', sources)
    missed = len(schedule.slots(sample.run_at(days[0]),
                                sample.run_at(days[1]) - schedule.GRACE))
    assert missed > 12 and row.format(missed=missed) in item
    home = (cfg.output_path / "index.html").read_text("utf-8")
    (shown,) = re.findall(r'<p class="banner" role="status"><a href="[^"]*sources/#missed-runs">'
                          r'([^<]*)</a></p>', home)
    assert shown.startswith(banner) and str(missed) in shown
