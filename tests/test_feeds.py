"""The feeds a subscriber reads: every paper of a big announcement, revisions per version,
daily briefs, a fork's own follows, and files that validate (RFC 4287's schema for Atom, a
structural check for RSS 2.0, feedparser), built from a store the real pipeline filled
through the arXiv replay and served over HTTP."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import shutil
import urllib.request
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner
from lxml import etree

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline import ingest
from pipeline.cli import cli
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.sample import Entry
from pipeline.site.model import data as site_data
from pipeline.site.model import views
from pipeline.site.pages import feeds as feeds_page
from pipeline.site.pages import paper as paper_pages
from pipeline.site.render.feeds import FeedSite, FeedSpec
from pipeline.site.render.feeds import render as render_feed
from pipeline.store import Store
from tests.feedcheck import atom_errors, opml_urls, rss_errors
from tests.support.replays import fast_arxiv
from tests.support.servers import serve
from tests.support.site import add_digest, make_config

pytestmark = pytest.mark.slow  # builds sites

THEME = Path(__file__).resolve().parents[1] / "theme"

ATOM = {"a": "http://www.w3.org/2005/Atom"}
T0 = dt.datetime(2026, 6, 22, 1, 0, tzinfo=dt.UTC)  # the first run: 1,200 papers at once
BATCH = 1200
WATCHED = "2606.10000"
MATH = r"We bound the rate by $\alpha\in[0,\infty]$ and $\mathcal{O}(n)$."


def _entry(i: int, **changes: object) -> Entry:
    ai = i % 3 != 0  # two in three in cs.CL (AI-related), the rest in cs.DS
    return dataclasses.replace(Entry(
        arxiv_id=f"2606.{10000 + i}", version=1, title=f"Paper {i} on topic {i * 7919 % 1000}",
        abstract=(MATH if i == 1 else f"Abstract {i}: a study of case {i * 104729}."),
        authors=(f"Author {i}", "Shared Person", f"Third {i % 17}"),
        categories=("cs.CL",) if ai else ("cs.DS",), comment=None, journal_ref=None,
        doi=None, published=T0 - dt.timedelta(hours=2), updated=T0 - dt.timedelta(hours=2),
        announced=T0 - dt.timedelta(hours=1)), **changes)


def _config(root: Path, base_url: str, **site: object) -> config_mod.Config:
    return make_config(root, None, f'[[follows]]\nname = "mine"\nwatch = ["{WATCHED}"]\n'
                       'authors = ["Author 5"]\n', output="out", base_url=base_url, **site)


def _fill(cfg: config_mod.Config) -> Store:
    """Run 1: 1,200 new papers at once. Run 2: arXiv adds a DOI to the watched paper
    (same version). Run 3, the next day: its v2, whose comment says it was accepted."""
    store = Store(cfg.store_path)
    entries = [_entry(i) for i in range(BATCH)]
    with ArxivReplay(entries) as api:
        fast = fast_arxiv(cfg, api.url, page_size=500)
        for when in (T0, T0 + dt.timedelta(hours=3), T0 + dt.timedelta(days=1)):
            if when == T0 + dt.timedelta(hours=3):
                api.entries[0] = dataclasses.replace(entries[0], doi="10.1000/pt.1")
            if when == T0 + dt.timedelta(days=1):
                api.entries.append(dataclasses.replace(
                    entries[0], version=2, doi="10.1000/pt.1", title="Paper 0, revised",
                    comment="Accepted at ICML 2026", updated=when - dt.timedelta(hours=4),
                    announced=when - dt.timedelta(hours=2)))
            api.as_of = when
            ingest.ingest_arxiv(fast, store, now=when)
    add_digest(store, "2606.10002", 1, T0 + dt.timedelta(hours=1), "一句话导读")
    return store


def _build(cfg: config_mod.Config) -> build_mod.BuildReport:
    runs = Store(cfg.store_path).read("runs").to_pylist()
    return build_mod.build(cfg, now=max(r["finished"] for r in runs))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The built site served on 127.0.0.1, its base_url the server's own URL."""
    root = tmp_path_factory.mktemp("feeds")
    (root / "out").mkdir()
    with serve(root / "out") as url:
        cfg = _config(root, url)
        store = _fill(cfg)
        _build(cfg)
        yield cfg, store, url


def _feed(cfg, slug: str, ext: str = "atom"):
    return feedparser.parse((cfg.output_path / "feeds" / f"{slug}.{ext}.xml").read_bytes())


def _keys(feed) -> list[str]:
    return [e.id.split(",2026:", 1)[1] for e in feed.entries]


