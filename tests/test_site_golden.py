"""The demo's site, byte for byte: a refactor of the build must leave every file as it was.

Two records, kept together on purpose. tests/test_site_golden.json holds the sha256 of every
file the build makes: it catches a change to any of ~2,400 files, but a reviewer cannot read
it. tests/snapshots/ holds a few representative pages (home, a paper page full and light, a
brief, a category page, the search page, a feed), normalised so that a reviewer reads what
changed in the diff: pretty-printed, long lists cut to their first items (the count of the
rest kept). A change meant to alter the site records both again with PAPERTRAIL_GOLDEN=record,
and its commit says which files changed and why.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
from pathlib import Path

import pytest
from lxml import etree
from lxml import html as lxml_html

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.replay import sample

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).with_name("test_site_golden.json")
SNAPSHOTS = Path(__file__).with_name("snapshots")
RECORD = os.environ.get("PAPERTRAIL_GOLDEN") == "record"

# snapshot file: the page it holds, in the demo's site
PAGES = {
    "home.html": "index.html",
    # a revision with its digest, topic, change note and diffs
    "paper.html": "paper/2606.19350.html",
    "brief.html": "brief/2026-06-26/revised/index.html",
    "category.html": "category/cs.CL/index.html",
    "search.html": "search/index.html",
    "feed.xml": "feeds/all.atom.xml",
}
# The oldest paper page, light in a build whose [site] max_site_mb leaves no room for all.
LIGHT_PAGE = "paper/2606.19344.html"
LIGHT_LIMIT_MB = 58.0  # the demo's site is ~60 MB, ~52.6 MB of it besides its paper pages
KEEP = 3  # items of a list (or entries of a feed) a snapshot shows


@pytest.fixture(scope="module")
def light_demo_site(demo_site: config_mod.Config) -> Path:
    """The demo's store built again into a folder of its own, under a limit that turns the
    oldest paper pages light; its output folder."""
    site = dataclasses.replace(demo_site.site, max_site_mb=LIGHT_LIMIT_MB,
                               output=demo_site.output_path.with_name("output-light"))
    cfg = dataclasses.replace(demo_site, site=site)
    assert build_mod.build(cfg, now=sample.run_at(sample.days()[-1])).light > 0
    return cfg.output_path


def site_hashes(out: Path) -> dict[str, str]:
    """sha256 of every file the build made; .papertrail/ holds file times, not the site."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*"))
            if p.is_file() and p.relative_to(out).parts[0] != ".papertrail"}


def test_the_demo_site_is_byte_identical_to_the_recorded_one(demo_site):
    hashes = site_hashes(demo_site.output_path)
    if RECORD:
        GOLDEN.write_text(json.dumps(hashes, indent=0, sort_keys=True) + "\n", "utf-8")
    recorded = json.loads(GOLDEN.read_text("utf-8"))
    changed = sorted(k for k in hashes.keys() & recorded.keys() if hashes[k] != recorded[k])
    assert (sorted(recorded.keys() - hashes.keys()), sorted(hashes.keys() - recorded.keys()),
            changed) == ([], [], [])


def _cut(parent: etree._Element, items: list[etree._Element], what: str) -> None:
    """Only the first KEEP of `items` stay; a comment says how many more there were."""
    if len(items) > KEEP + 1:
        for item in items[KEEP:]:
            parent.remove(item)
        items[KEEP - 1].addnext(etree.Comment(f" {len(items) - KEEP} more {what} "))


def normalise_html(text: str) -> str:
    """The page as a reviewer reads it: long lists (items, cards) cut, one element a line,
    indented."""
    doc = lxml_html.document_fromstring(text)
    for parent in list(doc.iter()):
        _cut(parent, [c for c in parent if c.tag in ("li", "article")], "items")
    etree.indent(doc, space="  ")
    return "<!doctype html>\n" + lxml_html.tostring(doc, encoding="unicode") + "\n"


def normalise_feed(text: str) -> str:
    """The feed's head and first entries, indented; the escaped HTML of an entry's content
    stays as the feed carries it."""
    feed = etree.fromstring(text.encode("utf-8"))
    _cut(feed, feed.findall("{http://www.w3.org/2005/Atom}entry"), "entries")
    etree.indent(feed, space="  ")
    return etree.tostring(feed, encoding="unicode") + "\n"


def _check(name: str, page: Path) -> None:
    text = page.read_text("utf-8")
    got = normalise_feed(text) if name.endswith(".xml") else normalise_html(text)
    snapshot = SNAPSHOTS / name
    if RECORD:
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(got, "utf-8")
    want = snapshot.read_text("utf-8")
    if got != want:
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(),
                                    f"tests/snapshots/{name}", f"built {page.name}",
                                    lineterm="", n=2)
        pytest.fail(f"{name} differs from its snapshot (PAPERTRAIL_GOLDEN=record records it "
                    "again):\n" + "\n".join(diff), pytrace=False)


@pytest.mark.parametrize("name", PAGES)
def test_a_representative_page_reads_as_its_snapshot(demo_site, name):
    _check(name, demo_site.output_path / PAGES[name])


def test_a_light_paper_page_reads_as_its_snapshot(light_demo_site):
    page = light_demo_site / LIGHT_PAGE
    assert 'data-light="' in page.read_text("utf-8")
    _check("paper-light.html", page)
