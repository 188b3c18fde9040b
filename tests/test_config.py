from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import demo
from pipeline.cli import cli
from pipeline.config import ConfigError
from pipeline.text.taxonomy import CS_CATEGORIES

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "papertrail.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_cover_all_of_computer_science(tmp_path):
    cfg = config_mod.load(write(tmp_path, ""))
    assert cfg.sources.arxiv.categories == CS_CATEGORIES
    assert len(cfg.sources.arxiv.categories) == 40
    assert cfg.sources.arxiv.delay_seconds == 3.0
    assert cfg.sources.arxiv.api_url == "https://export.arxiv.org/api/query"
    assert cfg.sources.arxiv.feed_url == "https://rss.arxiv.org/rss/"
    assert cfg.site.language == "zh-CN"
    assert cfg.site.timezone == "Asia/Shanghai"
    assert cfg.store_path == tmp_path / "data"
    assert cfg.output_path == tmp_path / "output"
    assert cfg.digest_language == "zh-CN"


@pytest.mark.parametrize("path", [REPO / "papertrail.toml", demo.CONFIG])
def test_the_shipped_and_the_demo_config_load(path):
    # Whatever a fork puts in papertrail.toml: it must load, nothing more is asked of it here.
    assert config_mod.load(path).path == path


def test_values_are_typed(tmp_path):
    cfg = config_mod.load(write(tmp_path, """
[site]
language = "en"
timezone = "Europe/Berlin"
[sources.arxiv]
categories = ["cs.CL", "stat.ML"]
delay_seconds = 5
page_size = 50
"""))
    assert cfg.site.language == "en"
    assert cfg.sources.arxiv.categories == ("cs.CL", "stat.ML")
    assert cfg.sources.arxiv.delay_seconds == 5.0
    assert isinstance(cfg.sources.arxiv.delay_seconds, float)
    assert cfg.digest_language == "en"


BAD = [
    ("[site]\ntitel = 'x'\n", "site.titel", "unknown key", "title"),
    ("[sources.arxiv]\nenabld = true\n", "sources.arxiv.enabld", "unknown key", "enabled"),
    ("[nonsense]\nx = 1\n", "nonsense", "unknown key", "sources"),
    ("[sources.arxiv]\npage_size = 'many'\n", "sources.arxiv.page_size", "'many'", "1 to 2000"),
    ("[sources.arxiv]\npage_size = 5000\n", "sources.arxiv.page_size", "5000", "1 to 2000"),
    ("[sources.arxiv]\nenabled = 'yes'\n", "sources.arxiv.enabled", "'yes'", "true or false"),
    ("[sources.arxiv]\ncategories = ['cs.XX']\n", "sources.arxiv.categories", "cs.XX",
     "arXiv category codes"),
    ("[sources.arxiv]\ncategories = 'cs.AI'\n", "sources.arxiv.categories", "'cs.AI'",
     "expected an array"),
    ("[sources.arxiv]\napi_url = 'ftp://x'\n", "sources.arxiv.api_url", "ftp://x", "http(s)"),
    ("[sources.arxiv]\nfeed_url = 'https://rss.arxiv.org/rss'\n", "sources.arxiv.feed_url",
     "https://rss.arxiv.org/rss", "ending in /"),
    ("[sources.arxiv]\ndelay_seconds = -1\n", "sources.arxiv.delay_seconds", "-1", "≥ 0"),
    ("[sources.arxiv]\nmax_results_per_query = 40000\n", "sources.arxiv.max_results_per_query",
     "40000", "arXiv serves no result past 10,000"),
    ("[site]\ntimezone = 'Mars/Olympus'\n", "site.timezone", "Mars/Olympus", "IANA"),
    ("[site]\nbuild_jobs = -2\n", "site.build_jobs", "-2", "0 (one per CPU) to 64"),
    ("[site]\nlanguage = 'fr'\n", "site.language", "'fr'", "'zh-CN' | 'en'"),
    ("[digest]\nselection = 'some'\n", "digest.selection", "'some'", "'all' | 'ai' | 'topics'"),
    ("[digest]\nnotes_share = 1.5\n", "digest.notes_share", "1.5", "0 to 1"),
    ("[digest]\nnotes = 'yes'\n", "digest.notes", "'yes'", "true or false"),
    ("[similar]\ncount = 0\n", "similar.count", "0", "1 to 20 papers"),
    ("[similar]\nenabled = 'no'\n", "similar.enabled", "'no'", "true or false"),
    ("[similar]\nembeddings_dimensions = 8\n", "similar.embeddings_dimensions", "8",
     "16 to 4096"),
    ("[similar]\nembeddings_per_run = -1\n", "similar.embeddings_per_run", "-1", "≥ 0"),
    ("[sources.hf]\nenabled = 1\n", "sources.hf.enabled", "1", "true or false"),
    ("[[topics]]\nslug = 'Bad Slug'\n", "topics[0].slug", "Bad Slug", "lowercase"),
    ("[[topics]]\nslug = 'a'\nname = {zh = '甲', en = 'A'}\nkeywords = ['x']\n"
     "[[topics]]\nslug = 'a'\nname = {zh = '乙', en = 'B'}\nkeywords = ['y']\n",
     "topics[1].slug", "'a'", "no other"),
    ("[[topics]]\nname = {zh = 'x', en = 'y'}\n", "topics[0].slug", "", "required"),
    ("[[topics]]\nslug = 'a'\nkeywords = 'agents'\n", "topics[0].keywords", "'agents'",
     "array"),
    ("[[topics]]\nslug = 'a'\ncolour = 1\n", "topics[0].colour", "unknown key", "keywords"),
    ("[site\n", "not valid TOML", "", ""),
]


