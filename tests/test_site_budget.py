"""[site] max_site_mb: the site never passes it; the oldest paper pages give way, the lists
link those papers to arXiv, and the sources page says from when on papers have a page."""

from __future__ import annotations

import dataclasses
import gc
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

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.cli import cli
from pipeline.site import _search, generator
from pipeline.site._budget import PaperPages
from pipeline.site.pages import paper as paper_pages
from pipeline.store import Store
from tests.conftest import serve
from tests.test_site import DAYS, build_at_last_run, html_files, parse, run_pipeline


def _config(root: Path, max_site_mb: float | None = None) -> config_mod.Config:
    limit = f"max_site_mb = {max_site_mb}\n" if max_site_mb else ""
    path = root / "papertrail.toml"
    path.write_text(f'[store]\npath = "data"\n[site]\noutput = "out"\n{limit}',
                    encoding="utf-8")
    return config_mod.load(path)


def _resolves(page: Path, link: str) -> bool:
    target = (page.parent / link.split("#")[0]).resolve()
    return target.is_file() or (target / "index.html").is_file()


def _bytes_on_disk(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _whole_site(root: Path) -> tuple[int, int]:
    """The site with every paper page, built again: (its bytes, its paper pages' bytes)."""
    assert build_at_last_run(_config(root)).left_out == 0
    return _bytes_on_disk(root / "out"), _bytes_on_disk(root / "out" / "paper")


@pytest.fixture(scope="module")
def store_of_a_day(tmp_path_factory) -> Path:
    """A store of the sample's first day, and the size of its site with every page."""
    root = tmp_path_factory.mktemp("budget")
    cfg = _config(root)
    run_pipeline(cfg, DAYS[:1])
    build_at_last_run(cfg)
    return root


def test_the_oldest_paper_pages_give_way_and_the_site_stays_within_the_limit(store_of_a_day):
    root = store_of_a_day
    out = root / "out"
    whole, pages = _whole_site(root)
    papers = {r["arxiv_id"]: r["updated"] for r in
              Store(root / "data").read("papers").select(["arxiv_id", "updated"]).to_pylist()}
    limit_mb = (whole - pages / 2) / 1e6
    cfg = _config(root, limit_mb)

    report = build_at_last_run(cfg)

    assert _bytes_on_disk(out) <= limit_mb * 1e6
    assert report.size_bytes <= limit_mb * 1e6
    kept = {p.stem for p in (out / "paper").glob("*.html")}
    left = set(papers) - kept
    assert report.left_out == len(left) > 0
    assert f"{len(left)} paper pages left out" in report.line()
    # The newest keep their page: every page kept is of a paper updated no earlier than
    # any left out.
    assert min(papers[i] for i in kept) >= max(papers[i] for i in left)
    # Lists link the papers left out to arXiv, and no link anywhere points at a page gone.
    some = sorted(left)[0]
    library = "".join(p.read_text("utf-8") for p in (out / "library").rglob("*.html"))
    assert f"https://arxiv.org/abs/{some}v" in library
    assert f"paper/{some}.html" not in library
    broken = [(page, link) for page in html_files(out) for link in parse(page).links
              if link.startswith("../") and not _resolves(page, link)]
    assert broken == []
    zone = ZoneInfo(cfg.site.timezone)
    first = min(papers[i] for i in kept).astimezone(zone).strftime("%Y-%m-%d")
    sources = (out / "sources" / "index.html").read_text("utf-8")
    assert re.search(rf"{first} 起更新的论文。更早的 {len(left):,} 篇", sources)
    assert f"站点不超过 {limit_mb:g} MB" in sources


def test_a_rebuild_under_the_same_limit_writes_nothing_and_a_higher_one_brings_pages_back(
        store_of_a_day):
    root = store_of_a_day
    out = root / "out"
    whole, pages = _whole_site(root)
    cfg = _config(root, (whole - pages / 3) / 1e6)
    first = build_at_last_run(cfg)
    assert first.left_out > 0

    again = build_at_last_run(cfg)

    assert (again.written, again.removed, again.left_out) == (0, 0, first.left_out)
    back = build_at_last_run(_config(root))
    assert back.left_out == 0
    assert len(list((out / "paper").glob("*.html"))) == \
        Store(root / "data").read("papers").num_rows
    assert "都有单独的论文页" in (out / "sources" / "index.html").read_text("utf-8")


def test_a_limit_too_small_for_lists_feeds_and_search_is_a_config_error(store_of_a_day):
    cfg = _config(store_of_a_day, 1)
    runs = Store(cfg.store_path).read("runs").to_pylist()
    with pytest.raises(config_mod.ConfigError) as caught:
        build_mod.build(cfg, now=max(r["finished"] for r in runs))
    assert "site.max_site_mb = 1" in str(caught.value)
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
    report = build_at_last_run(_config(root, (whole - pages / 4) / 1e6 - 0.001))
    gc.collect()
    assert report.left_out > 0 and len(passes) >= 2
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
    # Neither the index nor a paper page depends on which pages are kept: a page rendered
    # in a pass whose estimate moved the boundary is not rendered again, and the index's
    # key, made along with it, is not made again on its own. Renders are noted in a file:
    # paper pages and the index render in worker processes.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    noted = root / "rendered.txt"
    _noting(monkeypatch, paper_pages, "render_one", noted, lambda site, out, paper: paper.path)
    _noting(monkeypatch, _search, "build_index", noted, lambda *args: "index")
    _noting(monkeypatch, _search, "fingerprint", noted, lambda *args: "key")
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 2) / 1e6), "cold")
    report = build_at_last_run(cfg)

    lines = Counter(line.split()[0] for line in noted.read_text("utf-8").splitlines())
    kept = {str(p.relative_to(cfg.output_path))
            for p in (cfg.output_path / "paper").glob("*.html")}
    assert report.left_out > 0 and kept
    assert lines.pop("index") == 1 and "key" not in lines
    assert set(lines.values()) == {1}
    assert kept <= set(lines)
    assert report.size_bytes <= cfg.site.max_site_mb * 1e6


