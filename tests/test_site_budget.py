"""[site] max_site_mb: the site never passes it; the oldest paper pages turn light (their
article in a shard the page fetches) and keep their address, and when even light pages do
not all fit the oldest give way and their papers link to arXiv. The sources page says up to
when pages are light, and from when on papers have one."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import gzip
import json
import os
import re
import time
import weakref
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from markupsafe import Markup

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.cli import cli
from pipeline.site import generator
from pipeline.site.budget import HEADROOM, REST_SHARE, PaperPages, order
from pipeline.site.index import recommend as _recommend
from pipeline.site.index import search as _search
from pipeline.site.model.views import PageKind, Pages, Paper
from pipeline.site.pages import paper as paper_pages
from pipeline.site.writer import SkipUnchangedWriter, relative
from pipeline.store import Store
from tests.support.servers import serve
from tests.support.site import DAYS, build_at_last_run, html_files, make_config, parse, run_pipeline

pytestmark = pytest.mark.slow  # every test builds a site, most of them several


def _config(root: Path, max_site_mb: float | None = None) -> config_mod.Config:
    limit = {"max_site_mb": max_site_mb} if max_site_mb else {}
    return make_config(root, None, output="out", **limit)


def _resolves(page: Path, link: str) -> bool:
    target = (page.parent / link.split("#")[0]).resolve()
    return target.is_file() or (target / "index.html").is_file()


def _bytes_on_disk(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _whole_site(root: Path) -> tuple[int, int]:
    """The site with every paper page full, built again: (its bytes, its paper pages'
    bytes)."""
    assert build_at_last_run(_config(root)).light == 0
    return _bytes_on_disk(root / "out"), _bytes_on_disk(root / "out" / "paper")


def _pages(out: Path) -> tuple[set[str], set[str]]:
    """The paper pages under `out`, (full, light), by site path."""
    full, light = set(), set()
    for page in (out / "paper").glob("*.html"):
        text = page.read_text("utf-8")
        (light if 'data-light="' in text else full).add(str(page.relative_to(out)))
    return full, light


def _shards(out: Path) -> dict[str, dict[str, list[str]]]:
    """Every shard's entries by id, by the shard's name."""
    return {path.name.removesuffix(".json.gz"): json.loads(gzip.decompress(path.read_bytes()))
            for path in (out / "paper" / "shards").rglob("*.json.gz")}


@pytest.fixture(scope="module")
def store_of_a_day(tmp_path_factory) -> Path:
    """A store of the sample's first day, and the size of its site with every page."""
    root = tmp_path_factory.mktemp("budget")
    cfg = _config(root)
    run_pipeline(cfg, DAYS[:1])
    build_at_last_run(cfg)
    return root


def test_the_oldest_paper_pages_turn_light_and_the_site_stays_within_the_limit(
        store_of_a_day):
    root = store_of_a_day
    out = root / "out"
    whole, pages = _whole_site(root)
    papers = {r["arxiv_id"]: r["updated"] for r in
              Store(root / "data").read("papers").select(["arxiv_id", "updated"]).to_pylist()}
    limit_mb = (whole - pages / 4) / 1e6
    cfg = _config(root, limit_mb)

    report = build_at_last_run(cfg)

    assert _bytes_on_disk(out) <= limit_mb * 1e6
    assert report.size_bytes <= limit_mb * 1e6
    full_pages, light_pages = _pages(out)
    full = {Path(p).stem for p in full_pages}
    light = {Path(p).stem for p in light_pages}
    assert full | light == set(papers) and full and light  # every paper keeps its page
    assert report.light == len(light)
    assert f"{len(light)} paper pages light" in report.line()
    # The newest stay full: every full page is of a paper updated no earlier than any
    # light one.
    assert min(papers[i] for i in full) >= max(papers[i] for i in light)
    # Each light page's article and citation tags are in its shard, named by its id but the
    # last two digits: a shard holds every paper of its range, and a shard is there only
    # for a light page.
    shards = _shards(out)
    assert {i for entries in shards.values() for i in entries} >= light
    for name, entries in shards.items():
        assert set(entries) == {i for i in papers if i[:-2] == name}
        assert set(entries) & light
    some = sorted(light)[0]
    meta, main = shards[some[:-2]][some]
    assert f'<meta name="citation_arxiv_id" content="{some}">' in meta
    assert '<article class="paper" data-primary=' in main and '<details class="abstract"' in main
    # Lists link every paper to its page, and no link anywhere points at a page gone.
    library = "".join(p.read_text("utf-8") for p in (out / "library").rglob("*.html"))
    assert re.search(rf'<h2><a href="(\.\./)+paper/{some}\.html">', library)
    broken = [(page, link) for page in html_files(out) for link in parse(page).links
              if link.startswith("../") and not _resolves(page, link)]
    assert broken == []
    zone = ZoneInfo(cfg.site.timezone)
    last = max(papers[i] for i in light).astimezone(zone).strftime("%Y-%m-%d")
    sources = (out / "sources" / "index.html").read_text("utf-8")
    assert f"都有单独的论文页。其中 {len(light):,} 篇（{last} 及以前更新的）是轻量论文页" in sources
    assert f"站点因此不超过 {limit_mb:g} MB" in sources


