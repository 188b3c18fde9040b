"""The site in two languages ([site] languages): the default at the root, the other under
en/, every page linking its counterpart (the switch, hreflang), feeds in each language,
digests in the reader's language where one exists and said to be in the other where not.
The built site is walked as a reader's browser and a crawler would."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest

from pipeline import build as build_mod
from pipeline.site import i18n
from tests.feedcheck import atom_errors, rss_errors
from tests.support.site import (
    BASE_URL,
    DAYS,
    BuiltSite,
    add_digest,
    at,
    build_at_last_run,
    in_languages,
    make_config,
    parse,
    run_pipeline,
)

pytestmark = pytest.mark.slow  # builds the sample's site in two languages

EN = i18n.strings("en")
ZH = i18n.strings("zh-CN")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuiltSite, str, str]:
    """The sample's site, zh-CN at the root and en under en/; one paper digested in Chinese
    only, another in both languages."""
    cfg = in_languages(make_config(tmp_path_factory.mktemp("bilingual"), base_url=BASE_URL),
                       "zh-CN", "en")
    store = run_pipeline(cfg, DAYS)
    first, second = (p["arxiv_id"] for p in store.read("papers").to_pylist()[:2])
    when = at(DAYS[-1]) - dt.timedelta(minutes=5)
    add_digest(store, first, 1, when, "只有中文的导读。")
    add_digest(store, second, 1, when, "中文导读。")
    add_digest(store, second, 1, when, "An English digest.", language="en")
    return BuiltSite(cfg, store, build_at_last_run(cfg)), first, second


def pages(out: Path) -> dict[str, Path]:
    """The site's pages (not 404.html, served at any address), by path under `out`."""
    return {str(p.relative_to(out)): p for p in out.rglob("*.html") if p.name != "404.html"}


def alternates(path: Path) -> dict[str, str]:
    return {a["hreflang"] or "": a["href"] or "" for tag, a in parse(path).tags
            if tag == "link" and a.get("rel") == "alternate" and a.get("hreflang")}


def switch(path: Path) -> list[str]:
    html = path.read_text("utf-8")
    nav = re.search(r'<nav class="languages"[^>]*>(.*?)</nav>', html)
    assert nav, path
    return re.findall(r'href="([^"]+)"', nav.group(1))


def test_every_page_has_its_counterpart_and_the_pair_of_hreflang_links(site):
    built, _, _ = site
    out = built.out
    zh = {p: f for p, f in pages(out).items() if not p.startswith("en/")}
    en = {p.removeprefix("en/"): f for p, f in pages(out).items() if p.startswith("en/")}
    assert len(zh) > 1000 and zh.keys() == en.keys()  # the sample's days: all in both
    for rel in zh:
        url = BASE_URL + rel.removesuffix("index.html")
        en_url = BASE_URL + "en/" + rel.removesuffix("index.html")
        want = {"zh-CN": url, "en": en_url, "x-default": url}
        assert alternates(zh[rel]) == want, rel
        assert alternates(en[rel]) == want, rel
        assert '<html lang="zh-CN">' in zh[rel].read_text("utf-8")
        assert '<html lang="en">' in en[rel].read_text("utf-8")


def test_the_switch_links_the_same_page_in_the_other_language(site):
    built, _, _ = site
    out = built.out
    for rel, path in pages(out).items():
        links = switch(path)
        assert len(links) == 1, rel
        target = (path.parent / links[0]).resolve()
        target = target / "index.html" if links[0].endswith("/") else target
        assert target.is_file(), (rel, links[0])
        other = f"en/{rel}" if not rel.startswith("en/") else rel.removeprefix("en/")
        assert target == (out / other).resolve(), rel


def test_the_sitemap_lists_both_languages(site):
    built, _, _ = site
    sitemap = (built.out / "sitemap.xml").read_text("utf-8")
    locs = set(re.findall(r"<loc>([^<]+)</loc>", sitemap))
    assert BASE_URL + "sources/" in locs and BASE_URL + "en/sources/" in locs
    zh = {loc for loc in locs if not loc.startswith(BASE_URL + "en/")}
    assert {loc.replace(BASE_URL, BASE_URL + "en/", 1) for loc in zh} <= locs


