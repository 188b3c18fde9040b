"""今日精选: the score and its reasons from known signals, the weights' say in the order, the
digest queue's order, and the view on the built site: the home page's order in Chromium at
desktop and phone widths, the picks pages, and the feed."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import pandas as pd
import pytest

from pipeline.config import Follow, RankConfig
from pipeline.derive import rank
from pipeline.digest.plan import FOLLOWED, HEAD, PICKS, head, plan, queue
from pipeline.sources import Signal, signal
from pipeline.store import Store
from pipeline.text.venue import Tier
from tests.feedcheck import atom_errors, rss_errors
from tests.support.site import DAYS, add_digest, at, build_at_last_run, make_config, run_pipeline

W = RankConfig()


def upvotes(n: int) -> tuple[tuple[Signal, int], ...]:
    """Hugging Face's upvotes, the source signal 今日精选 weighs by [rank] hf_upvotes."""
    return ((signal("upvotes"), n),)


STAR = rank.Signals("2606.00001", counts=upvotes(45), venue="ICML 2026", tier=Tier.MAIN)
BARE = rank.Signals("2606.00002")
CODE = rank.Signals("2606.00003", code="github.com")


def test_many_upvotes_and_a_venue_outrank_a_bare_paper_which_is_left_out():
    view = rank.ranked([BARE, CODE, STAR], W)
    assert [r.arxiv_id for r in view] == [STAR.arxiv_id, CODE.arxiv_id]
    star = view[0]
    assert [(r.kind, r.value) for r in star.reasons] == [("hf", "45"), ("venue", "ICML 2026")]
    assert star.score == pytest.approx(1.5 * 5.5236 + W.venue_main, abs=1e-3)


def test_a_workshop_and_another_conference_score_below_a_main_conference():
    main = rank.score(rank.Signals("a", venue="CVPR 2026", tier=Tier.MAIN), W)
    for t in (Tier.WORKSHOP, Tier.OTHER, Tier.FINDINGS, Tier.JOURNAL):
        lower = rank.score(rank.Signals("b", venue="CVPR 2026 Workshop", tier=t), W)
        assert lower.score < main.score
        assert lower.reasons[0].tier is t  # the chip says its tier


def test_eighteen_upvotes_outrank_a_top_venue_with_a_topic_code_and_a_revision():
    voted = rank.Signals("2606.00001", counts=upvotes(18))
    bare = rank.Signals("2606.00002", venue="ICML 2026", code="github.com", changed_words=40,
                        topics=("llm-agents",))
    assert [r.arxiv_id for r in rank.ranked([bare, voted], W)] == ["2606.00001", "2606.00002"]


def test_one_category_takes_at_most_its_share_while_others_are_left():
    cv = [rank.Signals(f"2606.1{i:04d}", counts=upvotes(50), category="cs.CV") for i in range(60)]
    other = [rank.Signals(f"2606.2{i:04d}", code="github.com", category=f"cs.{c}")
             for i, c in enumerate(["CL", "LG", "RO", "CR"] * 10)]
    view = rank.ranked([*cv, *other], W)
    assert len(view) == W.top
    assert sum(r.arxiv_id.startswith("2606.1") for r in view) == int(W.max_category_share * W.top)
    assert view[0].arxiv_id.startswith("2606.1")  # the best still lead
    alone = rank.ranked(cv, W)  # a one-category fork still fills its view
    assert len(alone) == W.top


def test_the_weights_change_the_order():
    tuned = dataclasses.replace(W, hf_upvotes=0.0, venue_main=0.0, code=10.0)
    assert [r.arxiv_id for r in rank.ranked([STAR, CODE], tuned)] == [CODE.arxiv_id]
    assert [r.arxiv_id for r in rank.ranked([STAR, CODE], W)] == [STAR.arxiv_id, CODE.arxiv_id]


def test_every_reason_is_a_chip_in_order_and_the_view_stops_at_top():
    all_of_them = rank.Signals("2606.00009", counts=upvotes(1), venue="TPAMI", code="gitlab.com",
                               changed_words=40, topics=("llm-agents", "rl"),
                               follows=("Kaiming He",))
    (only,) = rank.ranked([all_of_them], W)
    # a follow first, then the sources' signals (Hugging Face's chip, "hf"), then the rest
    assert [r.kind for r in only.reasons] == ["follow", "hf", *(
        k for k in rank.Kind if k not in (rank.Kind.FOLLOW, rank.Kind.PAGE))]
    assert only.score == pytest.approx(W.follow + W.hf_upvotes + W.venue_main + W.code
                                       + W.revision + W.topic)  # a topic counts once
    small = rank.Signals("2606.00010", changed_words=W.min_changed_words - 1)
    assert rank.ranked([small], W) == []  # a fix is no reason
    many = [rank.Signals(f"2606.{i:05d}", counts=upvotes(i)) for i in range(1, 80)]
    view = rank.ranked(many, dataclasses.replace(W, top=5))
    assert [r.arxiv_id for r in view] == [f"2606.{i:05d}" for i in range(79, 74, -1)]


