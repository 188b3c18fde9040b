"""Search and following in a real browser: Debian's chromium via Playwright, against the
built site served on 127.0.0.1 by a server this module starts."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import bibtexparser
import pyarrow as pa
import pytest

from pipeline import config as config_mod
from pipeline.derive import similar
from pipeline.site import i18n
from pipeline.site.index import search as _search
from pipeline.text.venue import venue
from tests.support.servers import serve
from tests.support.site import (
    DAYS,
    XSS_ID,
    XSS_TITLE,
    add_digest,
    at,
    build_at_last_run,
    make_config,
    run_pipeline,
)

pytestmark = pytest.mark.slow  # the module's sites are built from the pipeline's store

DIGEST = "本文提出一种扩散模型,用于连续图像重建。"
HOSTILE_DIGEST = "<img src=x onerror=alert(1)> <script>alert(2)</script> 恶意导读"
HOSTILE_SENTENCE = "Our <script>alert(3)</script> zymurgy is <b>quixotic</b>."


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("search-site")
    cfg = make_config(root)
    store = run_pipeline(cfg, DAYS)
    table = store.read("papers")
    papers = table.to_pylist()
    for p in papers:  # the classify and HF steps are not part of this store
        p["ai_related"] = "cs.LG" in p["categories"]
    store.write("hf", pa.Table.from_pylist([
        {"arxiv_id": p["arxiv_id"], "hf_day": at(DAYS[-1]).date(), "hf_upvotes": 3}
        for p in papers[::7]]))
    # A publisher's DOI on a paper whose comment names no venue: known by its DOI alone.
    next(p for p in papers if venue(p["comment"], p["journal_ref"], None) is None
         and "<" not in p["title"])["doi"] = "10.1145/3700000.3700001"
    # A paper without a digest whose abstract holds markup: its matched sentence shows it.
    next(p for p in papers[::-1] if p["version"] == 1 and "<" not in p["title"])["abstract"] += (
        " " + HOSTILE_SENTENCE)
    store.write("papers", pa.Table.from_pylist(papers, schema=table.schema))
    target = next(p for p in papers if p["version"] == 1 and "cs.CV" in p["categories"])
    add_digest(store, target["arxiv_id"], 1, at(DAYS[-1]) - dt.timedelta(minutes=5), DIGEST)
    add_digest(store, XSS_ID, 1, at(DAYS[-1]) - dt.timedelta(minutes=4), HOSTILE_DIGEST)
    similar.similar(cfg, store)
    build_at_last_run(cfg)
    with serve(cfg.output_path) as url:
        yield {"url": url, "out": cfg.output_path, "store": store,
               "papers": {p["arxiv_id"]: p for p in store.library().to_pylist()},
               "digest_id": target["arxiv_id"]}


def search(pg, site, query: str, **params: str) -> list[str]:
    qs = "&".join(f"{k}={v}" for k, v in params.items())
    pg.goto(site["url"] + "search/" + (f"?{qs}" if qs else ""))
    pg.locator("#q").press_sequentially(query, delay=15)
    return results(pg)


def results(pg) -> list[str]:
    pg.wait_for_function("() => !document.getElementById('search').dataset.busy")
    return pg.eval_on_selector_all("#results li", "els => els.map(e => e.dataset.id)")


def found_count(pg) -> int:
    return int(re.sub(r"\D", "", pg.locator("#search-status").text_content()) or 0)


def by_author(site) -> tuple[str, list[str]]:
    counts = Counter(a for p in site["papers"].values() for a in p["authors"])
    name = next(a for a, n in counts.most_common() if 2 <= n <= 5 and "<" not in a)
    return name, sorted(i for i, p in site["papers"].items() if name in p["authors"])


def test_title_fragment_author_id_and_chinese_find_the_paper(page, site):
    paper = next(p for p in site["papers"].values()
                 if len(p["title"].split()) > 6 and "$" not in p["title"])
    words = paper["title"].split()[1:5]
    fragment = " ".join(words)[:-2]  # the last word only partly typed
    assert paper["arxiv_id"] in search(page, site, fragment)[:5]
    assert page.locator("#results li mark").count() > 0

    name, ids = by_author(site)
    found = search(page, site, name)
    assert set(ids) <= set(found)

    other = sorted(site["papers"])[7]
    assert search(page, site, other)[0] == other
    page.locator("#q").press("Enter")
    page.wait_for_url(f"**/paper/{other}.html")

    search(page, site, name)
    page.locator("#q").press("ArrowDown")
    assert page.evaluate("document.activeElement.closest('li').dataset.id") == found[0]

    assert site["digest_id"] in search(page, site, "扩散模型")
    assert search(page, site, "zzzqqqxx") == []
    assert page.locator("#search-status").text_content() == "没有找到匹配的论文。"


def test_an_arxiv_url_jumps_to_the_paper_page(page, site):
    pid = sorted(site["papers"])[3]
    page.goto(site["url"] + "search/")
    page.locator("#q").fill(f"https://arxiv.org/abs/{pid}v1")
    page.wait_for_url(f"**/paper/{pid}.html")
    other = sorted(site["papers"])[5]  # the header's box on any page does the same
    page.locator("form.quick input").fill(f"arXiv:{other}v2")
    page.locator("form.quick input").press("Enter")
    page.wait_for_url(f"**/paper/{other}.html")
    page.locator("form.quick input").fill("graph")
    page.locator("form.quick input").press("Enter")
    page.wait_for_url("**/search/?q=graph")
    assert results(page)


def test_filters_and_sorts_change_results(page, site):
    papers = site["papers"]
    everything = search(page, site, "learning")
    assert len(everything) == 8  # the first page
    page.click("#more")
    page.wait_for_function("() => document.querySelectorAll('#results li').length === 16")
    page.select_option("select[name=cat]", "cs.CV")
    cv = results(page)
    assert cv and all("cs.CV" in papers[i]["categories"] for i in cv)
    assert "cat=cs.CV" in page.url
    page.check("input[name=rev]")
    revised = results(page)
    assert revised and all(papers[i]["version"] > 1 for i in revised)
    page.uncheck("input[name=rev]")
    page.check("input[name=ai]")
    ai = results(page)
    assert ai and all(papers[i]["ai_related"] for i in ai)
    page.uncheck("input[name=ai]")
    page.check("input[name=hf]")
    hf = results(page)
    assert hf and all(papers[i]["hf_day"] for i in hf)
    page.uncheck("input[name=hf]")
    page.select_option("select[name=sort]", "published")
    ordered = results(page)
    total = found_count(page)
    stamps = [papers[i]["published"] for i in ordered]
    assert stamps == sorted(stamps, reverse=True)
    page.select_option("select[name=range]", "24h")
    recent = results(page)
    assert found_count(page) < total
    assert all(papers[i]["published"] > max(stamps) - dt.timedelta(hours=24) for i in recent)

    url = page.url
    page.reload()
    assert results(page) == recent and page.url == url
    assert page.input_value("#q") == "learning"
    page.go_back()
    assert results(page) == ordered
    assert page.input_value("select[name=range]") == ""


def test_follow_an_author_then_my_feed_lists_their_papers(page, site):
    name, ids = by_author(site)
    page.goto(site["url"] + f"paper/{ids[0]}.html")
    button = page.locator(f'button[data-follow-kind=author][data-follow-value="{name}"]')
    button.click()
    assert button.get_attribute("aria-pressed") == "true"
    badge = page.locator("[data-follow-badge]")
    page.wait_for_timeout(500)
    assert badge.is_hidden()  # nothing is new since the follow was made, a moment ago
    # As if followed before the papers came in: each of them is new.
    firsts = [_search.minutes(site["papers"][i]["first_seen"]) for i in ids]
    page.evaluate("since => { const f = JSON.parse(localStorage.getItem('papertrail.follows'));"
                  " f[0].since = since; localStorage.setItem('papertrail.follows',"
                  " JSON.stringify(f)); }", min(firsts) - 1)
    page.reload()
    badge.wait_for(state="visible")
    assert badge.text_content() == str(len(ids))

    page.goto(site["url"] + "follow/")
    page.wait_for_selector("#feed[data-ready]")
    listed = page.eval_on_selector_all("#feed li", "els => els.map(e => e.dataset.id)")
    assert sorted(listed) == ids
    firsts = [site["papers"][i]["first_seen"] for i in listed]
    assert firsts == sorted(firsts, reverse=True)
    assert str(len(ids)) in page.locator("#follow-status").text_content()
    page.goto(site["url"])  # the visit was seen: nothing new now
    page.wait_for_timeout(300)
    assert page.locator("[data-follow-badge]").is_hidden()


def test_export_clear_import_restores_follows(page, site, tmp_path):
    page.goto(site["url"] + "search/")
    page.locator("#q").press_sequentially("diffusion ", delay=10)
    results(page)
    page.click("#follow-query")
    page.goto(site["url"] + "follow/")
    page.wait_for_selector("#follow-list li")
    with page.expect_download() as dl:
        page.click("#follow-export")
    saved = tmp_path / "follows.json"
    dl.value.save_as(saved)
    [saved_follow] = json.loads(saved.read_text())["follows"]
    assert (saved_follow["kind"], saved_follow["value"]) == ("query", "diffusion")
    assert saved_follow["since"] > 0  # when it was made: the badge counts from there
    asked: list[str] = []
    page.once("dialog", lambda d: asked.append(d.message) or d.dismiss())
    page.click("#follow-clear")  # asks first; dismissed, nothing is cleared
    assert asked == ["清除全部 1 项关注？此操作无法撤销，可先导出。"]
    assert page.locator("#follow-list li").count() == 1
    page.once("dialog", lambda d: d.accept())
    page.click("#follow-clear")
    assert page.locator("#follow-list li").count() == 0
    page.set_input_files("#follow-import", str(saved))
    page.wait_for_selector("#follow-list li")
    assert page.locator("#follow-list li").count() == 1
    page.wait_for_selector("#feed[data-ready]")
    assert page.locator("#feed li").count() > 0


def test_home_numbers_refresh_from_status_json(page, site):
    status_path = site["out"] / "status.json"
    original = status_path.read_text(encoding="utf-8")
    try:
        page.clock.install()
        page.goto(site["url"])
        before = page.locator('[data-stat="total_papers"]').text_content()
        status = json.loads(original)
        status["total_papers"] = 123456
        status["new_papers"] = 77
        status_path.write_text(json.dumps(status), encoding="utf-8")
        page.clock.fast_forward("01:01")
        page.wait_for_function("() => document.querySelector('[data-stat=total_papers]')"
                               ".textContent === '123,456'")
        assert before != "123,456"
        assert page.locator('[data-stat="new_papers"]').text_content() == "+77"
    finally:
        status_path.write_text(original, encoding="utf-8")


def test_the_browser_tokenizes_like_the_index_builder(page, site):
    text = "Élan 扩散模型 2606.12345v2 naïve ÅNGSTRÖM ﬁne Σίσυφος 我 a 7 — x"
    page.goto(site["url"] + "search/")
    assert page.evaluate("t => import(new URL('../theme/engine.js', location.href).href)"
                         ".then(engine => engine.tokens(t))", text) == _search.tokens(text)
    phrase = "Chain-of-Thought for the VLA: a 2-stage model of Ling Yang 扩散"
    assert page.evaluate("t => import(new URL('../theme/engine.js', location.href).href)"
                         ".then(engine => engine.pairs(engine.tokens(t)))", phrase
                         ) == _search.pairs(_search.tokens(phrase))


def _snippets(pg) -> dict[str, dict]:
    """Each result's matched sentence (text, marked words), once every card has its own."""
    pg.wait_for_function("() => !document.querySelector('#results li[data-snippet]')")
    return pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#results li')]
        .map(li => [li.dataset.id, {tldr: !!li.querySelector('p.tldr'),
          text: li.querySelector('p.snippet')?.textContent ?? null,
          marks: [...li.querySelectorAll('p.snippet mark')].map(m => m.textContent)}]))""")


def test_a_result_without_a_digest_shows_the_abstract_sentence_that_matched(page, site):
    """A word of one paper's abstract only (not its title): its card, which has no digest,
    shows the abstract's sentence holding it, the word marked; a card with a digest shows
    the digest's line instead."""
    def words(text: str) -> set[str]:
        return set(re.findall(r"[a-z]{9,}", text.lower()))
    counts = Counter(w for p in site["papers"].values() for w in words(p["abstract"] or ""))
    pid, word = next((pid, w) for pid, p in sorted(site["papers"].items())
                     if pid != site["digest_id"] and pid != XSS_ID and "$" not in p["abstract"]
                     for w in sorted(words(p["abstract"]))
                     if counts[w] == 1 and w not in words(p["title"]))
    abstract = " ".join(site["papers"][pid]["abstract"].split())
    assert search(page, site, word + " ") == [pid]
    shown = _snippets(page)[pid]
    assert not shown["tldr"] and shown["marks"]
    assert {m.lower() for m in shown["marks"]} == {word}
    # The sentence, or past 160 characters the words around the term, cut with "…".
    assert shown["text"].strip("…") in abstract and len(shown["text"]) < len(abstract)
    assert len(shown["text"]) <= 162
    assert word in shown["text"].lower()
    # A paper with a digest: its line, no sentence.
    search(page, site, site["digest_id"] + " ")
    assert _snippets(page)[site["digest_id"]] == {"tldr": True, "text": None, "marks": []}


