"""Every config error of [sources.hf], [classify] and [[topics]]: file, key, what's allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import config as config_mod
from pipeline.config import ConfigError

TOPIC = 'slug = "t"\nname = { zh = "主题", en = "Topic" }\n'

CASES = [
    # (TOML, substrings the error must contain)
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
]


@pytest.mark.parametrize(("text", "needles"), CASES)
def test_config_error_names_key_and_allowed(tmp_path: Path, text: str,
                                            needles: list[str]) -> None:
    path = tmp_path / "papertrail.toml"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        config_mod.load(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for needle in needles:
        assert needle in message, message


def test_a_full_topic_loads(tmp_path: Path) -> None:
    path = tmp_path / "papertrail.toml"
    path.write_text(f"[[topics]]\n{TOPIC}keywords = ['agent']\nall = [['a', 'b']]\n"
                    "exclude = ['c']\ncategories = ['cs.AI']\nauthors = ['K. He']\n"
                    "match_initials = true\nmin_upvotes = 5\n", encoding="utf-8")
    topic = config_mod.load(path).topics[0]
    assert topic.all == (("a", "b"),) and topic.authors == ("K. He",)
    assert topic.match_initials and topic.min_upvotes == 5