def test_code_links_project_pages_and_changed_words():
    assert rank.code_host("Code: https://github.com/a/b.") == "github.com"
    assert rank.code_host(None, "see https://x-lab.github.io/proj") is None
    assert rank.page_host(None, "see https://x-lab.github.io/proj") == "github.io"
    assert rank.page_host(None, project="https://danceopd.github.io/") == "github.io"
    assert rank.page_host(project="https://www.vis.xyz/proj") == "vis.xyz"
    assert rank.page_host(project="https://github.com/a/b") is None  # code, not a page
    page = rank.score(rank.Signals("a", page="github.io"), W)
    code = rank.score(rank.Signals("b", code="github.com"), W)
    assert [r.kind for r in page.reasons] == ["page"] and page.score < code.score
    both = rank.score(rank.Signals("c", code="github.com", page="github.io"), W)
    assert [r.kind for r in both.reasons] == ["code"]
    assert rank.code_host("https://huggingface.co/datasets/a/b", "https://arxiv.org/x") is None
    assert rank.code_host("https://huggingface.co/spaces/a") == "huggingface.co"
    assert rank.changed_words("a b c", "a b c") == 0
    assert rank.changed_words("We use x.", "We use y and z.") == 4


def test_last_announcement_is_the_window_before_the_newest_version():
    t = dt.datetime(2026, 6, 26, 12, tzinfo=dt.UTC).timestamp()
    times = [("a", t), ("b", t - 23 * 3600), ("c", t - 25 * 3600)]
    assert rank.last_announcement(times, W) == ["a", "b"]


def test_the_digest_queue_serves_head_hf_follows_new_versions_then_newest():
    ids = ["rest-new", "revised", "followed", "hf-few", "hf-many", "head-2", "head-1"]
    candidates = pd.DataFrame({"arxiv_id": ids, "version": [1, 2, 1, 1, 1, 1, 1],
                               "title": ids, "abstract": ["x"] * len(ids)})
    existing = {("revised", 1, "zh-CN", "m", "h"): {"status": "ok", "attempts": 1,
                                                    "next_attempt_after": None}}
    places = {"head-1": (HEAD, 0), "head-2": (HEAD, 1), "hf-many": (PICKS, -45),
              "hf-few": (PICKS, -3), "followed": (FOLLOWED, 0)}
    now = dt.datetime(2026, 6, 26, tzinfo=dt.UTC)
    todo = plan(candidates, existing, "zh-CN", "m", "h", 3, now, places).todo
    assert [p.arxiv_id for p, _ in todo] == ["head-1", "head-2", "hf-many", "hf-few",
                                             "followed", "revised", "rest-new"]


# -- the built site ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site_built(tmp_path_factory):
    cfg = make_config(tmp_path_factory.mktemp("rank"), base_url="https://example.org/")
    store = run_pipeline(cfg, DAYS)
    best = head(cfg, store.library(), store.read("versions"))[0]
    add_digest(store, best.arxiv_id, 1, at(DAYS[-1]), "一句话导读。")
    build_at_last_run(cfg)
    return cfg


@pytest.mark.slow  # builds the site
def test_the_digest_queue_and_the_site_rank_alike(site_built):
    """One ranking, two readers: the queue's head is the picks page's order."""
    store = Store(site_built.store_path)
    places = queue(site_built, store.library(), store.read("versions"))
    first = sorted((p for p in places.items() if p[1][0] == HEAD), key=lambda p: p[1])
    page = (site_built.output_path / "brief" / "top" / "index.html").read_text("utf-8")
    shown = re.findall(r'<li><article class="card" id="p-([^"]+)"', page)
    assert [i for i, _ in first] == shown and len(shown) == 50
    sources = (site_built.output_path / "sources" / "index.html").read_text("utf-8")
    assert "最近一次发布的今日精选前 50 篇中，1 篇已有 AI 导读。" in sources


