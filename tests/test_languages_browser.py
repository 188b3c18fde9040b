"""The site in two languages in a real browser (Debian's chromium via Playwright): the
switch opens the same paper in the other language, and the English pages' chrome, with
their scripts run, holds none of the Chinese catalogue's words."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from pipeline.site import i18n
from tests.support.servers import serve
from tests.support.site import (
    DAYS,
    add_digest,
    at,
    build_at_last_run,
    in_languages,
    make_config,
    run_pipeline,
)

pytestmark = pytest.mark.slow  # builds the sample's site in two languages

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]{2,}")
# What the English pages show, their scripts run: lists, a paper full and revised, the
# searches, the follow page, 为你推荐, the sources, the HF board, a brief, the about page.
EN_PAGES = ("index.html", "paper/{paper}.html", "paper/{revised}.html",
            "search/?q=diffusion", "follow/", "for-you/?seed={paper}", "sources/", "hf/",
            "accepted/", "brief/", "topic/", "category/", "about/", "library/updated/all/")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    cfg = in_languages(make_config(tmp_path_factory.mktemp("languages-browser")),
                       "zh-CN", "en")
    store = run_pipeline(cfg, DAYS)
    papers = store.read("papers").to_pylist()
    paper = papers[0]["arxiv_id"]
    add_digest(store, paper, 1, at(DAYS[-1]) - dt.timedelta(minutes=5), "只有中文的导读。")
    build_at_last_run(cfg)
    revised = next(p["arxiv_id"] for p in papers if p["version"] > 1)
    with serve(cfg.output_path) as url:
        yield cfg, url, paper, revised


def chinese_words() -> set[str]:
    """Runs of Chinese in the zh-CN catalogue that the English one does not hold."""
    en = " ".join(i18n.strings("en").values())
    return {w for value in i18n.strings("zh-CN").values() for w in CJK.findall(value)
            if w not in en}


def test_the_switch_opens_the_same_paper_in_the_other_language(page, site):
    _, url, paper, _ = site
    page.goto(f"{url}paper/{paper}.html")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    title = page.locator("h1").inner_text()
    page.locator("nav.languages a[hreflang=en]").click()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{url}en/paper/{paper}.html"
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator("h1").inner_text() == title
    assert page.locator(f'a[href^="https://arxiv.org/abs/{paper}"]').count() >= 1
    # its digest is Chinese only: said so, and marked as Chinese for screen readers
    said = i18n.strings("en")["digest_other_language"].format(language="Chinese")
    assert page.get_by_text(said).is_visible()
    assert page.locator('dl[lang="zh-CN"]').count() == 1
    page.locator("nav.languages a[hreflang=zh-CN]").click()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{url}paper/{paper}.html"


@pytest.mark.parametrize("path", EN_PAGES)
def test_english_pages_show_no_chinese_catalogue_words(page, site, path):
    _, url, paper, revised = site
    page.goto(url + "en/" + path.format(paper=paper, revised=revised))
    page.wait_for_load_state("networkidle")
    assert page.locator("html").get_attribute("lang") == "en"
    # what is marked as another language (a digest in Chinese, the switch's 中文) and the
    # site's own name ([site] title) aside
    text = page.evaluate("""() => {
        const body = document.body.cloneNode(true);
        for (const el of body.querySelectorAll('[lang]:not([lang=en]), .brand, script'))
            el.remove();
        document.body.after(body); body.hidden = false;
        const text = body.innerText; body.remove(); return text; }""")
    shown = {w for w in chinese_words() if w in text}
    assert shown == set(), shown
    assert page.locator("nav.languages a[hreflang=zh-CN]").count() == 1