def test_a_rebuild_under_the_same_limit_writes_nothing_and_a_higher_one_makes_pages_full(
        store_of_a_day):
    root = store_of_a_day
    out = root / "out"
    whole, pages = _whole_site(root)
    cfg = _config(root, (whole - pages / 5) / 1e6)
    first = build_at_last_run(cfg)
    assert first.light > 0 and _shards(out)

    again = build_at_last_run(cfg)

    assert (again.written, again.removed, again.light) == (0, 0, first.light)
    back = build_at_last_run(_config(root))
    assert back.light == 0
    full, light = _pages(out)
    assert len(full) == Store(root / "data").read("papers").num_rows and not light
    assert not (out / "paper" / "shards").exists() or not _shards(out)  # stale: removed
    sources = (out / "sources" / "index.html").read_text("utf-8")
    assert "都有单独的论文页。" in sources and "轻量" not in sources


def test_a_limit_too_small_for_lists_feeds_and_search_is_a_config_error(store_of_a_day):
    cfg = _config(store_of_a_day, 1)
    runs = Store(cfg.store_path).read("runs").to_pylist()
    with pytest.raises(config_mod.ConfigError) as caught:
        build_mod.build(cfg, now=max(r["finished"] for r in runs))
    assert "site.max_site_mb = 1" in str(caught.value)
    assert "even without its" in str(caught.value)
    assert str(cfg.path) in str(caught.value)
    result = CliRunner().invoke(cli, ["--config", str(cfg.path), "build"])
    assert result.exit_code == 2
    assert "max_site_mb" in result.output


def test_the_passes_share_one_set_of_cards_and_let_go_of_it(store_of_a_day, monkeypatch):
    # A build under the limit renders in passes, each with an Output of its own; the
    # cards (~1 KB a paper, 200 MB at 200,000) do not depend on which pages are kept, so
    # every pass shares the first one's. No pass's Output, nor with it the cards,
    # outlives the build.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    passes: list[weakref.ref] = []
    cards: list[int] = []
    render_site = generator.render_site

    def noted(out, pages, rendered):
        passes.append(weakref.ref(out))
        done = render_site(out, pages, rendered)
        assert out.cards
        cards.append(id(out.cards))
        return done

    monkeypatch.setattr(generator, "render_site", noted)
    report = build_at_last_run(_config(root, (whole - pages / 6) / 1e6 - 0.001))
    gc.collect()
    assert report.light > 0 and len(passes) >= 2
    assert len(set(cards)) == 1
    assert [ref() for ref in passes] == [None] * len(passes)


def _in_an_empty_folder(cfg: config_mod.Config, folder: str) -> config_mod.Config:
    """As every scheduled run builds: nothing of an earlier build to start from."""
    return dataclasses.replace(cfg, site=dataclasses.replace(cfg.site, output=Path(folder)))