def test_an_abstract_sentence_with_markup_shows_as_text(page, site):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    found = search(page, site, "zymurgy ")
    assert len(found) == 1
    shown = _snippets(page)[found[0]]
    assert shown["text"] == HOSTILE_SENTENCE and shown["marks"] == ["zymurgy"]
    assert page.locator("#results script, #results b").count() == 0
    page.wait_for_timeout(200)
    assert dialogs == []


def test_hostile_text_shows_as_text_and_runs_nothing(page, site):
    """The paper with a script for a title, markup for an author and an onerror image in
    its digest, through everything the scripts render: search results, my feed, the
    follow list, and the pages around them."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    injected = "() => document.querySelectorAll('main script, main img, [onerror]').length"
    page.goto(site["url"] + f"paper/{XSS_ID}.html")
    assert page.locator("main h1").text_content() == XSS_TITLE
    page.locator('button[data-follow-kind=author][data-follow-value="<b>Mallory</b>"]').click()

    assert XSS_ID in search(page, site, "mallory")
    card = page.locator(f'#results li[data-id="{XSS_ID}"]')
    assert card.locator("h2").text_content() == XSS_TITLE
    assert "<b>Mallory</b>" in card.locator(".authors").text_content()
    assert card.locator(".tldr").text_content() == HOSTILE_DIGEST
    assert page.evaluate(injected) == 0

    page.goto(site["url"] + "follow/")
    page.wait_for_selector("#feed[data-ready]")
    assert page.locator(f'#feed li[data-id="{XSS_ID}"] h3').text_content() == XSS_TITLE
    assert "<b>Mallory</b>" in page.locator("#follow-list").text_content()
    assert page.evaluate(injected) == 0
    for path in ("", "library/updated/all/", "brief/24h/digests/"):
        page.goto(site["url"] + path)
        assert XSS_TITLE in page.locator("main").text_content(), path
        assert page.evaluate(injected) == 0, path
    page.wait_for_timeout(300)  # time for an injected image's onerror to have fired
    assert dialogs == []


def test_hostile_text_on_a_light_page_shows_as_text_and_runs_nothing(page, site):
    """The same paper's page made light: its article and citation tags come from its shard
    through app.js, and stay text. Every page is made light through the budget's record,
    from which the next build starts (fit() never makes a page full again)."""
    cfg = site["out"].parent / "papertrail.toml"
    light = cfg.with_name("light.toml")
    light.write_text(cfg.read_text("utf-8").replace('output = "out"', 'output = "light"'),
                     encoding="utf-8")
    light_cfg = config_mod.load(light)
    build_at_last_run(light_cfg)
    record = light_cfg.output_path / ".papertrail" / "budget.json"
    record.write_text(json.dumps({**json.loads(record.read_text("utf-8")),
                                  "first": [2**63, ""]}), encoding="utf-8")
    assert build_at_last_run(light_cfg).light == len(site["papers"])
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    with serve(light_cfg.output_path) as url:
        page.goto(f"{url}paper/{XSS_ID}.html")
        page.wait_for_selector("article.paper[data-primary] .follows button")
        assert page.locator("main h1").text_content() == XSS_TITLE
        assert page.locator('meta[name="citation_title"]').get_attribute("content") == \
            XSS_TITLE
        assert "<b>Mallory</b>" in page.locator("main .authors").text_content()
        assert HOSTILE_DIGEST in page.locator("main .lead").text_content()
        page.wait_for_timeout(300)  # time for an injected image's onerror to have fired
        assert page.evaluate(
            "() => document.querySelectorAll('main script, main img, [onerror]').length") == 0
    assert dialogs == []


def test_result_times_are_in_the_sites_zone_with_its_label(page, site):
    other = sorted(site["papers"])[7]
    assert search(page, site, other)[0] == other
    meta = page.locator("#results li .meta").first.text_content()
    updated = site["papers"][other]["updated"].astimezone(ZoneInfo("Asia/Shanghai"))
    assert f" · {updated:%Y-%m-%d %H:%M} 北京时间 · " in meta, meta
    assert "UTC" not in meta


def _luminance(rgb: str) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (float(x) for x in re.findall(r"[\d.]+", rgb)[:3])
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_highlighted_words_are_readable_in_both_schemes(page, site, scheme):
    page.emulate_media(color_scheme=scheme)
    search(page, site, "diffusion")
    color, background = page.eval_on_selector(
        "#results li mark", "m => [getComputedStyle(m).color, getComputedStyle(m).backgroundColor]")
    light, dark = sorted((_luminance(color), _luminance(background)), reverse=True)
    assert (light + 0.05) / (dark + 0.05) >= 4.5, (scheme, color, background)


def test_a_query_arriving_in_the_url_or_from_the_header_box_can_be_followed(page, site):
    page.goto(site["url"] + "search/?q=diffusion")
    results(page)
    assert page.locator("#follow-query").is_visible()
    page.goto(site["url"] + "index.html")
    page.fill("header form.quick input[name=q]", "transformer")
    page.press("header form.quick input[name=q]", "Enter")
    page.wait_for_url("**/search/?q=transformer")
    results(page)
    assert page.locator("#follow-query").is_visible()
    page.click("#follow-query")
    assert page.locator("#follow-query").get_attribute("aria-pressed") == "true"


def test_the_sources_table_keeps_its_columns_and_fits_a_phone(page, site):
    page.set_viewport_size({"width": 320, "height": 640})
    page.goto(site["url"] + "sources/")
    assert page.eval_on_selector("table.sources", "t => getComputedStyle(t).display") == "table"
    assert page.evaluate("document.documentElement.scrollWidth") <= 320


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("width", "height"), [(390, 844), (1366, 900)])
def test_a_paper_page_leads_with_its_digest(page, site, width, height, scheme):
    """The digest's one line is on the first screen, its digest above the abstract; on a
    phone the abstract is folded (one tap away), on a desktop open. A paper without a
    digest keeps its abstract open and says why there is none."""
    page.set_viewport_size({"width": width, "height": height})
    page.emulate_media(color_scheme=scheme)
    page.goto(site["url"] + f"paper/{site['digest_id']}.html")
    lead = page.locator("p.lead")
    assert DIGEST in lead.text_content()
    assert lead.bounding_box()["y"] + lead.bounding_box()["height"] / 2 < height
    digest_y = page.locator("section.digest").bounding_box()["y"]
    assert digest_y < page.locator("details.abstract").bounding_box()["y"]
    phone = width < 640
    assert page.locator("details.abstract").evaluate("d => d.open") is (not phone)
    if phone:
        page.locator("details.abstract summary").click()
        assert page.locator("details.abstract p").is_visible()
    other = next(i for i, p in site["papers"].items()
                 if i not in (site["digest_id"], XSS_ID) and p["ai_related"])
    page.goto(site["url"] + f"paper/{other}.html")
    assert page.locator("details.abstract").evaluate("d => d.open") is True
    assert page.locator("p.digest-why").is_visible()
    assert "排队中" in page.locator("p.digest-why").text_content()


def test_the_bibtex_copy_button_copies_the_entry(page, site):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(site["url"] + f"paper/{site['digest_id']}.html")
    page.locator("details.cite summary").click()
    button = page.locator("button[data-copy]")
    assert button.is_visible()
    page.bring_to_front()  # Chromium writes the clipboard only for a focused document
    button.click()
    page.wait_for_function("() => document.querySelector('button[data-copy]').textContent"
                           " === '已复制'")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.locator("#bibtex").text_content()
    assert copied.startswith("@misc{") and f"eprint={{{site['digest_id']}}}" in copied


def _top(pg, path: str) -> str:
    """The header's nav and search box as the page shows them."""
    pg.goto(path)
    return pg.eval_on_selector(".top", "top => Array.from(top.children).slice(1)"
                               ".map(e => e.outerHTML).join('\\n')")


