"""The demo's site, byte for byte, in records a reviewer can read: a refactor of the build
must leave every file as it was, and a change meant to alter the site shows as a diff
someone can review.

Every HTML page is split in two: its chrome (head, header with the nav, footer) with what
varies by page taken out, and its own part (main, title, meta tags, feed links, the nav's
current item). The chrome of every page must be one of the few recorded in
tests/snapshots/chrome.html, the root of its links written ROOT/: a nav change is a line
or two there, not a new hash for every page. tests/snapshots/site.txt holds, per page kind
(a file's top folder), the number of files and one sha256 over their own parts (the whole
file, for what is not HTML): it catches a change anywhere in the site, and names the
kinds it touched. tests/snapshots/<kind>.html holds one page of each kind, its own part
normalised (pretty-printed, long lists cut to their first items, the count of the rest
kept) so that the diff says what changed. A change meant to alter the site records them
again with PAPERTRAIL_GOLDEN=record, and its commit says why.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from lxml import etree
from lxml import html as lxml_html

from pipeline import build as build_mod
from pipeline import config as config_mod
from pipeline.replay import sample

pytestmark = pytest.mark.slow

SNAPSHOTS = Path(__file__).with_name("snapshots")
RECORD = os.environ.get("PAPERTRAIL_GOLDEN") == "record"

# A kind's page that shows the most of it; any other kind is shown by its first page.
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
# Not the site: the build's file times (each language's build keeps its own).
SKIP = ".papertrail"


@pytest.fixture(scope="module")
def light_demo_site(demo_site: config_mod.Config) -> Path:
    """The demo's store built again into a folder of its own, under a limit that turns the
    oldest paper pages light; its output folder. One language: how a second one shares
    the limit is tests/test_site_languages.py's."""
    site = dataclasses.replace(demo_site.site, max_site_mb=LIGHT_LIMIT_MB, languages=(),
                               output=demo_site.output_path.with_name("output-light"))
    cfg = dataclasses.replace(demo_site, site=site)
    assert build_mod.build(cfg, now=sample.run_at(sample.days()[-1])).light > 0
    return cfg.output_path


def kind_of(path: str) -> str:
    """A file's page kind: its top folder, or the file itself at the top."""
    top = path.split("/", 1)[0]
    return top.removesuffix(".html") if "/" not in path else top


def _rooted(text: str, depth: int) -> str:
    """Links to the site's root written ROOT/ whatever the page's depth."""
    if depth:
        return re.sub(rf'(href|src|action)="(?:\.\./){{{depth}}}(?!\.\./)', r'\1="ROOT/', text)
    return re.sub(r'(href|src|action)="(?![a-z]+:|#|/)', r'\1="ROOT/', text)


def split_page(path: str, text: str) -> tuple[str, str]:
    """(chrome, own part) of an HTML page; see the module's docstring."""
    doc = lxml_html.document_fromstring(text)
    own: list[str] = []

    def take(element: etree._Element) -> None:
        own.append(lxml_html.tostring(element, encoding="unicode"))

    for element in doc.xpath("//main | //title | //head/meta[@name or @property]"
                             "| //head/link[@rel='alternate'] | //footer/p[@class='subscribe']"):
        take(element)
        if element.tag == "main" or element.tag == "p":
            for child in list(element):
                element.remove(child)
            element.text = None
        elif element.tag == "title":
            element.text = "TITLE"
        else:
            element.getparent().remove(element)
    for current in doc.xpath("//nav//a[@aria-current]"):
        own.append(f"current: {current.get('href')}")
        del current.attrib["aria-current"]
    chrome = "<!doctype html>\n" + lxml_html.tostring(doc, encoding="unicode") + "\n"
    return _rooted(chrome, path.count("/")), "\n".join(own)


@dataclasses.dataclass
class SiteRecord:
    chromes: Counter[str]  # each chrome, by the number of pages wearing it
    example: dict[str, str]  # a page wearing each chrome
    kinds: dict[str, tuple[int, str]]  # kind: (files, sha256 over their own parts)


def record_of(out: Path) -> SiteRecord:
    chromes: Counter[str] = Counter()
    example: dict[str, str] = {}
    digests: dict[str, hashlib._Hash] = defaultdict(hashlib.sha256)
    files: Counter[str] = Counter()
    for file in sorted(out.rglob("*")):
        path = file.relative_to(out).as_posix()
        if not file.is_file() or SKIP in file.relative_to(out).parts:
            continue
        data = file.read_bytes()
        if path.endswith(".html"):
            chrome, own = split_page(path, data.decode("utf-8"))
            chromes[chrome] += 1
            example.setdefault(chrome, path)
            data = own.encode("utf-8")
        kind = kind_of(path)
        files[kind] += 1
        digests[kind].update(f"{path}\n{len(data)}\n".encode() + data)
    return SiteRecord(chromes, example,
                      {k: (files[k], digests[k].hexdigest()) for k in sorted(files)})


