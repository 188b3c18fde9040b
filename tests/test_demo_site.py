"""The demo's site tells made-up data from the sample's real data, and states each number once.

The demo's replays make up what the sample lacks (replay/sample.py, replay/oai.py): exact
times, every v2, licenses. Every page names them in a banner; nothing invented is shown as
a paper's data (no affiliation the sample lacks, no link to a version arXiv does not have,
no rule-made change note labelled as a model's). Each number of the last 24 hours is the
same on every page that states it, and in status.json and the job summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import html as lxml_html

from pipeline import summary
from pipeline.config import SIMULATED, Config
from pipeline.replay import sample
from pipeline.site import i18n
from pipeline.sources import facts
from pipeline.store import Store

S = i18n.strings("zh-CN")  # the demo's language
ARXIV_LINK = re.compile(r"https?://arxiv\.org/(?:abs|pdf|html)/([^\s\"'<>]+?)v(\d+)\b")


def pages(out: Path) -> Iterator[Path]:
    yield from sorted(out.rglob("*.html"))


def text_of(page: Path) -> str:
    doc = lxml_html.document_fromstring(page.read_bytes())
    return " ".join(doc.text_content().split())


def test_every_page_names_what_is_simulated(demo_site: Config):
    assert set(demo_site.site.simulated) == set(SIMULATED)
    out = demo_site.output_path
    html = list(pages(out))
    assert len(html) > 1000
    assert demo_site.site_languages == ("zh-CN", "en")  # en/: each page in its words
    for page in html:
        s = i18n.strings("en" if page.relative_to(out).parts[0] == "en" else "zh-CN")
        doc = lxml_html.document_fromstring(page.read_bytes())
        banner = doc.find_class("simulated")
        assert len(banner) == 1, page
        assert all(s[f"simulated_{k}"] in banner[0].text_content() for k in SIMULATED), page


def test_no_page_shows_an_affiliation_the_sample_lacks(demo_site: Config):
    typed = {a for e in sample.entries() for a in e.authors if "(" in a}
    assert not typed  # the sample holds none: the demo shows none
    label = next(f.label["zh-CN"] for f in facts() if f.column == "affiliations")
    shown = [p for p in (demo_site.output_path / "paper").glob("*.html")
             if f"<dt>{label}</dt>" in p.read_text("utf-8")]
    assert shown == []


def test_no_change_note_made_without_a_model_is_labelled_as_a_models(demo_site: Config):
    written = Store(demo_site.store_path).read("notes")  # what a model wrote, and which
    by_model = sum(s == "ok" for s in written["status"].to_pylist())
    labels = {"ai": 0, "rule": 0}
    for page in (demo_site.output_path / "paper").glob("*.html"):
        doc = lxml_html.document_fromstring(page.read_bytes())
        for label in doc.xpath('//p[@class="change-note"]/span[@class="label"]'):
            said = label.text_content()
            assert said in (S["change_note_ai"], S["change_note"]), page
            labels["ai" if said == S["change_note_ai"] else "rule"] += 1
    assert labels["rule"] > 40  # the sample's simulated revisions, noted by rule
    assert labels["ai"] <= by_model == 0  # the demo asks no model for notes


def test_no_link_opens_a_version_arxiv_does_not_have(demo_site: Config):
    # The sample's papers are on arXiv as v1; each v2 is the replay's.
    real = {e.arxiv_id: e.version for e in sample.entries() if e.version == 1}
    out = demo_site.output_path
    seen = 0
    for path in [*pages(out), *sorted(out.rglob("*.xml"))]:
        for arxiv_id, version in ARXIV_LINK.findall(path.read_text("utf-8")):
            if arxiv_id in real:
                seen += 1
                assert int(version) <= real[arxiv_id], (path, arxiv_id, version)
    assert seen > 1000
    revised = out / "paper" / "2606.19350.html"  # a simulated v2
    doc = lxml_html.document_fromstring(revised.read_bytes())
    item = doc.xpath('//li[@data-version="2"]')[0]
    assert item.xpath(".//a") == [] and S["version_simulated"] in item.text_content()


def _number(text: str) -> int:
    return int(text.replace(",", "").lstrip("+"))


def _pattern(template: str, **numbers: str) -> re.Pattern[str]:
    """A catalogue string as a pattern: each named placeholder a group of digits."""
    parts = re.split(r"(\{\w+\})", template)
    return re.compile("".join(
        f"(?P<{p[1:-1]}>[\\d,]+)" if p[1:-1] in numbers else
        ".*?" if p.startswith("{") else re.escape(p) for p in parts))


def test_each_24_hour_number_is_the_same_wherever_it_is_stated(demo_site: Config):
    out = demo_site.output_path
    home = lxml_html.document_fromstring((out / "index.html").read_bytes())
    stated = {k: _number(home.xpath(f'//b[@data-stat="{k}"]')[0].text_content())
              for k in ("new_papers", "new_ai", "revised", "new_digests")}
    assert all(stated.values())
    status = json.loads((out / "status.json").read_text("utf-8"))
    assert {k: status[k] for k in stated} == stated
    found = _pattern(S["found"], count="")
    for kind, key in (("new", "new_papers"), ("ai", "new_ai"), ("revised", "revised"),
                      ("digests", "new_digests")):
        said = found.search(text_of(out / "brief" / "24h" / kind / "index.html"))
        assert said and _number(said["count"]) == stated[key], kind
    coverage = _pattern(S["digest_coverage_ai"], n="", done="")
    said = coverage.search(text_of(out / "sources" / "index.html"))
    assert said and _number(said["n"]) == stated["new_ai"]
    job = re.search(r"Last 24 h: ([\d,]+) new papers \(([\d,]+) AI-related\), ([\d,]+) "
                    r"revised, ([\d,]+) new digests",
                    summary.markdown(Store(demo_site.store_path), demo_site))
    assert job and [_number(g) for g in job.groups()] == list(stated.values())


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_the_completeness_banner_says_what_it_counts(language):
    said = i18n.strings(language)["completeness_day"]
    assert all(word in said for word in (
        ("公告的新论文", "交叉列出", "新版本", "本站各分类") if language == "zh-CN" else
        ("new papers", "cross-lists", "new versions", "this site's categories")))