def _papers_in(cfg, slug: str) -> set[str]:
    """The papers a feed carries: its paper entries, and the papers a brief's lists link."""
    data = (cfg.output_path / "feeds" / f"{slug}.atom.xml").read_text(encoding="utf-8")
    return set(re.findall(r"(?:,2026:paper/|/paper/|arxiv\.org/abs/)(\d{4}\.\d{5})", data))


def _site(cfg):
    return site_data.compute(cfg, views.load(cfg, Store(cfg.store_path)), THEME)


def test_a_run_that_brings_1200_papers_puts_every_one_in_a_feed_of_its_kind(served):
    """1,200 papers at once pass the 1 MB cap: the full feed keeps the newest, its light
    twin more, and the daily brief feed's day list the rest."""
    cfg, store, _ = served
    papers = store.read("papers").to_pylist()
    assert len(papers) == BATCH
    ai = {p["arxiv_id"] for p in papers if p["ai_related"]}
    assert 0 < len(ai) < BATCH
    every = {p["arxiv_id"] for p in papers}
    full = _papers_in(cfg, "all")
    assert 100 < len(full) < BATCH  # capped: the rest are in the light and brief feeds
    assert len(_papers_in(cfg, "light/all")) > len(full)
    assert full | _papers_in(cfg, "light/all") | _papers_in(cfg, "brief/new") == every
    assert _papers_in(cfg, "ai") | _papers_in(cfg, "light/ai") | _papers_in(
        cfg, "brief/ai") == ai
    assert _papers_in(cfg, "category/cs.DS") | _papers_in(cfg, "brief/category/cs.DS") == {
        p["arxiv_id"] for p in papers if p["categories"] == ["cs.DS"]}


def test_every_paper_of_the_window_is_in_some_feed(served):
    cfg, _, _ = served
    site = _site(cfg)
    window = {p.arxiv_id for p in feeds_page.window(site)}
    assert len(window) == BATCH
    held: set[str] = set()
    for spec in site.feeds:
        held |= _papers_in(cfg, spec.slug)
    assert window <= held


def test_every_feed_the_site_writes_validates_within_the_cap(served):
    """Walks the feeds the feeds page kind writes (the site's FeedSpecs), not a list."""
    cfg, _, url = served
    site = _site(cfg)
    written = sorted((cfg.output_path / "feeds").rglob("*.xml"))
    assert {p.relative_to(cfg.output_path / "feeds").as_posix() for p in written} == {
        f"{spec.slug}.{kind}.xml" for spec in site.feeds for kind in ("atom", "rss")}
    assert sum(s.slug.startswith("light/") for s in site.feeds) == 9  # all but the briefs
    for path in written:
        data = path.read_bytes()
        assert len(data) <= cfg.site.feed_max_mb * 1_000_000, path
        parsed = feedparser.parse(data)
        assert not parsed.bozo, (path, parsed.get("bozo_exception"))
        errors = atom_errors(data) if path.name.endswith(".atom.xml") else rss_errors(data)
        assert errors == [], (path, errors[:5])
    urls = opml_urls((cfg.output_path / "feeds.opml").read_bytes())
    assert len(urls) == len(written) // 2  # Atom only: its RSS twin has the same entries
    for feed_url in urls:
        assert feed_url.startswith(url)
        with urllib.request.urlopen(feed_url, timeout=10) as response:
            assert response.status == 200
            assert feedparser.parse(response.read()).feed.title.startswith("研踪")


def test_a_light_feed_has_the_full_ones_entries_in_a_fraction_of_the_bytes(served):
    cfg, _, url = served
    site = _site(cfg)
    for spec in site.feeds:
        if not spec.slug.startswith("light/"):
            continue
        full_slug = spec.slug.removeprefix("light/")
        full, light = _feed(cfg, full_slug), _feed(cfg, spec.slug)
        capped = [e for e in full.entries if "条未列出" in e.title]
        full_ids = [e.id for e in full.entries if e not in capped]
        light_ids = [e.id for e in light.entries if "条未列出" not in e.title]
        if capped:
            assert light_ids[:len(full_ids)] == full_ids, spec.slug
        else:
            assert light_ids == full_ids, spec.slug
        assert [e.link for e in light.entries[:len(full_ids)]] == [
            e.link for e in full.entries[:len(full_ids)]]
    light = {e.id.split(",2026:", 1)[1]: e for e in _feed(cfg, "light/all").entries}
    digested = light["paper/2606.10002"]
    assert digested.content[0].value == "<p>一句话导读</p>"  # the one-line digest, no abstract
    assert [a.name for a in digested.authors] == ["Author 2", "Shared Person", "Third 2"]
    text = (cfg.output_path / "feeds/light/all.atom.xml").read_text(encoding="utf-8")
    assert "Abstract 2:" not in text and "摘要" not in text
    briefs = (cfg.output_path / "brief" / "index.html").read_text(encoding="utf-8")
    assert 'href="../feeds/light/all.atom.xml"' in briefs
    opml = (cfg.output_path / "feeds.opml").read_text(encoding="utf-8")
    assert f"{url}feeds/light/all.atom.xml" in opml and f"{url}feeds/all.atom.xml" in opml


