"""How a paper is cited: the Highwire tags of its page's head, and the BibTeX entry app.js
makes from them in chromium, read back by a BibTeX parser."""

from __future__ import annotations

import bibtexparser
import pyarrow as pa
import pytest
from lxml import html as lxml_html

from pipeline.site.render.tex import plain_tex
from tests.support.servers import serve
from tests.support.site import DAYS, build_at_last_run, make_config, run_pipeline

pytestmark = pytest.mark.slow  # builds a site

# Titles and names as upstream may send them (title, authors, DOI); the entry's fields and
# key as a BibTeX parser reads them back ("{year}": the paper's).
CASES = [
    (("Break} out @misc{evil, title={x}} \\", ["A {B", "C} D", "Ünïcode Nâme"], None),
     {"key": "b{year}break", "title": "Break out @miscevil, title=x",  # unpaired: no braces
      "author": "A B and C D and Ünïcode Nâme"}),
    (("Attention Is All You Need", ["Ashish Vaswani"], "10.1145/3700000.3700001"),
     {"key": "vaswani{year}attention", "title": "Attention Is All You Need",
      "author": "Ashish Vaswani", "doi": "10.1145/3700000.3700001"}),
    (("On the $\\alpha$-Fairness\n of Models", ["Zoë Ångström"], None),  # TeX, as written
     {"key": "angstrom{year}fairness", "title": "On the $\\alpha$-Fairness of Models",
      "author": "Zoë Ångström"}),
    (("深度学习", ["张伟"], None), {"key": "{year}", "title": "深度学习", "author": "张伟"}),
]


def _entry(text: str) -> dict[str, str]:
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == []
    [entry] = library.entries
    assert entry.entry_type == "misc"
    return {"key": entry.key, **{f.key: f.value for f in entry.fields}}


@pytest.fixture(scope="module")
def site_with_odd_titles(tmp_path_factory):
    """A day's site whose first papers have CASES' titles and names; served."""
    cfg = make_config(tmp_path_factory.mktemp("cite"))
    store = run_pipeline(cfg, DAYS[:1])
    table = store.read("papers")
    rows = table.to_pylist()
    for row, ((title, authors, doi), _) in zip(rows, CASES, strict=False):
        row.update(title=title, authors=authors, doi=doi)
    store.write("papers", pa.Table.from_pylist(rows, schema=table.schema))
    build_at_last_run(cfg)
    with serve(cfg.output_path) as url:
        yield url, rows


def _bibtex(page, url: str) -> str:
    page.goto(url)
    assert page.locator("details.cite").is_visible()
    return page.locator("#bibtex").text_content()


def test_every_paper_page_carries_its_citation_tags(zh_site):
    papers = {r["arxiv_id"]: r for r in zh_site.store.read("papers").to_pylist()}
    pages = sorted((zh_site.out / "paper").glob("*.html"))
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
        assert meta["citation_title"] == [title]
        assert meta["citation_author"] == row["authors"]
        assert meta["citation_date"] == [row["published"].strftime("%Y/%m/%d")]
        assert meta["citation_arxiv_id"] == [row["arxiv_id"]]
        assert meta["citation_pdf_url"] == [f"https://arxiv.org/pdf/{row['arxiv_id']}v{row['version']}"]
        assert meta.get("citation_doi") == ([row["doi"]] if row["doi"] else None)
        online = row["updated"].strftime("%Y/%m/%d")
        assert meta.get("citation_online_date") == (None if online == meta["citation_date"][0]
                                                     else [online])
        assert 0 < len(meta["description"][0]) <= 170
        # The entry is made in the browser, from these tags and the article's data.
        assert page.get_element_by_id("bibtex", None) is None
        assert page.find(".//article").get("data-primary") == row["primary_category"]


def test_the_entry_is_in_arxivs_shape_whatever_the_title_and_names_hold(
        page, site_with_odd_titles):
    url, rows = site_with_odd_titles
    for row, (_, expected) in zip(rows, CASES, strict=False):
        entry = _entry(_bibtex(page, f"{url}paper/{row['arxiv_id']}.html"))
        year = str(row["published"].year)
        assert entry == {**expected, "key": expected["key"].format(year=year), "year": year,
                         "eprint": row["arxiv_id"], "archivePrefix": "arXiv",
                         "primaryClass": row["primary_category"],
                         "url": f"https://arxiv.org/abs/{row['arxiv_id']}"}
    for row in rows[len(CASES):len(CASES) + 20]:  # the sample's own
        entry = _entry(_bibtex(page, f"{url}paper/{row['arxiv_id']}.html"))
        assert entry["eprint"] == row["arxiv_id"]
        assert entry["author"].split(" and ") == [" ".join(a.split()) for a in row["authors"]]
        assert entry["year"] == str(row["published"].year)
        assert entry["title"] == " ".join(row["title"].split())