def test_a_paper_page_shows_the_sites_nav_and_its_boxes_that_ui_js_holds(page, site,
                                                                           browser):
    pid = site["digest_id"]
    html = (site["out"] / "paper" / f"{pid}.html").read_text("utf-8")
    for part in ("<nav", 'class="quick"', "data-save", 'id="bibtex"', "data-follows",
                 "相似论文"):
        assert part not in html  # once in theme/ui.js, not in every page
    # The nav and box that a page at the same depth renders (none of its links current).
    assert _top(page, site["url"] + f"paper/{pid}.html") == _top(page, site["url"] + "about/")
    page.goto(site["url"] + f"paper/{pid}.html")
    order = page.eval_on_selector("article.paper", "a => Array.from(a.children).map(e => "
                                  "e.className || e.tagName.toLowerCase())")
    links = order.index("links")
    assert order[links + 1:links + 4] == ["save", "cite", "follows"]
    assert order[-1] == "similar"
    assert page.locator("section.similar").get_attribute("data-similar") == pid
    page.locator(".top nav a").first.click()
    page.wait_for_url("**/library/updated/all/")
    # Without scripts the page still reads, and links home.
    context = browser.new_context(java_script_enabled=False)
    bare = context.new_page()
    bare.goto(site["url"] + f"paper/{pid}.html")
    assert bare.locator("h1").is_visible() and bare.locator("details.abstract p").is_visible()
    assert bare.locator(".top a.brand").get_attribute("href") == "../index.html"
    assert bare.locator("nav").count() == 0 and bare.locator("details.cite").count() == 0
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_home_page_shows_a_paper_on_its_first_screen(page, site, scheme):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.emulate_media(color_scheme=scheme)
    page.goto(site["url"])
    first = page.locator("main article.card").first  # 今日精选's first, else the library's
    assert first.bounding_box()["y"] + 60 < 900  # its meta line and title are in view
    ranges = page.eval_on_selector_all(
        "nav[aria-label='range'] a", "els => els.map(e => [e.getAttribute('href'), "
        "e.getAttribute('aria-current')])")
    assert ranges == [["library/updated/24h/", None], ["library/updated/7d/", None],
                      ["library/updated/all/", "true"]]
    page.locator("nav[aria-label='range'] a").first.click()
    assert page.url.endswith("library/updated/24h/")