def _noting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, noted: Path,
            what: Callable[..., str]) -> None:
    """`owner.name` adds a line to `noted` at each call: what(its arguments) and the
    process that called it (paper pages and the index render in worker processes)."""
    real = getattr(owner, name)

    def noting(*args, **kwargs):
        with open(noted, "a", encoding="utf-8") as fh:
            fh.write(f"{what(*args)} {os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, noting)


def test_a_first_build_over_the_limit_renders_the_index_once_and_no_page_twice(
        store_of_a_day, monkeypatch):
    # Neither the index nor a full page depends on which pages are light: a page rendered
    # in a pass whose estimate moved the boundary is not rendered again, and the index's
    # key, made along with it, is not made again on its own. Renders are noted in a file:
    # paper pages and the index render in worker processes.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    noted = root / "rendered.txt"
    _noting(monkeypatch, paper_pages, "render_one", noted, lambda site, out, paper: paper.path)
    _noting(monkeypatch, _search, "build_index", noted, lambda *args: "index")
    _noting(monkeypatch, _search, "fingerprint", noted, lambda *args: "key")
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 4) / 1e6), "cold")
    report = build_at_last_run(cfg)

    lines = Counter(line.split()[0] for line in noted.read_text("utf-8").splitlines())
    kept, light = _pages(cfg.output_path)
    assert report.light == len(light) > 0 and kept
    assert lines.pop("index") == 1 and "key" not in lines
    assert set(lines.values()) == {1}
    assert kept <= set(lines)
    assert report.size_bytes <= cfg.site.max_site_mb * 1e6


def test_pages_that_wait_for_the_index_render_meanwhile_and_those_then_light_are_made_so(
        store_of_a_day, monkeypatch):
    # When the pages would not fit even with nothing else (at 200,000 papers, not in a
    # day's sample: it is forced here, once), they wait for the rest to be measured, the
    # index too; the build's process renders the newest meanwhile (the index is slowed, as
    # it is the longest part at scale). None is rendered full twice, and those that then
    # turn light are light pages when the build ends.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    noted = root / "waited.txt"
    build_index, to_render = _search.build_index, PaperPages.to_render
    forced: list[bool] = []

    def slow_index(*args, **kwargs):
        time.sleep(3)
        return build_index(*args, **kwargs)

    def waiting_once(self):
        if not forced:
            forced.append(True)
            return None
        return to_render(self)

    _noting(monkeypatch, paper_pages, "render_one", noted, lambda site, out, paper: paper.path)
    monkeypatch.setattr(_search, "build_index", slow_index)
    monkeypatch.setattr(PaperPages, "to_render", waiting_once)
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 4) / 1e6), "waited")
    report = build_at_last_run(cfg)

    lines = [line.split() for line in noted.read_text("utf-8").splitlines()]
    by_this_process = {path for path, pid in lines if int(pid) == os.getpid()}
    kept, light = _pages(cfg.output_path)
    assert forced and report.light == len(light) > 0 and kept
    assert by_this_process - kept <= light  # rendered while waiting, then made light
    assert by_this_process - kept
    assert by_this_process & kept
    assert Counter(path for path, _ in lines).most_common(1)[0][1] == 1
    assert kept <= {path for path, _ in lines}
    papers = Store(root / "data").read("papers").num_rows
    assert len(kept) == papers - report.light
    assert _bytes_on_disk(cfg.output_path) <= cfg.site.max_site_mb * 1e6
    assert build_at_last_run(cfg).written == 0
    # The pages rendered while waiting take no room from the rest: the boundary is the one
    # drawn when none is rendered while waiting.
    monkeypatch.setattr(_search, "build_index", build_index)
    forced.clear()
    assert build_at_last_run(_in_an_empty_folder(cfg, "unhurried")).light == report.light


