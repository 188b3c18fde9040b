"""The follow page's export to a fork: the browser's follows as a [[follows]] table for the
fork's papertrail.toml, read in a real browser and parsed with tomllib."""

from __future__ import annotations

import json
import re
import shutil
import tomllib

import pytest

from pipeline import config as config_mod
from pipeline.site import i18n
from tests.support.servers import serve
from tests.support.site import DAYS, build_at_last_run, make_config, run_pipeline

pytestmark = pytest.mark.slow  # builds the site in both languages

KEY = "papertrail.follows"
# What a reader can type into the search box and follow: TOML must quote all of it.
HOSTILE = ['a"b\\c', "two\nlines", "</script><b>x", "扩散模型", "🦜 parrots", "tab\there",
           "bell\x07 del\x7f nul\x00"]
FOLLOWS = [
    {"kind": "author", "value": "Ling Yang"},
    *({"kind": "query", "value": v} for v in HOSTILE),
    {"kind": "category", "value": "cs.CV"},
    {"kind": "author", "value": 'a"b\\c'},
    {"kind": "topic", "value": "llm-agents"},
    {"kind": "category", "value": "cs.CV"},  # a repeat, as a hand-edited storage may hold
]
# The config refuses a control character (but the loader reads tab and newline in TOML).
EXPORTED = [v for v in HOSTILE if not any(c in v for c in "\n\t\x07")]
EXPECTED = {"authors": ["Ling Yang", 'a"b\\c'], "keywords": EXPORTED, "categories": ["cs.CV"],
            "topics": ["llm-agents"]}


TOPIC = ('[[topics]]\nslug = "llm-agents"\nname = { zh = "智能体", en = "Agents" }\n'
         'keywords = ["agent"]\n')


def with_topic(cfg: config_mod.Config) -> config_mod.Config:
    """The config with one [[topics]] table: the only topic its site knows."""
    path = cfg.path
    path.write_text(path.read_text(encoding="utf-8") + TOPIC, encoding="utf-8")
    return config_mod.load(path)


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """The site in both languages, built from one store: {language: base URL}."""
    zh = with_topic(make_config(tmp_path_factory.mktemp("follow-zh")))
    run_pipeline(zh, DAYS[:2])
    en = with_topic(make_config(tmp_path_factory.mktemp("follow-en"), language="en"))
    shutil.copytree(zh.store_path, en.store_path)
    build_at_last_run(zh)
    build_at_last_run(en)
    with serve(zh.output_path) as zh_url, serve(en.output_path) as en_url:
        yield {"zh-CN": zh_url, "en": en_url, "config": zh.path}


def open_with(pg, url: str, follows: list[dict[str, str]]) -> None:
    """The follow page, with these follows in storage (json.dumps keeps a lone surrogate
    as its \\u escape, which the page's JSON.parse turns back into one)."""
    pg.goto(url + "follow/")
    pg.evaluate("([key, text]) => localStorage.setItem(key, text)", [KEY, json.dumps(follows)])
    pg.reload()


def snippet(pg) -> str:
    return pg.locator("#follow-toml").text_content()


def parsed(pg) -> dict:
    """The snippet's one table, checked to be the only one."""
    tables = tomllib.loads(snippet(pg))["follows"]
    assert len(tables) == 1
    return tables[0]


def strings(language: str) -> dict[str, str]:
    return i18n.CATALOGUE[language]


def test_hostile_values_export_as_valid_toml_in_follow_order(page, sites):
    open_with(page, sites["zh-CN"], FOLLOWS)
    assert parsed(page) == {"name": strings("zh-CN")["follow_fork_name"], **EXPECTED}
    assert page.locator("#follow-fork-none").is_hidden()
    assert page.locator("#follow-fork b, #follow-fork script").count() == 0  # shown as text


def test_a_lone_surrogate_is_dropped_and_the_rest_still_parses(page, sites):
    open_with(page, sites["zh-CN"], [{"kind": "query", "value": "x\ud800y"}, *FOLLOWS,
                                     {"kind": "topic", "value": "\udfffz"}])
    assert parsed(page) == {"name": strings("zh-CN")["follow_fork_name"], **EXPECTED}


def test_copy_puts_the_snippet_on_the_clipboard(page, sites):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=sites["zh-CN"])
    open_with(page, sites["zh-CN"], FOLLOWS)
    page.bring_to_front()  # Chromium writes the clipboard only for a focused document
    page.click("#follow-toml-copy")
    status = page.locator("#follow-toml-status")
    status.filter(has_text=re.compile(".")).wait_for()  # copied, or the fallback's selection
    assert status.text_content() == strings("zh-CN")["follow_fork_copied"]
    assert page.evaluate("navigator.clipboard.readText()") == snippet(page)


def test_without_the_clipboard_the_code_is_selected_for_ctrl_c(page, sites):
    page.add_init_script("navigator.clipboard.writeText = () => Promise.reject(new Error('no'))")
    open_with(page, sites["zh-CN"], FOLLOWS)
    page.click("#follow-toml-copy")
    page.locator("#follow-toml-status").filter(
        has_text=strings("zh-CN")["follow_fork_select"]).wait_for()
    assert page.evaluate("getSelection().toString()") == snippet(page)


def test_no_follows_means_nothing_to_export(page, sites):
    for follows in ([], [{"kind": "query", "value": "\ud800"}]):  # only unexportable values
        open_with(page, sites["zh-CN"], follows)
        assert page.locator("#follow-fork-none").is_visible()
        assert page.locator("#follow-fork-snippet").is_hidden()
        assert snippet(page) == ""