def test_a_run_that_brings_nothing_leaves_every_feed_byte_identical(served, tmp_path):
    """A poller's conditional request gets 304 only if the bytes stay: no feed is dated
    by the build's clock, an empty one neither."""
    cfg, _, _ = served
    shutil.copytree(cfg.output_path, tmp_path / "out")
    later = dataclasses.replace(cfg, site=dataclasses.replace(
        cfg.site, output=tmp_path / "out"))
    feeds = {p: p.read_bytes() for p in (tmp_path / "out" / "feeds").rglob("*.xml")}
    runs = Store(cfg.store_path).read("runs").to_pylist()
    build_mod.build(later, now=max(r["finished"] for r in runs) + dt.timedelta(hours=6))
    assert {p: p.read_bytes() for p in feeds} == feeds
    spec = FeedSpec("empty", "Empty")
    for hours in (0, 6):
        fs = FeedSite("T", "https://example.org/", "en", T0 + dt.timedelta(hours=hours))
        atom, rss, _ = render_feed(spec, [], fs, max_bytes=10_000, note=_no_note)
        assert b"<updated>2026-01-01T00:00:00Z</updated>" in atom
        assert b"Thu, 01 Jan 2026 00:00:00 GMT" in rss


def _no_note(left_out):
    raise AssertionError("an empty feed is never capped")


def test_every_feed_links_itself_and_its_page(served):
    cfg, _, url = served
    for slug, page in (("all", ""), ("category/cs.CL", "category/cs.CL/"), ("me", "me/"),
                       ("brief/new", "brief/")):
        atom = etree.parse(str(cfg.output_path / "feeds" / f"{slug}.atom.xml")).getroot()
        links = {x.get("rel"): x.get("href") for x in atom.findall("a:link", ATOM)}
        assert links == {"self": f"{url}feeds/{slug}.atom.xml", "alternate": url + page}
        rss = _feed(cfg, slug, "rss")
        assert rss.feed.link == url + page


def test_an_entry_links_our_page_and_arxiv_with_one_author_element_each(served):
    cfg, _, url = served
    tree = etree.parse(str(cfg.output_path / "feeds" / "category" / "cs.CL.atom.xml"))
    (entry,) = [e for e in tree.iterfind("a:entry", ATOM)
                if e.findtext("a:id", namespaces=ATOM).endswith("paper/2606.10001")]
    links = {(x.get("rel"), x.get("href")) for x in entry.findall("a:link", ATOM)}
    assert links == {("alternate", f"{url}paper/2606.10001.html"),
                     ("related", "https://arxiv.org/abs/2606.10001v1"),
                     ("related", "https://arxiv.org/pdf/2606.10001v1")}
    assert [a.findtext("a:name", namespaces=ATOM) for a in entry.findall("a:author", ATOM)] \
        == ["Author 1", "Shared Person", "Third 1"]
    assert [c.get("term") for c in entry.findall("a:category", ATOM)] == ["cs.CL"]
    rss = etree.parse(str(cfg.output_path / "feeds" / "category" / "cs.CL.rss.xml"))
    (item,) = [i for i in rss.iter("item") if i.findtext("link").endswith("2606.10001.html")]
    creators = item.findall("{http://purl.org/dc/elements/1.1/}creator")
    assert [c.text for c in creators] == ["Author 1", "Shared Person", "Third 1"]


def test_math_reaches_the_reader_as_unicode_and_the_digest_comes_first(served):
    cfg, _, _ = served
    entries = {e.id.split(",2026:", 1)[1]: e for e in _feed(cfg, "category/cs.CL").entries}
    text = entries["paper/2606.10001"].content[0].value
    assert "α∈[0,∞]" in text and "𝒪(n)" in text and "$" not in text and "\\alpha" not in text
    digested = entries["paper/2606.10002"].content[0].value
    assert digested.index("一句话导读") < digested.index("Abstract 2:")
    assert "test-model" in digested  # the model is named; the label says machine-written
    assert "机器生成" in digested