def chrome_text(record: SiteRecord) -> str:
    parts = [f"<!-- chrome {i} of {len(record.chromes)}: {n:,} pages, "
             f"e.g. {record.example[chrome]} -->\n{_pretty(chrome)}"
             for i, (chrome, n) in enumerate(sorted(record.chromes.items(),
                                                    key=lambda c: (-c[1], c[0])), 1)]
    return "\n".join(parts)


def kinds_text(record: SiteRecord) -> str:
    lines = ["# kind, files, sha256 of their own parts (tests/test_site_golden.py)"]
    lines += [f"{kind} {n} {digest}" for kind, (n, digest) in record.kinds.items()]
    return "\n".join(lines) + "\n"


def _pretty(html: str) -> str:
    doc = lxml_html.document_fromstring(html)
    etree.indent(doc, space="  ")
    return "<!doctype html>\n" + lxml_html.tostring(doc, encoding="unicode") + "\n"


def _cut(parent: etree._Element, items: list[etree._Element], what: str) -> None:
    """Only the first KEEP of `items` stay; a comment says how many more there were."""
    if len(items) > KEEP + 1:
        for item in items[KEEP:]:
            parent.remove(item)
        items[KEEP - 1].addnext(etree.Comment(f" {len(items) - KEEP} more {what} "))


def normalise_html(path: str, text: str) -> str:
    """The page's own part as a reviewer reads it: long lists (items, cards) cut, one
    element a line, indented."""
    _, own = split_page(path, text)
    doc = lxml_html.fragment_fromstring(own, create_parent="page")
    for parent in list(doc.iter()):
        _cut(parent, [c for c in parent if c.tag in ("li", "article")], "items")
    etree.indent(doc, space="  ")
    return lxml_html.tostring(doc, encoding="unicode") + "\n"


def normalise_feed(text: str) -> str:
    """The feed's head and first entries, indented; the escaped HTML of an entry's content
    stays as the feed carries it."""
    feed = etree.fromstring(text.encode("utf-8"))
    _cut(feed, feed.findall("{http://www.w3.org/2005/Atom}entry"), "entries")
    etree.indent(feed, space="  ")
    return etree.tostring(feed, encoding="unicode") + "\n"


def _compare(name: str, got: str, what: str) -> None:
    snapshot = SNAPSHOTS / name
    if RECORD:
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(got, "utf-8")
    want = snapshot.read_text("utf-8") if snapshot.exists() else ""
    if got != want:
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(),
                                    f"tests/snapshots/{name}", what, lineterm="", n=2)
        pytest.fail(f"{name} differs from its snapshot (PAPERTRAIL_GOLDEN=record records it "
                    "again):\n" + "\n".join(diff), pytrace=False)


def representative(out: Path) -> dict[str, str]:
    """Snapshot name: site path, PAGES and the first page of every other kind."""
    shown = {kind_of(path) for path in PAGES.values()}
    pages = dict(PAGES)
    for file in sorted(out.rglob("*.html")):
        path = file.relative_to(out).as_posix()
        if kind_of(path) not in shown and SKIP not in file.relative_to(out).parts:
            shown.add(kind_of(path))
            pages[f"{kind_of(path)}.html"] = path
    return pages


@pytest.fixture(scope="module")
def site_record(demo_site: config_mod.Config) -> SiteRecord:
    return record_of(demo_site.output_path)


def test_every_page_wears_a_recorded_chrome(site_record: SiteRecord) -> None:
    _compare("chrome.html", chrome_text(site_record), "the built site's chromes")


def test_every_kind_of_file_is_as_recorded(site_record: SiteRecord) -> None:
    _compare("site.txt", kinds_text(site_record), "the built site's kinds")


def test_a_page_of_each_kind_reads_as_its_snapshot(demo_site: config_mod.Config) -> None:
    out = demo_site.output_path
    pages = representative(out)
    for name, path in sorted(pages.items()):
        text = (out / path).read_text("utf-8")
        got = normalise_feed(text) if name.endswith(".xml") else normalise_html(path, text)
        _compare(name, got, f"built {path}")
    if RECORD:  # a kind that is gone takes its snapshot with it
        kept = {"chrome.html", "site.txt", "paper-light.html", *pages}
        for stale in SNAPSHOTS.iterdir():
            if stale.name not in kept:
                stale.unlink()
    assert sorted(p.name for p in SNAPSHOTS.iterdir()) == sorted(
        {"chrome.html", "site.txt", "paper-light.html", *pages})


def test_a_light_paper_page_reads_as_its_snapshot(light_demo_site: Path) -> None:
    page = light_demo_site / LIGHT_PAGE
    assert 'data-light="' in page.read_text("utf-8")
    _compare("paper-light.html", normalise_html(LIGHT_PAGE, page.read_text("utf-8")),
             f"built {LIGHT_PAGE}")
