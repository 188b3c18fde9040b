"""为你推荐 in a real browser: Debian's chromium via Playwright, against the built site
(the sample's five days) served on 127.0.0.1. The ranking foryou.js makes is checked
against its mirror in pipeline/site/index/recommend.py, on the files the build wrote."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from pipeline.site.index import recommend as _recommend
from tests.support.servers import serve
from tests.support.site import XSS_ID, XSS_TITLE

READY = "() => document.getElementById('foryou-results').dataset.ready === '1'"


def built_window(out) -> tuple[dict, _recommend.Window]:
    """The window as foryou.js reads it from the site's two files."""
    meta = json.loads(gzip.decompress((out / _recommend.META).read_bytes()))
    return meta, _recommend.from_files(
        meta, gzip.decompress((out / _recommend.VECTORS).read_bytes()))


@pytest.fixture(scope="module")
def site(zh_site):
    papers = {p["arxiv_id"]: p for p in zh_site.store.library().to_pylist()}
    meta, window = built_window(zh_site.out)
    with serve(zh_site.out) as url:
        yield {"url": url, "out": zh_site.out, "papers": papers, "meta": meta,
               "window": window}


def open_page(pg, site, query: str = "") -> list[str]:
    pg.goto(site["url"] + "for-you/" + query)
    return results(pg)


def results(pg) -> list[str]:
    pg.wait_for_function(READY)
    return pg.eval_on_selector_all("#foryou-results > li", "els => els.map(e => e.dataset.id)")


def seed_keys(pg) -> list[str]:
    return pg.eval_on_selector_all("#foryou-seeds li", "els => els.map(e => e.dataset.key)")


def of_category(site, cat: str, count: int) -> list[str]:
    return [i for i in site["meta"]["ids"] if cat in site["papers"][i]["categories"]
            and "<" not in site["papers"][i]["title"]][:count]


def import_file(pg, tmp_path, name: str, text: str) -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    pg.set_input_files("#foryou-import", str(path))
    pg.wait_for_function("() => document.getElementById('foryou-import-status').textContent")
    return results(pg)


def test_a_seed_link_ranks_as_the_python_mirror_and_says_why(page, site):
    seeds = of_category(site, "cs.CV", 5)
    found = open_page(page, site, "?seed=" + ",".join(seeds))
    window = site["window"]
    rows = [window.ids.index(i) for i in seeds]
    expected = [window.ids[r] for r in _recommend.rank(
        window, [_recommend.from_row(window, r) for r in rows])]
    assert len(found) == 20 and found[:10] == expected[:10]
    assert not set(found) & set(seeds)
    assert seed_keys(page) == [f"arxiv:{i}" for i in seeds]
    titles = {site["papers"][i]["title"] for i in seeds}
    why = page.locator("#foryou-results > li .why bdi").all_text_contents()
    assert len(why) == 20 and set(why) <= titles
    assert page.locator("#foryou-results > li .why .term").count() > 20
    assert page.locator("#foryou-shared").is_visible()
    # Kept, the link's seeds become the reader's own, and the page shares them back.
    page.locator("#foryou-keep").click()
    page.wait_for_function("() => document.querySelectorAll('#foryou-seeds li button').length")
    assert results(page)[:10] == expected[:10]
    stored = page.evaluate("JSON.parse(localStorage.getItem('papertrail.foryou'))")
    assert [e["id"] for e in stored["imported"]] == seeds
    assert page.locator("#foryou-share").get_attribute("href") == "?seed=" + ",".join(seeds)