@pytest.fixture(scope="module")
def site_with_a_topic(tmp_path_factory):
    root = tmp_path_factory.mktemp("topic-site")
    cfg = make_config(root)
    cfg.path.write_text(cfg.path.read_text("utf-8") + (
        '[[topics]]\nslug = "diffusion"\nname = { zh = "扩散模型", en = "Diffusion" }\n'
        'keywords = ["diffusion"]\n'), encoding="utf-8")
    cfg = config_mod.load(cfg.path)
    run_pipeline(cfg, DAYS[:1])
    build_at_last_run(cfg)
    with serve(cfg.output_path) as url:
        yield url


@pytest.mark.parametrize(("kind", "path", "value", "shown"), [
    ("category", "category/cs.CV/", "cs.CV", "cs.CV"),
    ("topic", "topic/diffusion/", "diffusion", "扩散模型"),
])
def test_a_category_or_topic_page_has_its_own_follow_button(page, site_with_a_topic, kind,
                                                           path, value, shown):
    page.goto(site_with_a_topic + path)
    button = page.locator(f"button[data-follow-kind={kind}]")
    assert button.is_visible()
    assert button.get_attribute("data-follow-value") == value
    assert button.text_content().endswith(" · " + shown)
    button.click()
    assert button.get_attribute("aria-pressed") == "true"
    follows = page.evaluate("JSON.parse(localStorage.getItem('papertrail.follows'))")
    assert [(f["kind"], f["value"]) for f in follows] == [(kind, value)]
    assert follows[0]["since"] > _search.minutes(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


def test_the_follow_page_lists_follows_first_then_pages_matches_with_their_digests(page, site):
    cv = sorted(i for i, p in site["papers"].items() if "cs.CV" in p["categories"])
    assert len(cv) > 60 and site["digest_id"] in cv
    page.goto(site["url"] + "category/cs.CV/")
    page.locator("button[data-follow-kind=category]").click()
    page.goto(site["url"] + "follow/")
    page.wait_for_selector("#feed[data-ready]")
    headings = page.eval_on_selector_all("#follow-page h2", "els => els.map(e => e.textContent)")
    assert headings.index("关注列表") < headings.index("关注的论文")
    shown = page.eval_on_selector_all("#feed li", "els => els.map(e => e.dataset.id)")
    assert len(shown) == 50
    more = page.locator("#feed-more")
    assert more.text_content() == f"再显示 {min(50, len(cv) - 50)} 篇"
    more.click()
    page.wait_for_function("n => document.querySelectorAll('#feed li').length === n",
                           arg=min(100, len(cv)))
    shown = page.eval_on_selector_all("#feed li", "els => els.map(e => e.dataset.id)")
    assert len(set(shown)) == len(shown) and set(shown) <= set(cv)
    while more.is_visible():
        more.click()
        page.wait_for_timeout(200)
    shown = page.eval_on_selector_all("#feed li", "els => els.map(e => e.dataset.id)")
    assert sorted(shown) == cv
    card = page.locator(f"#feed li[data-id='{site['digest_id']}'] .tldr")
    assert card.text_content() == DIGEST


def test_a_followed_topic_is_listed_by_its_name(page, site_with_a_topic):
    page.goto(site_with_a_topic + "topic/diffusion/")
    page.locator("button[data-follow-kind=topic]").click()
    page.goto(site_with_a_topic + "follow/")
    item = page.locator("#follow-list li a").first
    assert item.text_content() == "扩散模型"
    assert item.get_attribute("href").endswith("topic/diffusion/")


def test_save_a_paper_with_a_note_list_it_and_export_it(page, site, tmp_path):
    paper = site["digest_id"]
    page.goto(site["url"] + f"paper/{paper}.html")
    save = page.locator(".save button")
    assert save.get_attribute("aria-pressed") == "false"
    assert page.locator(".save textarea").is_hidden()
    save.click()
    assert save.get_attribute("aria-pressed") == "true" and save.text_content() == "已收藏"
    note = "复现：表 2 的 <b>76.3</b> 用了 {额外} 数据\n第二行"
    page.locator(".save textarea").fill(note)
    page.reload()  # kept in this browser
    assert page.locator(".save textarea").input_value() == note

    page.goto(site["url"] + "follow/")
    item = page.locator(f"#saved-list li[data-id='{paper}']")
    item.wait_for()
    assert item.locator("a").get_attribute("href").endswith(f"paper/{paper}.html")
    assert item.locator(".note-text").text_content() == note  # text, never markup
    assert item.locator("b").count() == 0
    assert "北京时间" in item.locator("small").text_content()

    with page.expect_download() as dl:
        page.click("#saved-bibtex")
    bib = tmp_path / "saved.bib"
    dl.value.save_as(bib)
    [entry] = bibtexparser.parse_string(bib.read_text("utf-8")).entries
    fields = {f.key: f.value for f in entry.fields}
    assert fields["eprint"] == paper
    assert fields["annote"] == "复现：表 2 的 <b>76.3</b> 用了 额外 数据 第二行"

    with page.expect_download() as dl:
        page.click("#follow-export")
    saved = tmp_path / "follows.json"
    dl.value.save_as(saved)
    exported = json.loads(saved.read_text("utf-8"))
    assert [(x["id"], x["note"]) for x in exported["saved"]] == [(paper, note)]

    # Gone from this browser, then back from the export.
    item.locator("button").click()
    assert page.locator("#saved-list li").count() == 0
    assert page.locator("#saved-none").text_content().startswith("还没有收藏")
    page.set_input_files("#follow-import", str(saved))
    page.locator(f"#saved-list li[data-id='{paper}']").wait_for()
    page.goto(site["url"] + f"paper/{paper}.html")
    assert page.locator(".save button").get_attribute("aria-pressed") == "true"
    assert page.locator(".save textarea").input_value() == note


def test_a_hand_made_saved_list_cannot_inject_links_or_markup(page, site):
    page.goto(site["url"] + "follow/")
    hostile = [{"id": "2606.00001", "title": "<img src=x onerror=alert(1)>", "url":
                "paper/2606.00001.html", "bibtex": "", "note": "<script>x</script>", "saved": 1},
               {"id": "x", "title": "t", "url": "javascript:alert(1)", "bibtex": "", "note": "",
                "saved": 1},
               {"id": "../../etc", "title": "t", "url": "paper/x.html", "bibtex": "",
                "note": "", "saved": 1}]
    page.evaluate("v => localStorage.setItem('papertrail.saved', v)", json.dumps(hostile))
    page.reload()
    page.locator("#saved-list li").first.wait_for()
    hrefs = page.eval_on_selector_all("#saved-list a", "els => els.map(e => e.href)")
    assert hrefs == [site["url"] + "paper/2606.00001.html"]
    assert page.locator("#saved-list img, #saved-list script").count() == 0


def test_filters_without_words_browse_the_papers_that_pass_them(page, site):
    """The HF picks, or a category's AI papers, listed with no query: newest first."""
    picks = [i for i, p in site["papers"].items() if p["hf_day"] is not None]
    page.goto(site["url"] + "search/?hf=1")
    shown = results(page)
    assert found_count(page) == len(picks) > 10
    while page.locator("#more").is_visible():
        page.click("#more")
        page.wait_for_function("n => document.querySelectorAll('#results li').length > n",
                               arg=len(shown))
        shown = results(page)
    assert sorted(shown) == sorted(picks)
    updated = [site["papers"][i]["updated"] for i in shown]
    assert updated == sorted(updated, reverse=True)
    page.goto(site["url"] + "search/?cat=cs.CV&ai=1")
    results(page)
    expected = [i for i, p in site["papers"].items()
                if "cs.CV" in p["categories"] and p["ai_related"]]
    assert found_count(page) == len(expected) > 0
    taken = [i for i, p in site["papers"].items()
             if venue(p["comment"], p["journal_ref"], p["doi"])]
    page.goto(site["url"] + "search/")
    page.select_option("select[name=venue]", "1")  # accepted at a venue, words or not
    results(page)
    assert found_count(page) == len(taken) > 0 and "venue=1" in page.url
    page.locator("#q").press_sequentially("model ", delay=15)
    found = results(page)
    assert found and set(found) <= set(taken)
    for arxiv_id in found:  # each result wears its venue's badge, as the pages do
        p = site["papers"][arxiv_id]
        badge = page.locator(f"#results li[data-id='{arxiv_id}'] .meta .venue")
        short = venue(p["comment"], p["journal_ref"], p["doi"]).short
        said = i18n.strings("zh-CN")  # with its tier where the catalogue words one
        assert badge.text_content() in {short, *(said[f"reason_venue_{t}"].format(value=short)
                                                 for t in _search.TIERS
                                                 if f"reason_venue_{t}" in said)}
    # A venue known by its DOI alone wears the pages' word for it (已发表), not "DOI".
    doi_only = next(i for i in taken if venue(*(site["papers"][i][k] for k in (
        "comment", "journal_ref", "doi"))).source == "doi")
    title = site["papers"][doi_only]["title"]
    assert search(page, site, title, venue="1")[0] == doi_only
    badge = page.locator(f"#results li[data-id='{doi_only}'] .meta .venue")
    assert badge.text_content() == i18n.strings("zh-CN")["venue_published"] == "已发表"
    page.goto(site["url"] + "search/")  # nothing asked: nothing listed
    page.wait_for_timeout(300)
    assert page.locator("#results li").count() == 0


def test_an_author_is_searched_as_a_phrase(page, site):
    name, ids = by_author(site)
    found = search(page, site, f'au:"{name}"')
    while page.locator("#more").is_visible():
        page.click("#more")
        page.wait_for_function("n => document.querySelectorAll('#results li').length > n",
                               arg=len(found))
        found = results(page)
    assert sorted(found) == ids  # only theirs
    quoted = search(page, site, f'"{name}" ')
    assert sorted(quoted[:len(ids)]) == ids  # theirs first
    count = found_count(page)
    search(page, site, f"{name} ")  # then the rest the words find, none lost
    assert found_count(page) == count


@pytest.mark.parametrize("typo", ["difusion", "diffusoin", "diffusionn", "diffuson"])
def test_a_word_one_edit_off_finds_what_the_word_finds(page, site, typo):
    """Typos after the first three letters, found through the index's completions."""
    right = search(page, site, "diffusion ")
    count = found_count(page)
    assert count > 5
    assert search(page, site, typo + " ") == right
    assert found_count(page) == count
    assert search(page, site, "lern ") == []  # below five letters nothing is guessed


def test_author_names_link_to_their_papers(page, site):
    """On paper pages, list cards and search results alike."""
    name, ids = by_author(site)
    pages = [i for i in ids if (site["out"] / "paper" / f"{i}.html").exists()]
    page.goto(site["url"] + f"paper/{pages[0]}.html")
    link = page.locator("p.authors a", has_text=name).first
    assert page.locator("p.authors a").count() == len(site["papers"][pages[0]]["authors"])
    link.click()
    page.wait_for_url("**/search/?q=*")
    assert page.locator("#q").input_value() == f'au:"{name}"'
    page.wait_for_function("() => !document.getElementById('search').dataset.busy")
    while page.locator("#more").is_visible():
        n = page.locator("#results li").count()
        page.click("#more")
        page.wait_for_function("n => document.querySelectorAll('#results li').length > n", arg=n)
    assert sorted(results(page)) == ids
    # a result card's author links the same way
    href = page.locator("#results p.authors a", has_text=name).first.get_attribute("href")
    assert urlsplit(href).path.endswith("/search/")
    assert parse_qs(urlsplit(href).query) == {"q": [f'au:"{name}"']}
    page.goto(site["url"] + "library/updated/all/")
    links = page.locator(".card p.authors a")
    assert links.count() == page.locator(".card p.authors bdi").count() > 0


@pytest.mark.parametrize(("width", "side_by_side"), [(390, False), (1366, True)])
def test_a_change_reads_side_by_side_on_a_wide_screen(page, site, width, side_by_side):
    """The version before with its removed words beside the new one with its added words;
    on a phone the one inline diff."""
    revised = next(i for i, p in site["papers"].items() if p["version"] > 1 and i != XSS_ID
                   and (site["out"] / "paper" / f"{i}.html").exists())
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(site["url"] + f"paper/{revised}.html")
    inline = page.locator(".timeline p.diff:has(del):has(ins)")
    assert inline.count() > 0
    pairs = page.locator(".timeline .side-by-side")
    assert pairs.count() == (inline.count() if side_by_side else 0)
    assert inline.first.is_visible() is not side_by_side
    if side_by_side:
        before, after = pairs.first.locator("p.diff").all()
        assert before.is_visible() and after.is_visible()
        assert before.bounding_box()["y"] == after.bounding_box()["y"]  # beside each other
        assert before.locator("del").count() > 0 and before.locator("ins").count() == 0
        assert after.locator("ins").count() > 0 and after.locator("del").count() == 0
        assert before.locator(".label").text_content().endswith(" · v1")
        assert after.locator(".label").text_content().endswith(" · v2")
        def texts(loc, tag):
            return loc.locator(tag).all_text_contents()
        assert texts(before, "del") == texts(inline.first, "del")  # nothing lost on either side
        assert texts(after, "ins") == texts(inline.first, "ins")


def test_a_burst_of_typing_fetches_only_what_the_whole_query_needs(browser, site):
    """Keys 30 ms apart (on the page's clock, which the test moves) are one burst, searched
    once when it ends: typing a query fetches the same index files as pasting it."""
    query = "diffusion models"
    start = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    enter = """q => { const input = document.getElementById('q');
        input.value = q; input.dispatchEvent(new Event('input', {bubbles: true})); }"""

    def fetched(keys: list[str]) -> set[str]:
        context = browser.new_context()  # a cold cache each time
        context.clock.install(time=start)
        page = context.new_page()
        got: set[str] = set()
        page.on("request", lambda r: got.add(urlsplit(r.url).path))
        page.goto(site["url"] + "search/")
        page.wait_for_function("() => !document.getElementById('search').dataset.busy")
        page.clock.pause_at(start + dt.timedelta(hours=1))
        got.clear()
        for k in keys:
            page.evaluate(enter, k)
            page.clock.run_for(30)
        page.clock.run_for(1000)
        page.clock.resume()
        page.wait_for_function("q => !document.getElementById('search').dataset.busy && "
                               "new URLSearchParams(location.search).get('q') === q", arg=query)
        page.wait_for_load_state("networkidle")
        context.close()
        return {p for p in got if p.startswith("/search/")}

    typed = fetched([query[:i] for i in range(1, len(query) + 1)])
    pasted = fetched([query])
    assert any("/search/t/" in p for p in pasted) and any("/search/d/" in p for p in pasted)
    assert typed == pasted


def test_more_like_this_leads_from_a_result_to_the_papers_most_like_it(page, site):
    """Every result links to its similar papers, shown here as results in their order
    (the search index holds every paper's list: a paper without a page has one too)."""
    lists = dict(zip(*(site["store"].read("similar")[c].to_pylist()
                       for c in ("arxiv_id", "neighbours")), strict=True))
    found = search(page, site, "diffusion")
    assert found
    links = page.eval_on_selector_all("#results li", """els => els.map(e => {
        const a = e.querySelector('a.more-like'); return a && a.textContent; })""")
    assert links == ["更多类似"] * len(found)
    labels = page.eval_on_selector_all("#results li a.more-like",
                                       "els => els.map(a => a.getAttribute('aria-label'))")
    assert labels == [f"更多类似 · {site['papers'][i]['title']}" for i in found]
    page.locator("#results li a.more-like").first.click()
    page.wait_for_url(f"**/search/?like={found[0]}")
    assert results(page) == lists[found[0]] and len(lists[found[0]]) == 8
    status = page.locator("#search-status").text_content()
    assert status == f"与《{site['papers'][found[0]]['title']}》最相似的 8 篇论文"
    assert page.locator("#search-status a").get_attribute("href").endswith(
        f"/paper/{found[0]}.html")
    assert page.locator("#q").input_value() == ""

    page.locator("#q").press_sequentially("graph", delay=15)  # a query replaces the list
    assert results(page) != lists[found[0]]
    assert "like=" not in page.url and "q=graph" in page.url


PHONE = {"width": 390, "height": 844}


def _top_of(pg, selector: str) -> dict:
    return pg.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect();"
                               " return {top: r.top, bottom: r.bottom, height: r.height}; }")