def test_when_even_light_pages_do_not_fit_the_oldest_give_way(store_of_a_day, page):
    """Lists, search and the sitemap link a paper whose page gave way to arXiv, and its
    page's address shows it from the index (404.html), saying why it has no page."""
    root = store_of_a_day
    whole, pages = _whole_site(root)
    papers = {r["arxiv_id"]: r["updated"] for r in
              Store(root / "data").read("papers").select(["arxiv_id", "updated"]).to_pylist()}
    limit_mb = (whole - pages * 0.8) / 1e6
    cfg = _in_an_empty_folder(_config(root, limit_mb), "left-out")
    report = build_at_last_run(cfg)

    out = cfg.output_path
    assert _bytes_on_disk(out) <= limit_mb * 1e6
    full, light = ({Path(p).stem for p in kind} for kind in _pages(out))
    gone = set(papers) - full - light
    assert report.left_out == len(gone) > 0 and report.light == len(light) > 0
    assert f"{len(gone)} paper pages left out" in report.line()
    assert min(papers[i] for i in light) >= max(papers[i] for i in gone)
    assert not {i for entries in _shards(out).values() for i in entries} & gone - \
        {i for i in papers if i[:-2] in {j[:-2] for j in light}}
    some = sorted(gone)[0]
    library = "".join(p.read_text("utf-8") for p in (out / "library").rglob("*.html"))
    assert f'<h2><a href="https://arxiv.org/abs/{some}v' in library
    assert f"paper/{some}.html" not in library
    assert f"paper/{some}.html" not in (out / "sitemap.xml").read_text("utf-8")
    broken = [(p, link) for p in html_files(out) for link in parse(p).links
              if link.startswith("../") and not _resolves(p, link)]
    assert broken == []
    zone = ZoneInfo(cfg.site.timezone)
    first = min(papers[i] for i in full | light).astimezone(zone).strftime("%Y-%m-%d")
    sources = (out / "sources" / "index.html").read_text("utf-8")
    assert re.search(rf"{first} 起更新的论文。更早的 {len(gone):,} 篇", sources)
    assert "是轻量论文页" in sources
    assert build_at_last_run(cfg).written == 0
    manifest = (out / "search" / "manifest.json").read_text("utf-8")
    assert '"pages_from":[' in manifest.replace(" ", "")
    with serve(out) as url:
        for arxiv_id, href in ((sorted(light)[0], f"{url}paper/{sorted(light)[0]}.html"),
                               (some, f"https://arxiv.org/abs/{some}")):
            page.goto(f"{url}search/?q={arxiv_id}")
            link = page.locator(f'#results li[data-id="{arxiv_id}"] h2 a')
            assert link.get_attribute("href") == href
        assert page.goto(f"{url}paper/{some}.html").status == 404
        page.wait_for_function("() => !document.getElementById('missing-paper').dataset.busy")
        card = page.locator(f'#missing-result li[data-id="{some}"]')
        assert card.locator("h2 a").get_attribute("href") == f"https://arxiv.org/abs/{some}"
        assert some in page.locator("#missing-why").inner_text()


def test_search_links_every_paper_to_its_page_full_or_light(store_of_a_day, page):
    root = store_of_a_day
    whole, pages = _whole_site(root)
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 4) / 1e6), "searched")
    report = build_at_last_run(cfg)
    assert report.light > 0 and report.left_out == 0
    out = cfg.output_path
    full, light = (sorted(Path(p).stem for p in kind) for kind in _pages(out))
    with serve(out) as url:
        for arxiv_id in (full[0], light[0]):
            page.goto(f"{url}search/?q={arxiv_id}")
            link = page.locator(f'#results li[data-id="{arxiv_id}"] h2 a')
            assert link.get_attribute("href") == f"{url}paper/{arxiv_id}.html"