def test_each_language_has_its_feeds_valid_in_its_own_words(site):
    built, _, _ = site
    out = built.out
    for root, s, base in ((out, ZH, BASE_URL), (out / "en", EN, BASE_URL + "en/")):
        feed = (root / "feeds" / "all.atom.xml").read_bytes()
        assert atom_errors(feed) == []
        assert s["feed_all"].encode() in feed
        assert f'href="{base}feeds/all.atom.xml"'.encode() in feed  # its own address
        assert rss_errors((root / "feeds" / "all.rss.xml").read_bytes()) == []
        assert f'xmlUrl="{base}feeds/all.atom.xml"' in (root / "feeds.opml").read_text("utf-8")
    en_feed = (out / "en" / "feeds" / "all.atom.xml").read_text("utf-8")
    assert not set(ZH["feed_all"]) & set(en_feed)  # no Chinese title in the English feed


def test_a_digest_in_the_readers_language_where_one_exists_else_said_to_be_other(site):
    built, only_zh, both = site
    en = built.out / "en" / "paper"
    page = (en / f"{only_zh}.html").read_text("utf-8")
    said = EN["digest_other_language"].format(language=EN["language_zh"])
    assert said in page and '<dl lang="zh-CN">' in page and "只有中文的导读。" in page
    page = (en / f"{both}.html").read_text("utf-8")
    assert "An English digest." in page and "中文导读。" not in page and said not in page
    zh = (built.out / "paper" / f"{both}.html").read_text("utf-8")
    assert "中文导读。" in zh and "An English digest." not in zh
    assert ZH["digest_other_language"].split("{")[0] not in zh


def test_the_other_language_carries_its_window_and_the_default_links_only_what_it_has(
        site, tmp_path):
    """[site] other_language_days = 1: the English pages hold the last day's papers; an
    older paper's Chinese page has no hreflang="en" and its switch opens the English home."""
    built, _, _ = site
    cfg = in_languages(make_config(tmp_path, base_url=BASE_URL), "zh-CN", "en",
                       other_language_days=1)
    shutil.copytree(built.cfg.store_path, cfg.store_path)
    report = build_at_last_run(cfg)
    out = cfg.output_path
    zh = {p.name for p in (out / "paper").glob("*.html")}
    en = {p.name for p in (out / "en" / "paper").glob("*.html")}
    assert en and en < zh
    old = out / "paper" / sorted(zh - en)[0]
    assert "en" not in alternates(old)
    assert switch(old) == ["../en/"]
    new = out / "paper" / sorted(en)[0]
    assert alternates(new)["en"].endswith(f"en/paper/{new.name}")
    note = EN["languages_window"].format(days=1, language=EN["language_zh"])
    assert note in (out / "en" / "index.html").read_text("utf-8")
    assert [lang for lang, _, _ in report.languages] == ["zh-CN", "en"]
    assert report.size_bytes == sum(size for _, _, size in report.languages)

    # English alone again: what the English build made is removed, nothing else
    cfg = in_languages(make_config(tmp_path), "zh-CN")
    again = build_mod.build(cfg, now=max(r["finished"] for r in
                                         built.store.read("runs").to_pylist()))
    assert not list((out / "en").rglob("*.html")) and again.removed >= len(en)
    home = (out / "index.html").read_text("utf-8")
    assert "hreflang" not in home and 'class="languages"' not in home



def test_both_languages_state_the_same_numbers(site):
    built, _, _ = site
    stat = re.compile(r'data-stat="(\w+)"[^>]*>([^<]+)<')
    zh = stat.findall((built.out / "index.html").read_text("utf-8"))
    assert zh and stat.findall((built.out / "en" / "index.html").read_text("utf-8")) == zh