def test_on_a_phone_the_header_is_compact_and_a_digest_starts_on_the_first_screen(page, site):
    page.set_viewport_size(PHONE)
    for path in ("index.html", "about/", f"paper/{site['digest_id']}.html"):
        page.goto(site["url"] + path)
        # a paper page's nav comes from theme/ui.js
        page.wait_for_selector(".top nav", state="attached")
        # one row: the name, the menu button, the search box (was 182: five wrapped rows)
        assert _top_of(page, ".top")["height"] <= 64, path
        # the links wait in the menu (test_first_screen_browser.py opens it)
        assert not page.locator(".top nav a").first.is_visible(), path
    assert _top_of(page, "section.digest")["top"] <= PHONE["height"] - 150


def test_on_a_phone_the_first_search_result_shows_without_scrolling(page, site):
    page.set_viewport_size(PHONE)
    assert search(page, site, "model")
    assert not page.locator("details.filters-box").get_attribute("open")
    assert _top_of(page, "#results li")["bottom"] <= PHONE["height"]
    # a filter in the address opens them, so what narrows the list is in sight
    assert search(page, site, "model", cat="cs.CV")
    assert page.locator("details.filters-box").get_attribute("open") is not None
    page.set_viewport_size({"width": 1366, "height": 900})
    assert search(page, site, "model")
    assert page.locator("details.filters-box").get_attribute("open") is not None