def test_revisions_hold_one_entry_per_version_titled_with_it_and_what_changed(served):
    cfg, _, _ = served
    feed = _feed(cfg, "revisions")
    assert _keys(feed) == [f"paper/{WATCHED}v2"]
    (entry,) = feed.entries
    assert entry.title == "[v2] Paper 0, revised"
    html = entry.content[0].value
    assert "v2 的变化" in html and "<del>0 on topic 0</del>" in html
    assert "<ins>Accepted at ICML 2026</ins>" in html  # the comment, as each version had it


def test_a_watched_paper_fires_on_its_doi_its_new_version_and_its_acceptance(served):
    cfg, _, _ = served
    keys = _keys(_feed(cfg, "me"))
    watch = [k for k in keys if k.startswith("watch/")]
    # newest first; events seen together (v2 and its comment) by key
    assert watch == [f"watch/{WATCHED}/v2/accepted", f"watch/{WATCHED}/v2",
                     f"watch/{WATCHED}/v1/doi", f"watch/{WATCHED}/v1"]
    entries = {e.id.split(",2026:", 1)[1]: e for e in _feed(cfg, "me").entries}
    assert "10.1000/pt.1" in entries[f"watch/{WATCHED}/v1/doi"].content[0].value
    assert entries[f"watch/{WATCHED}/v2"].title == "[v2] Paper 0, revised"
    # ... and the author followed: their paper, with why
    assert "paper/2606.10005" in keys
    assert "Author 5" in entries["paper/2606.10005"].content[0].value
    page = (cfg.output_path / "me" / "index.html").read_text(encoding="utf-8")
    assert WATCHED in page and "10.1000/pt.1" in page and "Accepted at ICML 2026" in page


def test_the_daily_brief_feed_has_one_entry_a_day_listing_every_paper_of_it(served):
    cfg, _, url = served
    feed = _feed(cfg, "brief/new")
    assert [e.title for e in feed.entries] == [f"6月22日 · {BATCH} 篇新论文 · 其中 AI 800"]
    (entry,) = feed.entries
    assert entry.link == f"{url}brief/2026-06-22/new/"
    assert entry.content[0].value.count("<li>") == BATCH
    digests = _feed(cfg, "brief/digests")
    assert "一句话导读" in digests.entries[0].content[0].value


def test_rebuilding_keeps_every_byte_and_new_data_keeps_every_entry_id(served, tmp_path):
    cfg, _, _ = served
    feeds = {p: p.read_bytes() for p in (cfg.output_path / "feeds").rglob("*.xml")}
    report = _build(cfg)
    assert report.written == 0
    assert {p: p.read_bytes() for p in feeds} == feeds
    before = {e.id: e.title for e in _feed(cfg, "category/cs.DS").entries}
    # A copy of the store a day later, with one more paper: the old entries keep their ids.
    shutil.copytree(cfg.store_path, tmp_path / "data")
    later = dataclasses.replace(
        cfg, store=config_mod.StoreConfig(tmp_path / "data"),
        site=dataclasses.replace(cfg.site, output=tmp_path / "out"))
    store = Store(later.store_path)
    with ArxivReplay([_entry(BATCH, announced=T0 + dt.timedelta(days=1, hours=1),
                             updated=T0 + dt.timedelta(days=1))]) as api:
        api.as_of = T0 + dt.timedelta(days=1, hours=2)
        ingest.ingest_arxiv(fast_arxiv(later, api.url), store, now=api.as_of)
    _build(later)
    after = {e.id: e.title for e in feedparser.parse(
        (tmp_path / "out" / "feeds" / "category" / "cs.DS.atom.xml").read_bytes()).entries}
    assert before.items() <= after.items() and len(after) == len(before) + 1


def test_a_feed_past_its_byte_cap_ends_with_an_entry_saying_so(served, tmp_path):
    cfg, _, url = served
    shutil.copytree(cfg.output_path, tmp_path / "out")  # times kept: pages count as built
    capped = dataclasses.replace(cfg, site=dataclasses.replace(
        cfg.site, output=tmp_path / "out", feed_max_mb=0.2))
    keys = (tmp_path / "out" / paper_pages.CACHE).read_bytes()
    _build(capped)
    # A feed setting: every paper page's key stays, so none is rendered again.
    assert (tmp_path / "out" / paper_pages.CACHE).read_bytes() == keys
    for ext in ("atom", "rss"):
        path = tmp_path / "out" / "feeds" / f"all.{ext}.xml"
        assert 150_000 < path.stat().st_size <= 200_000
        feed = feedparser.parse(path.read_bytes())
        assert not feed.bozo
        *kept, last = feed.entries
        n = int(re.fullmatch(r"另有 (\d+) 条未列出：此订阅源以 0\.2 MB 为限", last.title)[1])
        assert len(kept) + n == BATCH and len(kept) > 50
        assert last.link == f"{url}brief/2026-06-22/new/"
        assert f"{url}feeds/brief/new.atom.xml" in last.content[0].value if ext == "atom" \
            else f"{url}feeds/brief/new.atom.xml" in last.description