def test_a_light_page_shows_its_paper_from_its_shard(store_of_a_day, browser):
    """In chromium, served as GitHub Pages serves it (the shard as stored, gzipped): a
    light page shows what the paper's full page shows, its head's citation tags included,
    and the scripts a full page runs fill its boxes. Without JavaScript it shows its title,
    its arXiv link and why there is no more; without its shard, why not."""
    root = store_of_a_day
    whole, pages = _whole_site(root)
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 4) / 1e6), "light")
    assert build_at_last_run(cfg).light > 0
    out = cfg.output_path
    papers = {r["arxiv_id"]: r for r in Store(root / "data").read("papers").to_pylist()}
    light = sorted(Path(p).stem for p in _pages(out)[1])
    # a light paper with more than one author, so the follow buttons are several
    some = next(i for i in light if len(papers[i]["authors"]) > 1)
    # its full page, in a site built with every page full
    assert build_at_last_run(_config(root)).light == 0
    with serve(root / "out") as url:
        full = _shown(browser, url, f"paper/{some}.html")
    with serve(out) as url:
        light = _shown(browser, url, f"paper/{some}.html")
        assert light == full
        assert full["status"] == 200 and full["errors"] == []
        assert '<details class="abstract"' in light["article"]
        assert ["citation_arxiv_id", some] in light["tags"]
        assert light["nav"] and light["bibtex"].startswith("@misc{")
        assert light["follows"] >= len(papers[some]["authors"])
        assert light["authors"]  # search.js ran: its author names link to their papers

        context = browser.new_context(java_script_enabled=False)
        try:
            tab = context.new_page()
            tab.goto(f"{url}paper/{some}.html")
            assert " ".join(papers[some]["title"].split()) in tab.locator("h1").inner_text()
            assert tab.locator(f'a[href^="https://arxiv.org/abs/{some}v"]').count() == 1
            assert "JavaScript" in tab.locator("body").inner_text()
            assert tab.locator("details.abstract").count() == 0
        finally:
            context.close()

        (out / "paper" / "shards" / f"{some[:-2]}.json.gz").unlink()
        context = browser.new_context()
        try:
            tab = context.new_page()
            tab.goto(f"{url}paper/{some}.html")
            note = tab.locator("article.paper[data-light] p.note")
            note.wait_for()
            assert "HTTP 404" in note.inner_text() and "arXiv" in note.inner_text()
            # The nav's search works still: an id in its box jumps to the paper's address.
            # (without search.js the form would open the search page).
            tab.fill("form.quick input[name=q]", some)
            with tab.expect_navigation():
                tab.press("form.quick input[name=q]", "Enter")
            assert tab.url == f"{url}paper/{some}.html"
        finally:
            context.close()


def _shown(browser, url: str, path: str) -> dict:
    """What the page at `path` shows in chromium once its scripts are done (the similar
    papers' list aside: search.js fills it from the index in its own time), the site's
    own address as "/"."""
    context = browser.new_context()
    try:
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda e: errors.append(str(e)))
        status = tab.goto(url + path).status
        tab.wait_for_selector("article.paper[data-primary] .follows button")
        shown = tab.evaluate("""() => {
            const article = document.querySelector("article.paper").cloneNode(true);
            article.querySelectorAll("section.similar").forEach(s => s.remove());
            return {article: article.outerHTML,
                    tags: [...document.querySelectorAll("meta[name]")]
                      .map(m => [m.name, m.content]),
                    nav: document.querySelector(".top nav").outerHTML,
                    bibtex: document.getElementById("bibtex").textContent,
                    follows: document.querySelectorAll(".follows button").length,
                    authors: document.querySelectorAll("article.paper p.authors a bdi").length};
        }""")
        shown["article"] = shown["article"].replace(url, "/")
        return {"status": status, "errors": errors, "title": tab.title(), **shown}
    finally:
        context.close()


