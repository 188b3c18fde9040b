"""Long backfills: the real arXiv source against the local replay over HTTP, with a year of
synthetic papers and the replay's cap on the offset of one query lowered (arXiv's is
10,000; past it HTTP 500) so that a few thousand entries pass it. The source learns
nothing of that cap but what totalResults says, measured against its own
max_results_per_query, as it would against arXiv."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
from collections import Counter

import pytest

from pipeline import ingest
from pipeline.replay.arxiv import ArxivReplay, parse_query
from pipeline.replay.sample import Entry
from pipeline.store import Store
from pipeline.text.taxonomy import CS_CATEGORIES
from tests.support.replays import fast_arxiv

NOW = dt.datetime(2026, 6, 26, 1, 0, tzinfo=dt.UTC)
YEAR = dt.timedelta(days=365)
_RANGE = re.compile(r"submittedDate:\[(\d{12}) TO (\d{12})\]")


def papers(when: list[dt.datetime], *, revised_every: int = 0) -> list[Entry]:
    """A paper submitted at each time, ids of arXiv's grammar numbered within the month of
    v1; every `revised_every`-th one also gets a v2 three weeks later (when that is past)."""
    numbers: Counter[str] = Counter()
    out = []
    for i, t in enumerate(sorted(when)):
        month = f"{t:%y%m}"
        numbers[month] += 1
        primary = CS_CATEGORIES[i % len(CS_CATEGORIES)]
        v1 = Entry(arxiv_id=f"{month}.{numbers[month]:05d}", version=1,
                   title=f"Windowed harvesting, study {i}", abstract=f"We report finding {i}.",
                   authors=(f"Author {i % 97}",), categories=(primary, "stat.ML"),
                   comment=None, journal_ref=None, doi=None, published=t, updated=t,
                   announced=t)
        out.append(v1)
        later = t + dt.timedelta(days=21)
        if revised_every and i % revised_every == 0 and later < NOW:
            out.append(Entry(**{**v1.__dict__, "version": 2, "updated": later,
                                "announced": later, "abstract": f"We revise finding {i}."}))
    return out


def year(count: int) -> list[dt.datetime]:
    """`count` times over the year before NOW, denser towards its end (as arXiv grows)."""
    start = NOW - YEAR
    return [(start + YEAR * ((i + 0.5) / count) ** 0.8).replace(microsecond=0)
            for i in range(count)]


def held(query: str, shown: list[Entry]) -> int:
    """How many results the replay holds for a query: its own parser over what it shows."""
    matches = parse_query(query)
    return sum(map(matches, shown))


def run(entries: list[Entry], base_config, *, cap: int, now: dt.datetime = NOW,
        max_pages: int | None = None, **arxiv: object):
    """One ingest at `now` of `entries` through a replay whose cap is `cap` into the config's
    store: the report, the store, the replay's log of every request and what it showed."""
    with ArxivReplay(entries, as_of=NOW, max_offset=cap) as api:
        cfg = fast_arxiv(base_config, api.url, **arxiv)
        store = Store(cfg.store_path)
        report = ingest.ingest_arxiv(cfg, store, now=now, max_pages=max_pages)
        return report, store, list(api.log), api.visible()


def ranges_read_whole(log: list[dict], shown: list[Entry]) -> list[tuple[str, str]]:
    """The date ranges of the queries whose pages were asked to their end, in that order."""
    out: list[tuple[str, str]] = []
    for request in log:
        query = request["search_query"][0]
        end = int(request["start"][0]) + int(request["max_results"][0])
        if end >= held(query, shown):
            found = _RANGE.search(query)
            assert found is not None
            out.append((found[1], found[2]))
    return out


@pytest.mark.slow
def test_a_year_of_all_cs_passing_the_cap_is_stored_whole_by_contiguous_ranges(base_config):
    cap, bound = 3000, 2500
    entries = papers(year(8000), revised_every=4)
    report, store, log, shown = run(entries, base_config, cap=cap, backfill_days=365,
                                    page_size=500, max_results_per_query=bound)
    assert report.status == "ok", report.error
    ids = store.read("papers")["arxiv_id"].to_pylist()
    assert len(ids) == len(set(ids)) == len({e.arxiv_id for e in entries}) == 8000
    assert report.counts["new"] == 8000 and report.counts["fetched"] == 8000

    # No request asks past the replay's cap, and every query paged past its first page holds
    # at most the bound; the whole year as one query would have passed the cap.
    assert all(int(r["start"][0]) + int(r["max_results"][0]) <= cap for r in log)
    totals = {q: held(q, shown) for q in {r["search_query"][0] for r in log}}
    assert all(totals[r["search_query"][0]] <= bound for r in log if r["start"] != ["0"])
    assert max(totals.values()) == len(shown) > cap
    assert all(r["search_query"][0].count("cat:cs.") == 40 for r in log)

    # The ranges read whole tile the window oldest first: each starts on the minute the last
    # one ended (arXiv's ranges include both ends), the newest is open, none is read twice.
    spans = ranges_read_whole(log, shown)
    assert len(spans) >= 4 and len(set(spans)) == len(spans)
    assert spans[0][0] == f"{NOW - YEAR:%Y%m%d%H%M}" and spans[-1][1] == "999912312359"
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert report.requests == len(log) < 8000 // 500 + 2 * len(spans)
    assert json.loads(store.read("runs")["details"][-1].as_py())["ranges"] == len(spans)
    assert store.watermark("arxiv") == max(e.updated for e in shown)