def test_every_link_of_a_capped_feeds_last_entry_leads_to_a_page(tmp_path):
    """All 300 papers accepted somewhere: the accepted feed is capped too, and it has no
    brief feed to point to."""
    url = "https://example.org/"
    cfg = _config(tmp_path, url, feed_max_mb=0.05)
    with ArxivReplay([_entry(i, comment="Accepted at ICML 2026") for i in range(300)]) as api:
        api.as_of = T0
        ingest.ingest_arxiv(fast_arxiv(cfg, api.url, page_size=500), Store(cfg.store_path),
                            now=T0)
    _build(cfg)
    capped = {}
    for path in sorted((cfg.output_path / "feeds").rglob("*.atom.xml")):
        entries = feedparser.parse(path.read_bytes()).entries
        if entries and "条未列出" in (last := entries[-1]).title:
            capped[path.relative_to(cfg.output_path / "feeds").as_posix()] = [
                last.link, *re.findall(r'href="([^"]+)"', last.content[0].value)]
    assert {"all.atom.xml", "accepted.atom.xml", "category/cs.CL.atom.xml"} <= capped.keys()
    for links in capped.values():
        for link in links:
            assert link.startswith(url)
            target = cfg.output_path / link.removeprefix(url)
            assert (target / "index.html" if link.endswith("/") else target).is_file(), link


def test_the_base_url_comes_from_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "papertrail.toml"
    path.write_text("[site]\n", encoding="utf-8")
    monkeypatch.setenv("PAPERTRAIL_SITE_BASE_URL", "https://you.github.io/fork/")
    assert config_mod.load(path).site.base_url == "https://you.github.io/fork/"
    monkeypatch.setenv("PAPERTRAIL_SITE_BASE_URL", "javascript:alert(1)")
    with pytest.raises(config_mod.ConfigError, match=r"site\.base_url"):
        config_mod.load(path)


def test_publishing_without_a_base_url_fails_before_any_work(tmp_path, monkeypatch):
    monkeypatch.delenv("PAPERTRAIL_SITE_BASE_URL", raising=False)
    path = tmp_path / "papertrail.toml"
    path.write_text('[store]\npath = "data"\n[site]\noutput = "out"\n', encoding="utf-8")
    for command in (["build", "--publish"], ["run", "--publish"]):
        result = CliRunner().invoke(cli, ["--config", str(path), *command])
        assert result.exit_code == 2, result.output
        assert "site.base_url = ''" in result.output and "PAPERTRAIL_SITE_BASE_URL" in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "data").exists()


def test_a_local_build_says_the_feeds_need_a_base_url(tmp_path, monkeypatch):
    monkeypatch.delenv("PAPERTRAIL_SITE_BASE_URL", raising=False)
    path = tmp_path / "papertrail.toml"
    path.write_text('[store]\npath = "data"\n[site]\noutput = "out"\n', encoding="utf-8")
    line = build_mod.build(config_mod.load(path)).line()
    assert "no [site] base_url" in line and "feeds.opml and sitemap.xml" in line
    feed = feedparser.parse((tmp_path / "out" / "feeds" / "all.atom.xml").read_bytes())
    assert not feed.bozo and feed.feed.links[0].href == "../"  # relative, as said


def test_an_english_build_writes_english_feeds_that_validate(served, tmp_path):
    cfg = served[0]
    english = dataclasses.replace(cfg, site=dataclasses.replace(
        cfg.site, output=tmp_path / "out", language="en"))
    _build(english)
    feeds = tmp_path / "out" / "feeds"
    brief = feedparser.parse((feeds / "brief" / "new.atom.xml").read_bytes())
    assert [e.title for e in brief.entries] == [f"Jun 22 · {BATCH} new papers · 800 AI-related"]
    (revision,) = feedparser.parse((feeds / "revisions.atom.xml").read_bytes()).entries
    assert "What changed in v2" in revision.content[0].value
    assert "：" not in revision.content[0].value  # no Chinese punctuation in English text
    for path in feeds.rglob("*.atom.xml"):
        assert atom_errors(path.read_bytes()) == [], path