def test_a_library_in_each_format_is_matched_by_id_doi_and_title(page, site, tmp_path):
    ids = of_category(site, "cs.CL", 6)
    p = site["papers"]
    open_page(page, site)
    assert page.locator("#foryou-status").text_content().startswith("还没有种子")
    bib = (f"@article{{a, title={{Something else}}, eprint={{{ids[0]}}},"
           " archivePrefix={arXiv}}\n"
           f"@misc{{b, title = {{{{{p[ids[1]]['title']}}}}}, year = 2026}}\n"
           f"@article{{c, title=\"x\", doi={{10.48550/arXiv.{ids[2]}}}}}\n"
           "@book{d, title={Deep Graph Kernels for Molecules}, abstract={graph kernels}}\n")
    found = import_file(page, tmp_path, "lib.bib", bib)
    assert page.locator("#foryou-import-status").text_content() == (
        "读入 4 条，其中 3 条与本站最近论文匹配，其余按标题和摘要计算。")
    assert len(found) == 20 and not set(found) & set(ids[:3])
    keys = seed_keys(page)
    assert {f"arxiv:{ids[0]}", f"arxiv:{ids[2]}"} <= set(keys) and len(keys) == 4
    ris = f"TY  - JOUR\nTI  - A title\nUR  - https://arxiv.org/abs/{ids[3]}v2\nER  - \n"
    import_file(page, tmp_path, "lib.ris", ris)
    csl = json.dumps([{"type": "article", "title": p[ids[4]]["title"].upper()},
                      {"type": "article", "title": "t", "number": f"arXiv:{ids[5]}"}])
    import_file(page, tmp_path, "lib.json", csl)
    assert "2 条与本站" in page.locator("#foryou-import-status").text_content()
    import_file(page, tmp_path, "ids.txt", f"arXiv:{XSS_ID}\nnothing here\n")
    keys = seed_keys(page)
    assert {f"arxiv:{ids[3]}", f"arxiv:{ids[5]}", f"arxiv:{XSS_ID}"} <= set(keys)
    assert len(keys) == 8
    # Nothing read from a file that names nothing.
    import_file(page, tmp_path, "empty.txt", "hello\n")
    assert page.locator("#foryou-import-status").text_content() == "文件里没有可用的条目。"


def test_mute_remove_and_reset(page, site):
    seeds = of_category(site, "cs.CL", 4)
    open_page(page, site, "?seed=" + ",".join(seeds))
    page.locator("#foryou-keep").click()
    page.wait_for_function("() => document.querySelectorAll('#foryou-seeds li button').length")
    found = results(page)
    first = site["papers"][found[0]]
    category = first["categories"][0]
    page.locator("#foryou-results > li").first.get_by_role(
        "button", name=f"屏蔽 分类 · {category}").click()
    page.wait_for_function(READY)
    found = results(page)
    assert len(found) == 20
    assert not any(category in site["papers"][i]["categories"] for i in found)
    assert page.locator("#foryou-muted li").all_text_contents()[0].startswith("分类 " + category)
    author = site["papers"][found[0]]["authors"][0]
    page.locator("#foryou-results > li").first.get_by_role(
        "button", name=f"屏蔽 作者 · {author}").click()
    assert not any(author in site["papers"][i]["authors"] for i in results(page))
    page.locator("#foryou-muted").get_by_role("button", name=f"取消屏蔽 · {category}").click()
    assert any(category in site["papers"][i]["categories"] for i in results(page))
    page.locator("#foryou-seeds li").first.get_by_role("button").click()
    page.wait_for_function(READY)
    assert seed_keys(page) == [f"arxiv:{i}" for i in seeds[1:]]
    page.once("dialog", lambda d: d.accept())
    page.locator("#foryou-reset").click()
    assert results(page) == []
    assert seed_keys(page) == []
    assert page.evaluate("JSON.parse(localStorage.getItem('papertrail.foryou'))") == {
        "imported": [], "removed": [], "muted": []}


def test_saved_papers_and_follows_are_seeds_until_removed_here(page, site):
    saved = of_category(site, "cs.CV", 1)[0]
    page.goto(site["url"] + "for-you/")
    page.evaluate("""s => {
      localStorage.setItem('papertrail.saved', JSON.stringify([{id: s, title: 'T', bibtex: '',
        url: 'paper/' + s + '.html', note: '', saved: 1}]));
      localStorage.setItem('papertrail.follows', JSON.stringify([
        {kind: 'category', value: 'cs.CL', since: 1}, {kind: 'query', value: 'zzqx unknown'}]));
    }""", saved)
    found = open_page(page, site)
    assert len(found) == 20 and saved not in found
    assert seed_keys(page) == [f"arxiv:{saved}", "follow:category:cs.CL",
                               "follow:query:zzqx unknown"]
    # Removed here, the paper stays saved and the follow followed.
    page.locator("#foryou-seeds li").nth(1).get_by_role("button").click()
    page.wait_for_function(READY)
    assert seed_keys(page) == [f"arxiv:{saved}", "follow:query:zzqx unknown"]
    assert len(page.evaluate("JSON.parse(localStorage.getItem('papertrail.follows'))")) == 2