@pytest.mark.parametrize(("text", "key", "value", "allowed"), BAD)
def test_bad_config_is_one_clear_error(tmp_path, text, key, value, allowed):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        config_mod.load(path)
    message = str(err.value)
    assert str(path) in message
    assert key in message
    assert value in message
    assert allowed in message


@pytest.mark.parametrize(("text", "key", "value", "allowed"), BAD[:6])
def test_bad_config_exits_2_and_writes_nothing(tmp_path, text, key, value, allowed):
    path = write(tmp_path, text)
    result = CliRunner().invoke(cli, ["--config", str(path), "ingest"])
    assert result.exit_code == 2
    assert key in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papertrail.toml"]


def test_missing_config_file_names_it(tmp_path):
    result = CliRunner().invoke(cli, ["--config", str(tmp_path / "nope.toml"), "status"])
    assert result.exit_code == 2
    assert "nope.toml" in result.output and "not found" in result.output


def test_digest_base_url_and_model_come_from_env_when_set(tmp_path, monkeypatch):
    path = write(tmp_path, '[digest]\nmodel = "from-file"\n')
    monkeypatch.setenv("PAPERTRAIL_DIGEST_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("PAPERTRAIL_DIGEST_MODEL", "")  # an unset Actions variable
    cfg = config_mod.load(path)
    assert cfg.digest.base_url == "http://127.0.0.1:9/v1"
    assert cfg.digest.model == "from-file"
    monkeypatch.setenv("PAPERTRAIL_DIGEST_BASE_URL", "not a url")
    with pytest.raises(ConfigError, match=r"digest\.base_url"):
        config_mod.load(path)


TOPIC = 'slug = "t"\nname = { zh = "主题", en = "Topic" }\n'

# Every key of [sources.hf], [classify] and [[topics]]: (TOML, what the error must say).
WORDS_20000 = ", ".join(['"w"'] * 20_000)  # a pasted vocabulary
WORDS_10001 = ", ".join(['"w"'] * 10_001)
KEY_ERRORS = [
    ("[sources.hf]\nendpoit = 'x'", ["sources.hf.endpoit", "unknown key", "endpoint"]),
    ("[sources.hf]\nendpoint = 'ftp://x'", ["sources.hf.endpoint", "http(s) URL"]),
    ("[sources.hf]\nenabled = 'yes'", ["sources.hf.enabled", "true or false"]),
    ("[sources.hf]\ntimeout_seconds = 0", ["sources.hf.timeout_seconds", "≥ 0.1"]),
    ("[sources.hf]\nmax_retries = 21", ["sources.hf.max_retries", "0 to 20"]),
    ("[sources.hf]\nbackoff_seconds = -1", ["sources.hf.backoff_seconds", "≥ 0"]),
    ("[sources.hf]\nmax_backoff_seconds = -1", ["sources.hf.max_backoff_seconds"]),
    ("[sources.hf]\ndelay_seconds = 'fast'", ["sources.hf.delay_seconds", "expected a number"]),
    ("[sources.hf]\nbackfill_days = 0", ["sources.hf.backfill_days", "1 to 365"]),
    ("[sources.hf]\noverlap_days = 31", ["sources.hf.overlap_days", "0 to 30"]),
    ("[sources.hf]\npage_size = 101", ["sources.hf.page_size", "1 to 100"]),
    ("[sources.hf]\npage_size = 1.5", ["sources.hf.page_size", "whole number"]),
    ("[classify]\nai_categories = ['cs.XX']", ["classify.ai_categories", "cs.XX"]),
    ("[classify]\nai_categories = 'cs.LG'", ["classify.ai_categories", "expected an array"]),
    ("[classify]\nai_phrases = ['LLM', ' ']", ["classify.ai_phrases", "item 1", "no letter"]),
    ("[classify]\nai_phrases = [1]", ["classify.ai_phrases[0]", "expected a string"]),
    ("[classify]\nphrases = ['x']", ["classify.phrases", "unknown key", "ai_phrases"]),
    ("topics = 'x'", ["topics", "[[topics]]"]),
    ("topics = ['x']", ["topics[0]", "a table"]),
    ("[[topics]]\nname = { zh = 'a', en = 'b' }\nkeywords = ['x']",
     ["topics[0].slug", "(missing)", "a slug is required"]),
    ("[[topics]]\nslug = 'LLM Agents'\nkeywords = ['x']",
     ["topics[0].slug", "lowercase letters, digits and dashes"]),
    (f"[[topics]]\n{TOPIC}keywords = ['x']\n[[topics]]\n{TOPIC}keywords = ['y']",
     ["topics[1].slug", "used by no other topic"]),
    ("[[topics]]\nslug = 't'\nkeywords = ['x']",
     ["topics[0].name.zh", "(missing)", "in topic 't'"]),
    ("[[topics]]\nslug = 't'\nname = { zh = 'a', en = '' }\nkeywords = ['x']",
     ["topics[0].name.en", "non-empty", "in topic 't'"]),
    ("[[topics]]\nslug = 't'\nname = 'Topic'\nkeywords = ['x']", ["topics[0].name", "a table"]),
    ("[[topics]]\nslug = 't'\nname = { zh = 'a', en = 'b', fr = 'c' }\nkeywords = ['x']",
     ["topics[0].name.fr", "unknown key"]),
    (f"[[topics]]\n{TOPIC}", ["topics[0]", "would match nothing", "keywords, all, categories"]),
    (f"[[topics]]\n{TOPIC}keywords = ['agent', '']",
     ["topics[0].keywords", "item 1", "no letter or digit", "in topic 't'"]),
    (f"[[topics]]\n{TOPIC}keywords = 'agent'", ["topics[0].keywords", "expected an array"]),
    (f"[[topics]]\n{TOPIC}keyword = ['agent']", ["topics[0].keyword", "unknown key", "keywords"]),
    (f"[[topics]]\n{TOPIC}all = [[]]", ["topics[0].all", "group 0 is empty"]),
    (f"[[topics]]\n{TOPIC}all = [['a', '-']]", ["topics[0].all", "group 0", "item 1"]),
    (f"[[topics]]\n{TOPIC}all = ['a', 'b']", ["topics[0].all[0]", "expected an array"]),
    (f"[[topics]]\n{TOPIC}keywords = ['Agent']\nexclude = ['agent']",
     ["topics[0].exclude", "both a keyword and an exclude"]),
    (f"[[topics]]\n{TOPIC}exclude = ['.']\nkeywords = ['a']", ["topics[0].exclude", "item 0"]),
    (f"[[topics]]\n{TOPIC}categories = ['cs.ZZ']", ["topics[0].categories", "cs.ZZ"]),
    (f"[[topics]]\n{TOPIC}authors = ['  ']", ["topics[0].authors", "item 0"]),
    (f"[[topics]]\n{TOPIC}min_upvotes = -1", ["topics[0].min_upvotes", "≥ 0"]),
    (f"[[topics]]\n{TOPIC}authors = ['K. He']\nmatch_initials = 'yes'",
     ["topics[0].match_initials", "true or false"]),
    ("[[follows]]\nname = 'x'", ["follows[0]", "would match nothing", "authors, keywords"]),
    ("[[follows]]\nwatch = ['2606.01234v2']", ["follows[0].watch", "names a version"]),
    ("[[follows]]\nwatch = ['../../etc']", ["follows[0].watch", "not an arXiv id"]),
    ("[[follows]]\ntopics = ['nope']", ["follows[0].topics", "no topic 'nope'", "none"]),
    ("[[follows]]\ncategories = ['cs.ZZ']", ["follows[0].categories", "cs.ZZ"]),
    ("[[follows]]\nkeywords = ['a']\ncolour = 1", ["follows[0].colour", "unknown key"]),
    ("follows = 'me'", ["follows", "an array of tables: [[follows]]"]),
    (f"[[topics]]\n{TOPIC}keywords = [{WORDS_20000}]",
     ["topics[0].keywords", "20,000 phrases; at most 10,000 in one list", "characters)"]),
    (f"[[topics]]\n{TOPIC}all = [[{WORDS_10001}]]",
     ["topics[0].all", "10,001 phrases; at most 10,000 in all groups"]),
    (f"[[follows]]\nkeywords = [{WORDS_10001}]",
     ["follows[0].keywords", "at most 10,000"]),
    ("[site]\nfeed_max_mb = 0", ["site.feed_max_mb", "0.05 to 50 MB"]),
    ("[site]\nfeed_days = 0", ["site.feed_days", "1 to 60 days"]),
    ("[site]\nrecommend_days = 31", ["site.recommend_days", "1 to 30 days"]),
]


@pytest.mark.parametrize(("text", "needles"), KEY_ERRORS)
def test_a_config_error_names_the_file_the_key_and_what_is_allowed(tmp_path: Path, text: str,
                                                                   needles: list[str]) -> None:
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as info:
        config_mod.load(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for needle in needles:
        assert needle in message, message


def test_a_follow_with_every_key_loads(tmp_path: Path) -> None:
    path = write(tmp_path, f"[[topics]]\n{TOPIC}keywords = ['agent']\n[[follows]]\n"
                 "name = 'mine'\nauthors = ['K. He']\nkeywords = ['diffusion']\n"
                 "categories = ['cs.CV']\ntopics = ['t']\nwatch = ['2606.01234', "
                 "'hep-th/9901001']\n")
    (follow,) = config_mod.load(path).follows
    assert follow.topics == ("t",) and follow.watch == ("2606.01234", "hep-th/9901001")


def test_a_topic_with_every_key_loads(tmp_path: Path) -> None:
    path = write(tmp_path, f"[[topics]]\n{TOPIC}keywords = ['agent']\nall = [['a', 'b']]\n"
                 "exclude = ['c']\ncategories = ['cs.AI']\nauthors = ['K. He']\n"
                 "match_initials = true\nmin_upvotes = 5\n")
    topic = config_mod.load(path).topics[0]
    assert topic.all == (("a", "b"),) and topic.authors == ("K. He",)
    assert topic.match_initials and topic.min_upvotes == 5
