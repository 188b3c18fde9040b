"""What a reader meets first, in a real browser (Debian's chromium via Playwright) on the
sample's built site, at a phone's 390×844 and a desktop's 1366×900, light and dark: the
home page's picks on the first screen, the site's links behind a menu button on a phone,
briefs that open with their own list, a revision's page that opens with what changed,
follow buttons that name topics, and 为你推荐's seeds, empty state, mute buttons and dates."""

from __future__ import annotations

import re

import pytest
from lxml import html as lxml_html

from tests.support.servers import serve
from tests.support.site import XSS_ID
from tests.test_accessibility import AXE

PHONE, DESKTOP = (390, 844), (1366, 900)
READY = "() => document.getElementById('foryou-results').dataset.ready === '1'"


@pytest.fixture(scope="module", autouse=True)
def demo(demo_site):
    """The demo's site (it has topics), made before this module's browser opens: its digest
    step runs an event loop, which Playwright's open one would refuse."""
    return demo_site


@pytest.fixture(scope="module")
def site(zh_site):
    with serve(zh_site.out) as url:
        yield url, zh_site.out, zh_site.store.library().to_pylist()


def revised_page(out, papers) -> str:
    """A revised paper with its own page."""
    return next(p["arxiv_id"] for p in papers if p["version"] > 1 and p["arxiv_id"] != XSS_ID
                and (out / "paper" / f"{p['arxiv_id']}.html").exists())


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("size", "picks"), [(PHONE, 2), (DESKTOP, 3)])
def test_the_home_pages_first_screen_holds_the_picks(page, site, size, picks, scheme):
    """Two of 今日精选 (title and reasons) within a phone's first screen, three on a
    desktop's, under the totals (a phone) or beside them (a desktop)."""
    url, _, _ = site
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    page.emulate_media(color_scheme=scheme)
    page.goto(url + "index.html")
    cards = page.locator("#top-picks ~ ol.ranked > li")
    assert cards.count() >= picks
    for i in range(picks):
        card = cards.nth(i)
        title, why = card.locator("h3 a"), card.locator("ul.reasons li").first
        assert title.is_visible() and why.is_visible()
        assert card.bounding_box()["y"] + card.bounding_box()["height"] <= height
    totals = page.locator(".first-screen .numbers li").all()
    assert len(totals) == 4
    for stat in totals:
        box = stat.bounding_box()
        assert box["y"] + box["height"] <= height and box["x"] + box["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_site_links_are_a_menu_on_a_phone_and_a_row_on_a_desktop(page, site):
    url, _, _ = site
    page.set_viewport_size(dict(zip(("width", "height"), PHONE, strict=True)))
    page.goto(url + "index.html")
    menu, links = page.locator(".top details.menu"), page.locator(".top nav a")
    button = menu.locator("summary")
    assert button.is_visible() and not links.first.is_visible()
    assert button.bounding_box()["height"] >= 44  # a finger's target
    # by keyboard: the button is focusable, Enter opens it, Tab goes on to its first link
    button.focus()
    page.keyboard.press("Enter")
    assert menu.evaluate("d => d.open")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == links.first.text_content()
    for link in links.all():
        box = link.bounding_box()
        assert link.is_visible() and box["height"] >= 44 and box["x"] + box["width"] <= 390
    links.filter(has_text="简报").click()
    assert page.url.endswith("/brief/")
    # a desktop shows the links in the header, no button, without a script
    page.set_viewport_size(dict(zip(("width", "height"), DESKTOP, strict=True)))
    page.goto(url + "index.html")
    assert not button.is_visible()
    assert all(link.is_visible() for link in links.all())
    assert not menu.evaluate("d => d.open")  # shown by style.css alone


def test_a_brief_opens_with_its_own_list(page, site):
    """The revisions brief's first cards are revisions; its picks are a link away."""
    url, _, _ = site
    page.set_viewport_size(dict(zip(("width", "height"), PHONE, strict=True)))
    page.goto(url + "brief/24h/revised/")
    assert page.locator("ol.ranked").count() == 0
    first = page.locator("main article.card").first
    assert first.locator(".kind").text_content().startswith("修订")
    assert first.bounding_box()["y"] < 844
    link = page.locator("p.picks-link a")
    assert link.get_attribute("href").endswith("brief/top/")


def test_a_revisions_page_opens_with_what_changed(page, site):
    """Its version history under the title, the newest version's changes named first, its
    修订 tag a link there; the links, save, BibTeX and follow buttons after it."""
    url, out, papers = site
    arxiv_id = revised_page(out, papers)
    page.set_viewport_size(dict(zip(("width", "height"), PHONE, strict=True)))
    page.goto(url + f"paper/{arxiv_id}.html")
    timeline = page.locator("section.timeline")
    parts = timeline.locator("p.changed-parts")
    assert re.fullmatch(r"v\d+ 与上一版相比改了：\S+", parts.text_content())
    assert timeline.locator("p.change-note").count() >= 1
    top = timeline.bounding_box()["y"]
    for later in (".authors", ".digest, .digest-why", "details.abstract", "p.links",
                  ".save", "details.cite", "p.follows"):
        assert page.locator(later).first.bounding_box()["y"] > top, later
    tag = page.locator("article.paper > p.meta a.kind")
    assert re.fullmatch(r"修订 · v\d+", tag.text_content())
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    tag.scroll_into_view_if_needed()
    tag.click()
    assert page.url.endswith("#timeline")
    assert page.locator("#timeline").bounding_box()["y"] >= -1  # scrolled to, in view
    assert page.locator("#timeline").bounding_box()["y"] < 844


def test_follow_buttons_name_a_topic_as_its_link_does(page, demo):
    """The demo's topics (the sample site has none): each button names its topic as the
    page's link to it does, and follows it by its slug."""
    out = demo.output_path
    path = next(p for p in sorted((out / "paper").glob("*.html"))
                if lxml_html.parse(str(p)).xpath("//ul[@class='topics']/li/a"))
    with serve(out) as url:
        page.goto(url + f"paper/{path.name}")
        check_topic_buttons(page)


def check_topic_buttons(page) -> None:
    topics = page.locator("ul.topics li a").all()
    buttons = page.locator("p.follows button[data-follow-kind=topic]")
    assert buttons.count() == len(topics) > 0
    for link, button in zip(topics, buttons.all(), strict=True):
        slug = link.get_attribute("href").rstrip("/").rsplit("/", 1)[1]
        assert button.get_attribute("data-follow-value") == slug
        assert button.text_content() == f"关注方向 · {link.text_content()}"
        assert link.text_content() != slug  # the name, never the slug
    buttons.first.click()  # followed by its slug, as the follow page and feeds read it
    follows = page.evaluate("JSON.parse(localStorage.getItem('papertrail.follows'))")
    assert [(f["kind"], f["value"]) for f in follows] == [
        ("topic", buttons.first.get_attribute("data-follow-value"))]


def test_for_you_lists_its_seeds_before_the_results_with_their_dates(page, site):
    url, _, papers = site
    seeds = [p["arxiv_id"] for p in papers if "cs.CL" in p["categories"]
             and p["arxiv_id"] != XSS_ID][:3]
    page.set_viewport_size(dict(zip(("width", "height"), PHONE, strict=True)))
    page.goto(url + "for-you/?seed=" + ",".join(seeds))
    page.wait_for_function(READY)
    box = page.locator("#foryou-seeds-box")
    assert box.is_visible() and box.evaluate("d => d.open")
    results = page.locator("#foryou-results > li")
    assert results.count() == 20
    assert box.bounding_box()["y"] < results.first.bounding_box()["y"]
    for meta in page.locator("#foryou-results > li > p.meta").all_text_contents():
        assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", meta)
    # each mute button a finger's target on a phone
    buttons = results.first.locator(".mutes button").all()
    assert buttons and all(b.bounding_box()["height"] >= 44 for b in buttons)


def test_for_you_folds_a_long_list_of_seeds(page, site):
    url, _, papers = site
    seeds = [p["arxiv_id"] for p in papers if p["arxiv_id"] != XSS_ID][:12]
    page.goto(url + "for-you/?seed=" + ",".join(seeds))
    page.wait_for_function(READY)
    box = page.locator("#foryou-seeds-box")
    assert box.is_visible() and not box.evaluate("d => d.open")
    assert page.locator("#foryou-seeds li").count() == 12
    assert page.locator("#foryou-results > li").first.is_visible()


def test_for_you_says_an_empty_profile_once(page, site):
    url, _, _ = site
    page.goto(url + "for-you/")
    page.wait_for_function(READY)
    sentence = page.locator("#foryou").get_attribute("data-none")
    assert page.locator("main").inner_text().count(sentence) == 1
    assert page.locator("#foryou-status").text_content() == sentence
    assert not page.locator("#foryou-seeds-box").is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_open_menu_has_no_serious_accessibility_violation(browser, site, scheme):
    """axe-core on a phone's home page with its menu open (test_accessibility.py checks the
    pages as they load, the menu closed)."""
    url, _, _ = site
    context = browser.new_context(bypass_csp=True, color_scheme=scheme,
                                  viewport=dict(zip(("width", "height"), PHONE, strict=True)))
    page = context.new_page()
    page.goto(url + "index.html")
    page.locator(".top details.menu > summary").click()
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    context.close()
    assert [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")] == []