def test_the_whole_profile_exports_and_imports_back(page, site, tmp_path):
    seeds = of_category(site, "cs.AI", 3)
    open_page(page, site, "?seed=" + ",".join(seeds))
    page.locator("#foryou-keep").click()
    page.wait_for_function("() => document.querySelectorAll('#foryou-seeds li button').length")
    results(page)
    page.locator("#foryou-results > li").first.locator(".mutes button").first.click()
    page.evaluate("""() => {
      localStorage.setItem('papertrail.follows',
        JSON.stringify([{kind: 'author', value: 'Ada', since: 5}]));
      localStorage.setItem('papertrail.saved', JSON.stringify([{id: '2606.00001', title: '<b>T</b>',
        bibtex: '@misc{x}', url: 'paper/2606.00001.html', note: 'n', saved: 3}]));
    }""")
    before = page.evaluate("['papertrail.foryou', 'papertrail.follows', 'papertrail.saved']"
                           ".map(k => JSON.parse(localStorage.getItem(k)))")
    with page.expect_download() as dl:
        page.locator("#foryou-export").click()
    exported = tmp_path / "profile.json"
    dl.value.save_as(exported)
    assert json.loads(exported.read_text())["foryou"] == before[0]
    page.evaluate("localStorage.clear()")
    page.reload()
    results(page)
    page.set_input_files("#foryou-import", str(exported))
    page.wait_for_function("() => document.querySelectorAll('#foryou-seeds li').length >= 4")
    after = page.evaluate("['papertrail.foryou', 'papertrail.follows', 'papertrail.saved']"
                          ".map(k => JSON.parse(localStorage.getItem(k)))")
    assert after == before


def test_hostile_titles_stay_text(page, site, tmp_path):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_page(page, site, f"?seed={XSS_ID},javascript:alert(1),<img>")
    assert seed_keys(page) == [f"arxiv:{XSS_ID}"]
    assert page.locator("#foryou-seeds bdi").text_content() == XSS_TITLE
    assert XSS_TITLE in page.locator("#foryou-results .why bdi").first.text_content()
    hostile = "<img src=x onerror=alert(3)>"
    page.locator("#foryou-keep").click()
    import_file(page, tmp_path, "evil.bib", f"@misc{{e, title={{{hostile} graph}}}}")
    assert hostile + " graph" in page.locator("#foryou-seeds bdi").all_text_contents()
    assert page.locator("#foryou img, #foryou script").count() == 0
    assert dialogs == []


@pytest.fixture(scope="module")
def english_site(en_site):
    papers = {p["arxiv_id"]: p for p in en_site.store.library().to_pylist()}
    meta, _ = built_window(en_site.out)
    with serve(en_site.out) as url:
        yield url, [i for i in meta["ids"] if "<" not in papers[i]["title"]]


def test_the_english_site_says_it_in_english(page, english_site):
    url, ids = english_site
    page.goto(url + "index.html")
    page.get_by_role("link", name="For you").click()
    page.wait_for_function(READY)
    assert page.locator("#foryou-status").text_content().startswith("No seeds yet")
    page.goto(url + "for-you/?seed=" + ids[0])
    page.wait_for_function(READY)
    assert re.fullmatch(r"\d+ recent papers ranked against your seeds \(1\)",
                        page.locator("#foryou-status").text_content())
    assert page.locator("#foryou-results > li .why").first.text_content().startswith(
        "Closest to: ")
    assert page.locator("h1").text_content() == "For you"


# -- hostile libraries, a full storage, a shared link's mutes -------------------------------------

def stored_profile(pg):
    return pg.evaluate("JSON.parse(localStorage.getItem('papertrail.foryou'))")


def test_parentheses_in_bibtex_text_cut_no_entry(page, site, tmp_path):
    """BibTeX nests braces only: "1) … 2)" in an abstract and ":(" in a title are text."""
    open_page(page, site)
    bib = ("@article{a, title={Results :(}}\n"
           "@misc{b, title={Graph kernels}}\n"
           "@article{c, title={Steps}, abstract={We 1) read and 2) rank.}}\n"
           "@book(d, title={Deep graph kernels (for molecules)})\n")
    import_file(page, tmp_path, "paren.bib", bib)
    assert page.locator("#foryou-import-status").text_content().startswith("读入 4 条")
    assert len(seed_keys(page)) == 4
    assert "Results :(" in page.locator("#foryou-seeds bdi").all_text_contents()