def test_the_address_of_a_page_the_site_lacks_shows_its_paper(store_of_a_day, page):
    """GitHub Pages serves 404.html for an address the site lacks (so does the demo's
    server, tests' too): at a paper page's address it shows that paper from the index,
    linked to arXiv when it is past paper_pages_days; an id the index lacks links to arXiv;
    any other address, nothing."""
    root = store_of_a_day
    cfg = _config(root)
    path = cfg.path.with_name("aged.toml")
    path.write_text(cfg.path.read_text("utf-8") + "paper_pages_days = 1\n", encoding="utf-8")
    build_at_last_run(config_mod.load(path))
    out = root / "out"
    papers = {r["arxiv_id"]: r["title"] for r in Store(root / "data").read("papers").to_pylist()}
    with serve(out) as url:
        gone = next(i for i in papers if not (out / "paper" / f"{i}.html").is_file())
        assert page.goto(f"{url}paper/{gone}.html").status == 404
        page.wait_for_function("() => !document.getElementById('missing-paper').dataset.busy")
        card = page.locator(f'#missing-result li[data-id="{gone}"]')
        assert card.locator("h2 a").get_attribute("href") == f"https://arxiv.org/abs/{gone}"
        assert gone in page.locator("#missing-why").inner_text()

        # a page the site keeps but the host lacks for a moment (a deploy under way)
        kept = next(i for i in sorted(papers) if (out / "paper" / f"{i}.html").is_file())
        (out / "paper" / f"{kept}.html").unlink()
        assert page.goto(f"{url}paper/{kept}.html").status == 404
        page.wait_for_function("() => !document.getElementById('missing-paper').dataset.busy")
        card = page.locator(f'#missing-result li[data-id="{kept}"]')
        assert card.locator("h2 a").get_attribute("href") == f"{url}paper/{kept}.html"
        assert " ".join(papers[kept].split()) in card.locator("h2").inner_text()
        assert card.locator("a.more-like").get_attribute("href") == f"{url}search/?like={kept}"
        assert page.locator("#missing-why").inner_text() == ""
        assert page.evaluate("getComputedStyle(document.body).margin") != "8px"  # styled

        unknown = "2101.00001"
        assert unknown not in papers
        assert page.goto(f"{url}paper/{unknown}.html").status == 404
        page.wait_for_function("() => !document.getElementById('missing-paper').dataset.busy")
        assert page.locator("#missing-result li").count() == 0
        link = page.locator("#missing-why a")
        assert link.get_attribute("href") == f"https://arxiv.org/abs/{unknown}"

        for address in ("paper/%3Cimg%20src=x%20onerror=alert(1)%3E.html", "nothing/here",
                        "paper/"):
            assert page.goto(url + address).status == 404
            assert page.locator("h1").inner_text() == "找不到这一页"
            assert page.locator("#missing-paper").is_hidden()
            assert page.locator("img").count() == 0



@pytest.mark.parametrize("share", [0.8, 0.9])
def test_no_page_is_left_out_while_the_limit_has_room_for_it(store_of_a_day, share):
    """The estimate of a light page's bytes runs high (its share of a shard): the measure
    of what the first pass wrote brings back the pages that fit."""
    root = store_of_a_day
    whole, pages = _whole_site(root)
    limit = whole - pages * share
    cfg = _in_an_empty_folder(_config(root, limit / 1e6), f"room-{share}")
    report = build_at_last_run(cfg)
    out = cfg.output_path
    size = _bytes_on_disk(out)
    _, light = _pages(out)
    each = (sum((out / p).stat().st_size for p in light)
            + _bytes_on_disk(out / "paper" / "shards")) / len(light)
    room = limit * (1 - HEADROOM) - size
    assert report.left_out > 0 and size <= limit
    assert room < 2 * each



def test_moving_the_boundary_makes_new_pages_and_changes_no_paper(tmp_path):
    """keep_from draws light and left-out pages as a new Pages value, which renderers read
    from the SiteData of their pass; the papers stay as they were made."""
    t0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    papers = [Paper(f"2606.{i:05d}", 1, "t", Markup("t"), "a", [], ["cs.AI"], "cs.AI",
                    None, None, None, *[t0 + dt.timedelta(hours=i)] * 4, False, None, [],
                    pageable=i != 5) for i in range(10)]
    made = [dict(vars(p)) for p in papers]
    pages = PaperPages.of(papers, _config(tmp_path), "salt")
    before = pages.pages
    assert before == Pages() and len(pages.full) == 9
    pages.keep_from(order(papers[4]), order(papers[2]))  # light before 4, none before 2
    assert pages.pages is not before and before == Pages()
    assert [pages.pages.kind(p) for p in papers] == [
        *[PageKind.NONE] * 2, *[PageKind.LIGHT] * 2, PageKind.FULL, PageKind.NONE,
        *[PageKind.FULL] * 4]
    assert (len(pages.light), pages.left_out, len(pages.full)) == (2, 2, 5)
    assert [vars(p) for p in papers] == made


