"""How a paper is cited: the Highwire and OpenGraph tags of its page's head, and its
BibTeX entry read back by a BibTeX parser."""

from __future__ import annotations

import bibtexparser
import pytest
from lxml import html as lxml_html

from pipeline.site._cite import bibtex
from pipeline.site._tex import plain_tex
from tests.test_search_index import paper
from tests.test_site import built, out  # noqa: F401 (the module's site fixture)


def _entry(text: str) -> dict[str, str]:
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == []
    [entry] = library.entries
    assert entry.entry_type == "misc"
    return {"key": entry.key, **{f.key: f.value for f in entry.fields}}


def test_every_paper_page_carries_its_citation(built):  # noqa: F811
    papers = {r["arxiv_id"]: r for r in built[1].read("papers").to_pylist()}
    pages = sorted((out(built) / "paper").glob("*.html"))
    assert len(pages) > 1000
    for path in pages:
        page = lxml_html.parse(str(path)).getroot()
        meta: dict[str, list[str]] = {}
        for m in page.iter("meta"):
            name = m.get("name") or m.get("property")
            if name:
                meta.setdefault(name, []).append(m.get("content"))
        row = papers[path.stem]
        title = plain_tex(" ".join(row["title"].split()))
        assert meta["citation_title"] == [title] == meta["og:title"]
        assert meta["citation_author"] == row["authors"]
        assert meta["citation_date"] == [row["published"].strftime("%Y/%m/%d")]
        assert meta["citation_arxiv_id"] == [row["arxiv_id"]]
        assert meta["citation_pdf_url"] == [f"https://arxiv.org/pdf/{row['arxiv_id']}v{row['version']}"]
        assert meta["og:url"] == [f"https://example.org/papertrail/paper/{row['arxiv_id']}.html"]
        assert 0 < len(meta["description"][0]) <= 170
        block = page.get_element_by_id("bibtex")
        assert len(block) == 0  # text only, whatever the title held (XSS_ID's is a script)
        entry = _entry(block.text_content())
        assert entry["eprint"] == row["arxiv_id"]
        assert entry["author"].split(" and ") == [" ".join(a.split()) for a in row["authors"]]
        assert entry["year"] == str(row["published"].year)


def test_hostile_text_stays_inside_its_bibtex_field():
    p = paper(1, title="Break} out @misc{evil, title={x}} \\",
              authors=("A {B", "C} D", "Ünïcode Nâme"))
    entry = _entry(bibtex(p))
    assert set(entry) == {"key", "title", "author", "year", "eprint", "archivePrefix",
                          "primaryClass", "url"}
    assert entry["title"] == "Break out @miscevil, title=x"  # unpaired: braces dropped
    assert entry["author"] == "A B and C D and Ünïcode Nâme"
    assert entry["key"] == "b2026break"


@pytest.mark.parametrize(("title", "authors", "key"), [
    ("Attention Is All You Need", ("Ashish Vaswani",), "vaswani2026attention"),
    ("On the $\\alpha$-Fairness of Models", ("Zoë Ångström",), "angstrom2026fairness"),
    ("深度学习", ("张伟",), "2026"),
])
def test_a_citation_key_is_ascii_and_says_who_when_and_what(title, authors, key):
    assert _entry(bibtex(paper(1, title=title, authors=authors)))["key"] == key