def test_twenty_thousand_ids_import_and_the_page_answers(page, site, tmp_path):
    window = of_category(site, "cs.CL", 3)
    made = [f"2101.{i:05d}" for i in range(20000 - len(window))]
    open_page(page, site)
    found = import_file(page, tmp_path, "ids.txt", "\n".join(window + made + made[:500]) + "\n")
    status = page.locator("#foryou-import-status").text_content()
    assert status.startswith("读入 20500 条，其中 3 条")
    assert len(stored_profile(page)["imported"]) == 20000  # each id once
    assert found and not set(found) & set(window)
    # The first 200 seeds listed and a count of the rest; a share link of 200 ids at most.
    assert len(seed_keys(page)) == 201
    assert page.locator("#foryou-seeds li.note").text_content() == "……另有 19800 个种子"
    assert page.locator("#foryou-share").get_attribute("href").count(",") == 199
    assert page.evaluate("1 + 1") == 2  # the tab answers


def test_a_library_over_the_bound_is_refused_unread(page, site, tmp_path):
    open_page(page, site)
    big = tmp_path / "huge.bib"
    head = "@misc{k, title={Padding}, abstract={"
    big.write_text(head + "x" * (11 * 1024 * 1024 - len(head) - 3) + "}}\n")
    page.set_input_files("#foryou-import", str(big))
    page.wait_for_function("() => document.getElementById('foryou-import-status').textContent")
    assert page.locator("#foryou-import-status").text_content() == (
        "文件有 11.0 MB，导入上限为 10 MB。请导出文库的一部分再导入。")
    assert stored_profile(page) is None


FILL_STORAGE = """() => {
  let size = 1 << 20, i = 0;
  while (size >= 1) {
    try { localStorage.setItem('fill' + i++, 'x'.repeat(size)); } catch { size >>= 1; }
  }
}"""


def test_a_full_storage_keeps_the_link_and_says_so(page, site):
    seeds = of_category(site, "cs.CV", 3)
    open_page(page, site, "?seed=" + ",".join(seeds))
    page.evaluate(FILL_STORAGE)
    page.locator("#foryou-keep").click()
    note = page.locator("#storage-full")
    note.wait_for()
    assert note.text_content().startswith("浏览器为本站保留的存储已满")
    assert note.get_attribute("role") == "alert"
    assert page.url.endswith("?seed=" + ",".join(seeds))  # the seeds are still there
    assert page.locator("#foryou-shared").is_visible()
    assert stored_profile(page) is None
    # Room again: the same button keeps them.
    page.evaluate("() => Object.keys(localStorage).forEach(k => localStorage.removeItem(k))")
    page.locator("#foryou-keep").click()
    page.wait_for_function("() => !location.search")
    assert [e["id"] for e in stored_profile(page)["imported"]] == seeds


def test_a_full_storage_refuses_a_mute_and_a_save_visibly(page, site):
    seeds = of_category(site, "cs.CL", 2)
    open_page(page, site, "?seed=" + ",".join(seeds))
    page.locator("#foryou-keep").click()
    page.wait_for_function("() => !location.search")
    results(page)
    before = stored_profile(page)
    page.evaluate(FILL_STORAGE)
    page.locator("#foryou-results > li").first.locator(".mutes button").first.click()
    page.locator("#storage-full").wait_for()
    assert stored_profile(page) == before
    assert page.locator("#foryou-muted li.note").count() == 1  # nothing muted
    page.goto(site["url"] + f"paper/{seeds[0]}.html")
    page.locator(".save button").click()
    page.locator("#storage-full").wait_for()
    assert page.locator(".save button").get_attribute("aria-pressed") == "false"


def test_a_shared_links_mute_hides_papers_in_this_view_only(page, site):
    seeds = of_category(site, "cs.CL", 4)
    found = open_page(page, site, "?seed=" + ",".join(seeds))
    category = site["papers"][found[0]]["categories"][0]
    page.locator("#foryou-results > li").first.get_by_role(
        "button", name=f"屏蔽 分类 · {category}").click()
    page.wait_for_function(READY)
    assert not any(category in site["papers"][i]["categories"] for i in results(page))
    assert page.locator("#foryou-muted li").first.text_content().startswith("分类 " + category)
    assert "只作用于本页" in page.locator("#foryou-shared-note").text_content()
    assert stored_profile(page) is None  # the reader's own profile is untouched
    page.goto(site["url"] + "for-you/")
    page.wait_for_function(READY)
    assert page.locator("#foryou-muted li.note").count() == 1
