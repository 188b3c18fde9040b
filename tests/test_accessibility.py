"""axe-core in a real browser on each page kind's samples (PAGE_KINDS: home, a paper and a
revised one, search, the follow page, sources, the HF board, 最近录用, …), in the zh and en builds,
desktop and phone, light and dark. No violation of serious or critical impact may remain.

axe-core comes from the npm registry (tests/axe/package.json, installed by `make test`)
and is injected as a file: no CDN, and the pages' own Content-Security-Policy is bypassed
for the injection only.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipeline.replay import sample
from pipeline.site.pages.kinds import PAGE_KINDS
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

pytestmark = pytest.mark.slow  # builds the site in both languages
LANGUAGES = {"zh-CN": "", "en": "en/"}  # where each language's pages are

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
# Every page kind's samples (the registry's: a new kind says which of its pages to check)
PAGES = tuple(path for kind in PAGE_KINDS.values() for path in kind.samples)
VIEWPORTS = {"desktop": (1366, 900), "phone": (390, 844)}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    cfg = in_languages(make_config(tmp_path_factory.mktemp("a11y")), *LANGUAGES)
    store = run_pipeline(cfg, DAYS)
    papers = store.read("papers").to_pylist()
    paper = papers[0]["arxiv_id"]
    add_digest(store, paper, 1, at(DAYS[-1]) - dt.timedelta(minutes=5), "一句话导读。")
    build_at_last_run(cfg)
    # a revision whose comment changed: its change note, and the comment's old and new
    # words side by side on a desktop
    had_comment = {e.arxiv_id for e in sample.entries() if e.version == 1 and e.comment}
    revised = next(p["arxiv_id"] for p in papers if p["version"] > 1
                   and p["arxiv_id"] in had_comment
                   and (cfg.output_path / "paper" / f"{p['arxiv_id']}.html").exists())
    with serve(cfg.output_path) as url:
        yield url, paper, revised


@pytest.fixture
def axe_page(browser):
    # The pages allow scripts from 'self' only; bypassing CSP lets the injected file run.
    context = browser.new_context(bypass_csp=True)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_no_serious_or_critical_accessibility_violation(axe_page, site, language, path,
                                                        viewport, scheme):
    url, paper, revised = site
    url += LANGUAGES[language]
    width, height = VIEWPORTS[viewport]
    axe_page.set_viewport_size({"width": width, "height": height})
    axe_page.emulate_media(color_scheme=scheme)
    axe_page.goto(url + path.format(paper=paper, revised=revised))
    axe_page.wait_for_load_state("networkidle")
    axe_page.add_script_tag(path=str(AXE))
    result = axe_page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [(v["id"], v["impact"], [n["target"] for n in v["nodes"][:3]])
               for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == []
    assert result["testEngine"]["version"].startswith("4.")
