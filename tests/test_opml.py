"""feeds.opml as a feed reader imports it: folders, each feed once (Atom), and only the
site's configured categories, over a real build of the sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from pipeline import config as config_mod
from pipeline.site import i18n
from tests.support.site import DAYS, build_at_last_run, run_pipeline

pytestmark = pytest.mark.slow  # builds a site

BASE = "https://example.org/radar/"
SCOPE = ("cs.CL", "cs.RO")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("opml")
    path = root / "papertrail.toml"
    path.write_text(f'[store]\npath = "data"\n[site]\nlanguage = "en"\noutput = "out"\n'
                    f'base_url = "{BASE}"\n[sources.arxiv]\ncategories = {list(SCOPE)!r}\n'
                    '[[topics]]\nslug = "grasping"\nname = { zh = "抓取", en = "Grasping" }\n'
                    'keywords = ["grasp", "manipulation"]\n'.replace("'", '"'),
                    encoding="utf-8")
    cfg = config_mod.load(path)
    run_pipeline(cfg, DAYS[:1])
    build_at_last_run(cfg)
    return cfg.output_path


def _folders(site: Path) -> dict[str, list[str]]:
    """Folder name → its feeds' site paths; every outline of the body is a folder."""
    body = etree.parse(site / "feeds.opml").getroot().find("body")
    folders = {}
    for folder in body:
        assert folder.get("xmlUrl") is None and folder.get("text") == folder.get("title")
        feeds = list(folder)
        assert feeds and all(len(f) == 0 and f.get("type") == "rss" and f.get("text")
                             for f in feeds)
        assert all(f.get("htmlUrl").startswith(BASE) for f in feeds)
        assert all(f.get("xmlUrl").startswith(BASE) for f in feeds)
        folders[folder.get("text")] = [f.get("xmlUrl").removeprefix(BASE) for f in feeds]
    return folders


def test_the_opml_holds_folders_of_atom_feeds_each_once_and_each_built(site):
    s = i18n.strings("en")
    folders = _folders(site)
    assert list(folders) == [s["opml_site"], s["categories"], s["topics"], s["briefs"],
                             s["opml_light"]]
    urls = [u for feeds in folders.values() for u in feeds]
    assert len(urls) == len(set(urls))
    assert all(u.startswith("feeds/") and u.endswith(".atom.xml") for u in urls)
    assert [u for u in urls if not (site / u).is_file()] == []
    assert {"feeds/all.atom.xml", "feeds/ai.atom.xml"} <= set(folders[s["opml_site"]])
    assert folders[s["topics"]] == ["feeds/topic/grasping.atom.xml"]
    assert "feeds/brief/new.atom.xml" in folders[s["briefs"]]
    assert "feeds/brief/topic/grasping.atom.xml" in folders[s["briefs"]]
    # each feed but the daily briefs has its light twin, in a folder of their own
    full = [u for name in (s["opml_site"], s["categories"], s["topics"]) for u in folders[name]]
    assert sorted(folders[s["opml_light"]]) == sorted(u.replace("feeds/", "feeds/light/", 1)
                                                      for u in full)


def test_only_the_configured_categories_are_listed(site):
    s = i18n.strings("en")
    folders = _folders(site)
    built = {p.name.removesuffix(".atom.xml")
             for p in (site / "feeds" / "category").glob("*.atom.xml")}
    assert built == set(SCOPE)  # a paper cross-listed elsewhere brings no other category
    assert folders[s["categories"]] == [f"feeds/category/{c}.atom.xml" for c in SCOPE]
    briefs = [u for u in folders[s["briefs"]] if u.startswith("feeds/brief/category/")]
    assert briefs == [f"feeds/brief/category/{c}.atom.xml" for c in SCOPE]
    # every Atom feed the site has is listed
    listed = {u for feeds in folders.values() for u in feeds}
    every = {p.relative_to(site).as_posix() for p in (site / "feeds").rglob("*.atom.xml")}
    assert every - listed == set()
