"""A fork's brand from [site]: its name on every page and feed, PaperTrail only in the
credit, and config text escaped wherever it lands."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from lxml import etree
from lxml import html as lxml_html

from pipeline.cli import cli
from pipeline.site import i18n
from pipeline.site.model.brand import DEFAULT_TITLE
from tests.support.site import DAYS, build_at_last_run, make_config, run_pipeline

pytestmark = pytest.mark.slow  # builds a site

TITLE = "Robot <i>radar</i> & co"
BRAND = {"title": TITLE, "tagline": "EYES ON <ROBOTS>", "hero": "Grasp <b>every</b> paper",
         "intro": "Robotics on arXiv & nothing else.",
         "source_url": "https://github.com/you/robot-radar"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    cfg = make_config(tmp_path_factory.mktemp("brand"), "en", **BRAND)
    run_pipeline(cfg, DAYS[:1])
    build_at_last_run(cfg)
    return cfg.output_path


def _page(path: Path) -> lxml_html.HtmlElement:
    return lxml_html.fromstring(path.read_bytes())


def test_the_header_and_home_page_show_the_brand_as_text(site):
    home = _page(site / "index.html")
    (brand,) = home.xpath("//header/a[@class='brand']")
    # short_name is empty: the title's first word in bold, the rest after it
    assert [brand.find("b").text, brand.find("span").text] == ["Robot", "<i>radar</i> & co"]
    assert home.findtext("head/title") == TITLE
    (hero,) = home.xpath("//section[@class='hero']")
    assert [e.text_content() for e in hero] == [BRAND["tagline"], BRAND["hero"],
                                                 BRAND["intro"]]
    assert not home.xpath("//header//i | //section[@class='hero']//b")  # text, never markup


def test_papertrail_is_named_only_in_the_credit_which_links_the_source(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 200
    credited = 0
    for path in pages:
        doc = _page(path)
        # every footer credits the project (paper pages have none, to stay small)
        assert [len(f.xpath("p[@class='credit']")) for f in doc.xpath("//footer")] in ([], [1])
        credits = doc.xpath("//p[@class='credit']")
        credited += bool(credits)
        for credit in credits:
            (link,) = credit.findall("a")
            assert (link.text, link.get("href")) == ("PaperTrail", BRAND["source_url"])
            credit.drop_tree()
        assert "PaperTrail" not in lxml_html.tostring(doc, encoding="unicode"), path
    assert credited > 10
    others = [p for p in site.rglob("*") if p.is_file() and p.suffix != ".html"
              and p.relative_to(site).parts[0] != "theme"]  # the scripts' code, not text
    assert [p for p in others if b"PaperTrail" in p.read_bytes()] == []


def test_the_about_page_names_the_site_and_credits_the_project(site):
    about = _page(site / "about" / "index.html")
    (article,) = about.xpath("//article[@class='prose']")
    assert article.find("p/strong").text == TITLE
    assert article[-1].get("class") == "credit"
    assert article[-1].text_content() == "Built with the open-source project PaperTrail."


def test_feeds_and_the_opml_carry_the_title(site):
    feed = etree.parse(site / "feeds" / "all.atom.xml").getroot()
    assert feed.findtext("{*}title").startswith(TITLE + " · ")
    assert etree.parse(site / "feeds.opml").getroot().findtext("head/title") == TITLE


def test_no_template_or_catalogue_string_names_the_site():
    templates = Path(__file__).resolve().parents[1] / "theme" / "templates"
    texts = {p.name: p.read_text("utf-8") for p in templates.glob("*.html")}
    texts |= {f"{lang}.{k}": v for lang, strings in i18n.CATALOGUE.items()
              for k, v in strings.items()}
    names = {"PaperTrail", *DEFAULT_TITLE.split()}
    assert len(texts) > 100
    assert [k for k, text in texts.items() if any(n in text for n in names)] == []


def test_a_source_url_that_is_not_a_web_address_is_refused(tmp_path):
    path = tmp_path / "papertrail.toml"
    path.write_text('[site]\nsource_url = "javascript:alert(1)"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "status"])
    assert result.exit_code == 2
    assert f"{path}: site.source_url = 'javascript:alert(1)'" in result.output
    assert "allowed: empty, or an http(s) URL" in result.output