def test_full_pages_that_fit_only_by_themselves_wait_for_the_rest_on_a_first_build(tmp_path):
    """At a year of cs.* the full pages fit in 950 MB by themselves, not beside the rest (43%
    of it): rendered alongside it, 71,000 were made full, then again light. Until a measure
    draws the boundary (this build's of the rest, or the last build's), they render
    alongside the rest only when they would fit beside REST_SHARE of the limit."""
    t0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    papers = [Paper(f"2606.{i:05d}", 1, "t", Markup("t"), "a", [], ["cs.AI"], "cs.AI",
                    None, None, None, *[t0 + dt.timedelta(hours=i)] * 4, False, None, [])
              for i in range(100)]

    def first_build(max_site_mb: float) -> PaperPages:
        pages = PaperPages.of(papers, _config(tmp_path, max_site_mb), "salt")
        pages.estimate([(6000, 1000)] * len(pages.sample()))  # 600 KB full, 100 KB light
        return pages

    assert first_build(10).to_render() == papers[::-1]  # far within the limit
    pages = first_build(1)
    full, limit = 100 * 6000, 1e6  # alone they fit, beside REST_SHARE of the limit not
    assert limit * (1 - HEADROOM - REST_SHARE) < full < limit * (1 - HEADROOM)
    assert pages.to_render() is None
    out = tmp_path / "out"
    writer = SkipUnchangedWriter(str(out))
    writer.put(out / "index.html", b"x" * 200_000)  # the rest, as rendered
    pages.give_way(writer)
    assert pages.light == [] and pages.to_render() == papers[::-1]
    pages.fit(writer)  # records the boundary for the next build
    assert first_build(1).to_render() == papers[::-1]


def test_before_the_rest_is_measured_only_pages_light_whatever_it_takes_turn_light(tmp_path):
    """The pages that wait for the rest to be measured go to the workers beside the index
    when they turn light even if the rest took no room: the oldest, and all of them among
    those the measure then turns light."""
    t0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    papers = [Paper(f"2606.{i:05d}", 1, "t", Markup("t"), "a", [], ["cs.AI"], "cs.AI",
                    None, None, None, *[t0 + dt.timedelta(hours=i)] * 4, False, None, [])
              for i in range(100)]
    pages = PaperPages.of(papers, _config(tmp_path, 1), "salt")
    pages.estimate([(15_000, 2_500)] * len(pages.sample()))  # 1.5 MB full, 0.25 MB light
    assert pages.to_render() is None
    pages.light_at_least()
    # 0.99 MB less all light, 261,600 bytes with the records' lines, leaves room for 58
    # pages' 12,500 bytes more
    assert pages.light == papers[:42]
    out = tmp_path / "out"
    writer = SkipUnchangedWriter(str(out))
    writer.put(out / "index.html", b"x" * 250_000)  # the rest, as rendered
    pages.give_way(writer)
    assert pages.light == papers[:62]