@pytest.mark.slow
def test_a_backfill_stopped_partway_moves_the_watermark_only_past_ranges_read_whole(
        base_config):
    entries = papers(year(2000))
    settings = {"cap": 600, "backfill_days": 365, "page_size": 100,
                "max_results_per_query": 500}
    first, store, log, shown = run(entries, base_config, max_pages=9, **settings)
    assert first.status == "partial" and "--max-pages" in first.error
    spans = ranges_read_whole(log, shown)
    mark = dt.datetime.strptime(spans[-1][1], "%Y%m%d%H%M").replace(tzinfo=dt.UTC)
    assert first.watermark_after == store.watermark("arxiv") == mark < NOW
    stored = set(store.read("papers")["arxiv_id"].to_pylist())
    assert {e.arxiv_id for e in shown if e.updated <= mark} <= stored
    assert len(stored) == first.counts["new"] < 2000

    seen_first = {p["arxiv_id"]: p["first_seen"] for p in store.read("papers").to_pylist()}
    later = NOW + dt.timedelta(hours=1)
    resumed, store, log, shown = run(entries, base_config, now=later, **settings)
    assert resumed.status == "ok", resumed.error
    assert log[0]["search_query"][0].startswith(
        f"submittedDate:[{mark - dt.timedelta(hours=24):%Y%m%d%H%M} TO")
    papers_now = store.read("papers").to_pylist()
    assert len(papers_now) == 2000
    assert all(p["first_seen"] == seen_first[p["arxiv_id"]] for p in papers_now
               if p["arxiv_id"] in seen_first)
    assert store.watermark("arxiv") == max(e.updated for e in shown)


def test_an_hour_holding_more_than_the_bound_is_recorded_and_the_run_goes_on(base_config):
    busy = NOW - dt.timedelta(days=2, minutes=17)
    every_35_minutes = (NOW - dt.timedelta(days=5, minutes=-35 * i) for i in range(200))
    quiet = [t for t in every_35_minutes if abs(t - busy) > dt.timedelta(hours=3)]
    entries = papers([*quiet, *[busy] * 700])
    report, store, log, shown = run(entries, base_config, cap=600, backfill_days=5,
                                    page_size=100, max_results_per_query=500)
    assert report.status == "partial"
    assert "more than max_results_per_query (500) even in the smallest range" in report.error
    details = json.loads(store.read("runs")["details"][-1].as_py())
    assert details["truncated_count"] == 1
    [cut] = details["truncated"]
    start, end = (dt.datetime.fromisoformat(cut[k]) for k in ("from", "to"))
    assert start <= busy <= end and end - start < dt.timedelta(hours=2)
    assert (cut["results"], cut["read"]) == (700, 500)
    assert all(int(r["start"][0]) + int(r["max_results"][0]) <= 600 for r in log)

    # Everything else, before and after that hour, is stored, and the watermark moves on:
    # no later run could read more of that hour from arXiv.
    stored = Counter(p["updated"] == busy for p in store.read("papers").to_pylist())
    assert stored[False] == len(quiet) > 150 and stored[True] == 500
    assert report.watermark_after == store.watermark("arxiv") == max(e.updated for e in shown)


def test_the_replay_answers_a_page_past_offset_10000_with_http_500_as_arxiv_does():
    import urllib.error
    import urllib.request

    with ArxivReplay(papers(year(10))) as api:
        ok = urllib.request.urlopen(f"{api.url}?search_query=cat:cs.AI&start=9900"
                                    "&max_results=100")
        assert ok.status == 200
        for query in ("start=10000&max_results=100", "start=10000&max_results=2000"):
            try:
                urllib.request.urlopen(f"{api.url}?search_query=cat:cs.AI&{query}")
            except urllib.error.HTTPError as exc:
                assert exc.code == 500
            else:
                raise AssertionError(f"{query} was answered")


def test_a_date_range_selects_papers_by_their_first_version_as_arxiv_does_today():
    """lastUpdatedDate: is rewritten to submittedDate:, which filters on the first
    version's date: the v2 of an older paper is in no recent window."""
    old = NOW - dt.timedelta(days=40)
    entries = papers([old], revised_every=1)  # v2 three weeks later: 19 days ago
    window = f"[{NOW - dt.timedelta(days=20):%Y%m%d%H%M} TO {NOW:%Y%m%d%H%M}]"
    with ArxivReplay(entries, as_of=NOW) as api:
        for field in ("lastUpdatedDate", "submittedDate"):
            assert held(f"{field}:{window}", api.visible()) == 0
        assert held(f"submittedDate:[{old:%Y%m%d%H%M} TO {NOW:%Y%m%d%H%M}]",
                    api.visible()) == 1