def test_pages_that_wait_for_the_index_render_meanwhile_and_those_left_out_go(
        store_of_a_day, monkeypatch):
    # When the pages would not fit even with nothing else (at 200,000 papers, not in a
    # day's sample: it is forced here, once), they wait for the rest to be measured, the
    # index too; the build's process renders the newest meanwhile (the index is slowed, as
    # it is the longest part at scale). None is rendered twice, and those that then give
    # way are gone when the build ends.
    root = store_of_a_day
    whole, pages = _whole_site(root)
    noted = root / "waited.txt"
    build_index, to_render = _search.build_index, PaperPages.to_render
    forced: list[bool] = []

    def slow_index(*args, **kwargs):
        time.sleep(3)
        return build_index(*args, **kwargs)

    def waiting_once(self, sizes):
        if not forced:
            forced.append(True)
            return None
        return to_render(self, sizes)

    _noting(monkeypatch, paper_pages, "render_one", noted, lambda site, out, paper: paper.path)
    monkeypatch.setattr(_search, "build_index", slow_index)
    monkeypatch.setattr(PaperPages, "to_render", waiting_once)
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 2) / 1e6), "waited")
    report = build_at_last_run(cfg)

    lines = [line.split() for line in noted.read_text("utf-8").splitlines()]
    by_this_process = {path for path, pid in lines if int(pid) == os.getpid()}
    kept = {str(p.relative_to(cfg.output_path))
            for p in (cfg.output_path / "paper").glob("*.html")}
    assert forced and report.left_out > 0 and kept
    assert by_this_process - kept  # rendered while waiting, then given way: removed
    assert by_this_process & kept
    assert Counter(path for path, _ in lines).most_common(1)[0][1] == 1
    assert kept <= {path for path, _ in lines}
    papers = Store(root / "data").read("papers").num_rows
    assert len(kept) == papers - report.left_out
    assert _bytes_on_disk(cfg.output_path) <= cfg.site.max_site_mb * 1e6
    assert build_at_last_run(cfg).written == 0
    # The pages rendered while waiting take no room from the rest: the boundary is the one
    # drawn when none is rendered while waiting.
    monkeypatch.setattr(_search, "build_index", build_index)
    forced.clear()
    assert build_at_last_run(_in_an_empty_folder(cfg, "unhurried")).left_out == \
        report.left_out


def test_search_links_a_paper_to_its_page_only_while_the_site_keeps_it(
        store_of_a_day, page):
    root = store_of_a_day
    whole, pages = _whole_site(root)
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 2) / 1e6), "searched")
    assert build_at_last_run(cfg).left_out > 0
    out = cfg.output_path
    manifest = (out / "search" / "manifest.json").read_text("utf-8")
    ids = [r["arxiv_id"] for r in Store(root / "data").read("papers").to_pylist()]
    kept = next(i for i in ids if (out / "paper" / f"{i}.html").is_file())
    gone = next(i for i in ids if not (out / "paper" / f"{i}.html").is_file())
    assert '"pages_from":[' in manifest.replace(" ", "")
    with serve(out) as url:
        for arxiv_id, href in ((kept, f"{url}paper/{kept}.html"),
                               (gone, f"https://arxiv.org/abs/{gone}")):
            page.goto(f"{url}search/?q={arxiv_id}")
            link = page.locator(f'#results li[data-id="{arxiv_id}"] h2 a')
            assert link.get_attribute("href") == href


def test_the_address_of_a_page_left_out_still_shows_its_paper(store_of_a_day, page):
    """GitHub Pages serves 404.html for an address the site lacks (so does the demo's
    server, tests' too): at a paper page's address it shows that paper from the index,
    linked to arXiv; an id the index lacks links to arXiv; any other address, nothing."""
    root = store_of_a_day
    whole, pages = _whole_site(root)
    cfg = _in_an_empty_folder(_config(root, (whole - pages / 2) / 1e6), "missing")
    assert build_at_last_run(cfg).left_out > 0
    out = cfg.output_path
    papers = {r["arxiv_id"]: r["title"] for r in Store(root / "data").read("papers").to_pylist()}
    gone = next(i for i in papers if not (out / "paper" / f"{i}.html").is_file())
    with serve(out) as url:
        response = page.goto(f"{url}paper/{gone}.html")
        assert response.status == 404
        page.wait_for_function("() => !document.getElementById('missing-paper').dataset.busy")
        card = page.locator(f'#missing-result li[data-id="{gone}"]')
        assert card.locator("h2 a").get_attribute("href") == f"https://arxiv.org/abs/{gone}"
        assert " ".join(papers[gone].split()) in card.locator("h2").inner_text()
        assert card.locator("a.more-like").get_attribute("href") == f"{url}search/?like={gone}"
        assert gone in page.locator("#missing-why").inner_text()
        assert page.evaluate("getComputedStyle(document.body).margin") != "8px"  # styled

        # a page the site keeps but the host lacks for a moment (a deploy under way)
        kept = next(i for i in papers if (out / "paper" / f"{i}.html").is_file())
        (out / "paper" / f"{kept}.html").unlink()
        assert page.goto(f"{url}paper/{kept}.html").status == 404
        page.wait_for_function("() => !document.getElementById('missing-paper').dataset.busy")
        link = page.locator(f'#missing-result li[data-id="{kept}"] h2 a')
        assert link.get_attribute("href") == f"{url}paper/{kept}.html"
        assert page.locator("#missing-why").inner_text() == ""

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