def test_a_date_never_breaks_across_lines(page, site):
    page.set_viewport_size({"width": 320, "height": 700})
    for path in ("index.html", "sources/", f"paper/{site['digest_id']}.html",
                 "library/updated/all/"):
        page.goto(site["url"] + path)
        dates = page.eval_on_selector_all(
            "time, .when", "es => es.filter(e => e.textContent.trim().length > 1"
            " && e.getClientRects().length).map(e => {"  # shown: the home's picks hide theirs
            " const r = document.createRange(); r.selectNodeContents(e);"
            " return [e.textContent, new Set([...r.getClientRects()].map(x => Math.round(x.top)))"
            ".size]; })")
        assert dates, path
        assert [d for d in dates if d[1] != 1] == [], path


def test_the_topic_filter_lists_topic_names(page, site_with_a_topic):
    page.goto(site_with_a_topic + "search/")
    options = page.eval_on_selector_all("select[name=topic] option",
                                        "os => os.map(o => [o.value, o.textContent])")
    assert ["diffusion", "扩散模型"] in options


def test_a_venue_is_searchable_and_a_filter(page, site):
    group = {i: _search.venue_of(SimpleNamespace(venue=venue(p["comment"], p["journal_ref"],
                                                               p["doi"])))
             for i, p in site["papers"].items()}
    eccv = {i for i, g in group.items() if g == "ECCV"}
    assert len(eccv) >= 2
    found = search(page, site, "ECCV ")
    assert set(found[:3]) <= eccv and found_count(page) >= len(eccv)
    page.goto(site["url"] + "search/?venue=ECCV")
    shown = results(page)
    assert shown and set(shown) <= eccv and found_count(page) == len(eccv)
    assert page.locator("select[name=venue]").input_value() == "ECCV"