def test_the_snippet_follows_unfollow_import_and_clear(page, sites, tmp_path):
    open_with(page, sites["zh-CN"], FOLLOWS[:3])
    assert parsed(page)["authors"] == ["Ling Yang"]
    page.locator("#follow-list li", has_text="Ling Yang").get_by_role("button").click()
    assert "authors" not in parsed(page)
    assert parsed(page)["keywords"] == HOSTILE[:1]  # the second holds a line break

    saved = tmp_path / "follows.json"
    saved.write_text(json.dumps({"follows": [{"kind": "topic", "value": "llm-agents"}]}))
    page.set_input_files("#follow-import", str(saved))
    page.wait_for_function("() => document.getElementById('follow-toml').textContent"
                           ".includes('topics')")
    assert parsed(page)["topics"] == ["llm-agents"]

    page.once("dialog", lambda d: d.accept())
    page.click("#follow-clear")
    assert page.locator("#follow-fork-none").is_visible()
    assert snippet(page) == ""


def test_english_build_labels_the_export_in_english(page, sites):
    en = strings("en")
    open_with(page, sites["en"], [])
    assert page.locator("#follow-fork h2").text_content() == en["follow_fork"]
    assert page.locator("#follow-fork-none").text_content() == en["follow_fork_none"]
    open_with(page, sites["en"], FOLLOWS)
    assert parsed(page) == {"name": en["follow_fork_name"], **EXPECTED}
    assert page.locator("#follow-fork-snippet .note").text_content() == en["follow_fork_where"]


def test_the_snippet_loads_as_the_forks_follows(page, sites, tmp_path):
    open_with(page, sites["zh-CN"], [{"kind": "author", "value": "Ling Yang"},
                                     {"kind": "query", "value": "diffusion model"},
                                     {"kind": "category", "value": "cs.CV"},
                                     {"kind": "topic", "value": "llm-agents"}])
    topic = '[[topics]]\nslug = "llm-agents"\nname = { zh = "智能体", en = "Agents" }\n' \
            'keywords = ["agent"]\n'
    path = tmp_path / "papertrail.toml"
    path.write_text(topic + snippet(page) + "\n", encoding="utf-8")
    (follow,) = config_mod.load(path).follows
    assert (follow.authors, follow.keywords, follow.categories, follow.topics) == (
        ("Ling Yang",), ("diffusion model",), ("cs.CV",), ("llm-agents",))


def test_the_export_writes_only_what_the_config_accepts_and_says_what_it_left_out(
        page, sites, tmp_path):
    """Hostile follows (a search box and an import file take anything) exported and fed to
    the real config loader, which must accept the snippet as it is."""
    follows = [{"kind": "query", "value": v} for v in
               ("tab\there", "next\x85line", "del\x7f", "!!!", "diffusion model",
                'au:"Ling Yang"')]
    follows += [{"kind": "category", "value": "I.2.7"}, {"kind": "category", "value": "cs.RO"}]
    open_with(page, sites["en"], follows)
    path = tmp_path / "papertrail.toml"
    path.write_text(snippet(page) + "\n", encoding="utf-8")
    (follow,) = config_mod.load(path).follows
    assert (follow.authors, follow.keywords, follow.categories) == (
        ("Ling Yang",), ("diffusion model",), ("cs.RO",))
    left = page.locator("#follow-toml-left")
    assert left.is_visible()
    assert left.text_content() == strings("en")["follow_fork_left_out"] + (
        r'"tab\there", "next\u0085line", "del\u007f", "!!!", "I.2.7"')


def test_a_topic_the_site_does_not_define_is_left_out_and_the_config_loads(page, sites, tmp_path):
    """A follow of a topic since dropped from the config (or from a hand-made import file):
    exported, it made every command of the fork fail with exit 2."""
    open_with(page, sites["zh-CN"], [{"kind": "topic", "value": "llm-agents"},
                                     {"kind": "topic", "value": "gone-topic"},
                                     {"kind": "author", "value": "Ling Yang"}])
    assert parsed(page)["topics"] == ["llm-agents"]
    assert page.locator("#follow-toml-left").text_content().endswith('"gone-topic"')
    path = tmp_path / "papertrail.toml"  # the site's own config, the snippet added
    path.write_text(sites["config"].read_text(encoding="utf-8") + snippet(page) + "\n",
                    encoding="utf-8")
    (follow,) = config_mod.load(path).follows
    assert (follow.authors, follow.topics) == (("Ling Yang",), ("llm-agents",))


def test_hostile_saved_bibtex_is_exported_without_tex_that_reads_files(page, sites, tmp_path):
    hostile = ("@misc{x,\n      title={Evil \\input{/etc/passwd} \\immediate\\write18{rm -rf ~}},\n"
               "      url={javascript:alert(1)},\n      eprint={2606.00001},\n}")
    saved = [{"id": "2606.00001", "title": "Evil", "url": "paper/2606.00001.html",
              "bibtex": hostile, "note": "mine \\input{x}", "saved": 1}]
    page.goto(sites["zh-CN"] + "follow/")
    page.evaluate("s => localStorage.setItem('papertrail.saved', s)", json.dumps(saved))
    page.reload()
    with page.expect_download() as dl:
        page.click("#saved-bibtex")
    path = tmp_path / "saved.bib"
    dl.value.save_as(path)
    text = path.read_text("utf-8")
    assert not re.search(r"\\(input|immediate|write)|javascript", text), text
    assert text == ("@misc{x,\n      title={Evil {/etc/passwd} 18{rm -rf ~}},\n"
                    "      eprint={2606.00001},\n      annote={mine inputx},\n}\n")