def test_pages_light_whatever_the_rest_takes_render_in_a_worker_beside_it(store_of_a_day,
                                                                       monkeypatch):
    # Forced, as at 200,000 papers (a day's sample never needs it): the first pass waits
    # for the rest to be measured, and the oldest third of the pages turn light whatever it
    # takes. Their shards render in a worker beside the rest, each shard once, and the
    # site is the one the same build makes when every page waits.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    noted = root / "shards.txt"
    build_index, to_render = _search.build_index, PaperPages.to_render
    forced: list[bool] = []
    early: set[str] = set()
    early_light: list[int] = []

    def waiting_once(self):
        if not forced:
            forced.append(True)
            return None
        return to_render(self)

    def oldest_third(self):
        self.keep_from(order(self.eligible[len(self.eligible) // 3]), self.paged)
        early.update(name.removeprefix(paper_pages.SHARDS) for name in self.shards())
        early_light.append(len(self.light))

    def slow_index(*args, **kwargs):  # the build's process renders the other shards meanwhile
        time.sleep(3)
        return build_index(*args, **kwargs)

    _noting(monkeypatch, paper_pages, "_render_shard", noted,
            lambda out, name, papers: name.removeprefix(paper_pages.SHARDS))
    monkeypatch.setattr(_search, "build_index", slow_index)
    monkeypatch.setattr(PaperPages, "to_render", waiting_once)
    monkeypatch.setattr(PaperPages, "light_at_least", oldest_third)
    cfg = _in_an_empty_folder(_config(root, (whole - pages * 0.3) / 1e6), "early")
    cfg = dataclasses.replace(cfg, site=dataclasses.replace(cfg.site, build_jobs=2))
    report = build_at_last_run(cfg)

    lines = [line.split() for line in noted.read_text("utf-8").splitlines()]
    assert forced and early and report.light >= early_light[0] > 0 and not report.left_out
    assert Counter(name for name, _ in lines).most_common(1)[0][1] == 1
    assert {name for name, pid in lines if int(pid) != os.getpid()} >= early
    assert _pages(cfg.output_path)[1] and build_at_last_run(cfg).written == 0
    # The same first pass, none of its pages early (none is light whatever the rest takes)
    monkeypatch.setattr(PaperPages, "light_at_least", lambda self: None)
    monkeypatch.setattr(_search, "build_index", build_index)
    forced.clear()
    unhurried = _in_an_empty_folder(cfg, "unhurried")
    again = build_at_last_run(unhurried)
    assert (again.light, again.left_out) == (report.light, report.left_out)
    assert _pages(unhurried.output_path) == _pages(cfg.output_path)
    assert _shards(unhurried.output_path) == _shards(cfg.output_path)


def test_a_pass_that_leaves_pages_out_writes_again_only_what_links_them(
        store_of_a_day, monkeypatch):
    # Pages left out change the links of the lists, briefs and feeds that show their
    # papers, and only of those: a later pass writes again only the pages whose links
    # changed, and makes 为你推荐's vectors, which no boundary changes, once a build.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    passes, vectors, written = [], [], Counter[str]()
    render_site, build_vectors = generator.render_site, _recommend.build
    put = SkipUnchangedWriter.put

    def noted_pass(*args):
        passes.append(1)
        return render_site(*args)

    def noted_vectors(*args, **kwargs):
        vectors.append(1)
        return build_vectors(*args, **kwargs)

    def noted_put(self, path, *args, **kwargs):
        before = self.written
        stamp = put(self, path, *args, **kwargs)
        if self.written > before:
            written[relative(str(path), self.output_path)] += 1
        return stamp

    monkeypatch.setattr(generator, "render_site", noted_pass)
    monkeypatch.setattr(_recommend, "build", noted_vectors)
    monkeypatch.setattr(SkipUnchangedWriter, "put", noted_put)
    cfg = _in_an_empty_folder(_config(root, (whole - pages * 0.8) / 1e6), "once")
    report = build_at_last_run(cfg)

    out = cfg.output_path
    full, light = ({Path(p).stem for p in kind} for kind in _pages(out))
    papers = Store(root / "data").read("papers").column("arxiv_id").to_pylist()
    gone = set(papers) - full - light
    assert report.left_out == len(gone) > 0 and len(passes) >= 2 and len(vectors) == 1
    # A paper whose page a pass left out, or gave back light, is of these; the sources page
    # (which says how many) is written in every pass.
    moved = gone | light
    lists = [name for name in written if name.endswith("index.html")
             and not name.startswith("paper/")]
    again = [name for name in lists if written[name] > 1 and name != "sources/index.html"]
    assert 0 < len(again) < len(lists) and written["search/index.html"] == 1
    for name in again:
        text = (out / name).read_text("utf-8")
        assert any(i in text for i in moved), name