def test_a_short_word_does_not_complete_to_an_authors_name(page, site):
    found = search(page, site, "VLA")
    assert found
    first = site["papers"][found[0]]
    assert "vla" in (first["title"] + " " + first["abstract"]).lower()


def _all_found(pg, query: str) -> list[str]:
    """Every result's id, best first, as the page's own index gives them."""
    return pg.evaluate("q => import(new URL('../theme/site.js', location.href).href)"
                       ".then(s => s.index.search(q).then(r => s.index.docs(r.docs)))"
                       ".then(ds => ds.map(d => d.id))", query)


def test_a_quoted_phrase_finds_its_words_together_and_in_order(page, site):
    page.goto(site["url"] + "search/")

    def together(p: dict) -> bool:
        return any("world_model" in _search.pairs(_search.tokens(t))
                   for t in (p["title"], p["abstract"]))

    quoted = _all_found(page, '"world model" ')
    loose = _all_found(page, "world model ")
    assert set(quoted) == {a for a in loose if together(site["papers"][a])}
    assert len(loose) > len(quoted) > 3
    # unquoted, those holding it mostly come first
    assert len(set(loose[:len(quoted)]) & set(quoted)) >= 0.8 * len(quoted)
    # a phrase no paper holds finds nothing, though papers hold both words apart
    assert _all_found(page, "diffusion policy ") and search(page, site, '"diffusion policy" ') == []


def test_a_venue_query_ranks_main_conference_findings_workshop_and_says_which(page, site):
    found = search(page, site, "CVPR ")
    chips = page.eval_on_selector_all("#results li .venue", "els => els.map(e => e.textContent)")
    cvpr = [c for c in chips if "CVPR" in c]
    kinds = [("主会" in c, "Findings" in c, "研讨会" in c) for c in cvpr]
    assert kinds == sorted(kinds, reverse=True) and len(set(kinds)) == 3
    assert all(sum(k) == 1 for k in kinds)  # each says its tier
    assert len(found) >= len(cvpr) >= 5


def test_a_misspelt_word_gets_a_did_you_mean_that_searches_the_common_word(page, site):
    typo = search(page, site, "reinforcment learning ")
    link = page.locator("#search-status a.suggest")
    assert link.text_content() == "reinforcement learning"
    assert "你是不是要找" in page.locator("#search-status").text_content()
    link.click()
    right = results(page)
    assert page.locator("#q").input_value() == "reinforcement learning"
    assert "q=reinforcement+learning" in page.url and right == typo  # the typo found them
    search(page, site, "reinforcement learning ")
    assert page.locator("#search-status a.suggest").count() == 0