@pytest.mark.slow  # builds the site
def test_picks_lead_the_home_page_under_the_overview_with_their_chips(site_built):
    html = (site_built.output_path / "index.html").read_text(encoding="utf-8")
    # right under the totals and their freshness line; then the reference page's order
    # (统计口径与数据新鲜度, then the library)
    overview, picks, freshness, library = (html.index(f'id="{x}"') for x in (
        "overview", "top-picks", "freshness", "library"))
    assert overview < picks < freshness < library
    block = html[picks:library]
    assert block.count('<ul class="reasons"') == 10  # HOME_TOP
    tiers = "主会|研讨会|期刊|其他会议|Findings"  # each venue chip says its tier
    assert re.search(rf'<li class="reason-venue">[^<]* · (?:{tiers}) <small>', block)
    assert 'href="brief/top/"' in block


@pytest.mark.slow  # builds the site
def test_picks_page_groups_the_rest_and_every_day_has_one(site_built):
    out = site_built.output_path
    page = (out / "brief" / "top" / "index.html").read_text(encoding="utf-8")
    assert page.count('<ul class="reasons"') == 50  # [rank] top
    assert page.count('<details class="group">') >= 2
    for day in DAYS[-3:]:
        day_page = out / "brief" / day / "top" / "index.html"
        new = (out / "brief" / day / "new" / "index.html").read_text(encoding="utf-8")
        if day_page.exists():
            assert 'id="top-picks"' not in new  # the brief opens with its own list
            assert f'href="../../../brief/{day}/top/"' in new  # its day's picks a link away


@pytest.mark.slow  # builds the site
def test_the_top_feed_parses_and_has_one_entry_per_day_and_paper(site_built):
    feeds = site_built.output_path / "feeds"
    atom, rss = (feeds / "top.atom.xml").read_bytes(), (feeds / "top.rss.xml").read_bytes()
    assert atom_errors(atom) == [] and rss_errors(rss) == []
    ids = re.findall(rb"<id>tag:[^<]*:paper/([^<]+)</id>", atom)
    assert ids and len(ids) == len(set(ids))
    assert all(re.fullmatch(rb"[\w./-]+/top/\d{4}-\d{2}-\d{2}", i) for i in ids)


@pytest.mark.slow  # builds the site
@pytest.mark.parametrize("width", [1366, 390])
def test_home_page_order_in_chromium(site_built, browser, width):
    from tests.support.servers import serve
    with serve(site_built.output_path) as url:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(url + "index.html")
        tops = [page.locator(sel).bounding_box()["y"] for sel in (
            "#overview", "#top-picks", "ol.ranked > li:first-child", "#freshness",
            "#library")]
        assert tops == sorted(tops)
        chip = page.locator("ol.ranked ul.reasons li").first.bounding_box()
        assert chip["x"] + chip["width"] <= width  # chips wrap, never past the screen
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.close()


@pytest.mark.slow
def test_a_follow_by_initials_puts_the_paper_in_the_queue_as_the_site_matches_it(site_built):
    store = Store(site_built.store_path)
    library, versions = store.library(), store.read("versions")
    placed = queue(site_built, library, versions)
    arxiv_id, authors = next((r["arxiv_id"], r["authors"]) for r in
                             library.select(["arxiv_id", "authors"]).to_pylist()
                             if r["arxiv_id"] not in placed and r["authors"]
                             and len(r["authors"][0].split()) == 2)
    first, last = authors[0].split()
    initials = f"{first[0]}. {last}"

    def follow(match_initials: bool) -> dict:
        cfg = dataclasses.replace(site_built, follows=(
            Follow(name="advisor", authors=(initials,), match_initials=match_initials),))
        return queue(cfg, library, versions)

    assert follow(True).get(arxiv_id) == (FOLLOWED, 0)
    assert arxiv_id not in follow(False)


@pytest.mark.parametrize(("line", "said"), [
    ("venue = 3.0", "replaced by one weight per venue tier: venue_main"),  # the flat weight
    ("venue_workshop = -1", "0 to 100 points"),
    ("max_category_share = 0", "0.05 to 1"),
    ("project_page = \"high\"", "rank.project_page"),
])
def test_a_bad_rank_key_or_value_exits_2_naming_file_and_key(tmp_path, line, said):
    from click.testing import CliRunner

    from pipeline.cli import cli
    path = tmp_path / "papertrail.toml"
    path.write_text(f"[rank]\n{line}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "status"])
    assert result.exit_code == 2
    key = line.split(" =")[0]
    assert str(path) in result.output and f"rank.{key}" in result.output and said in result.output
