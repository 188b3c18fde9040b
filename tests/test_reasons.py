"""Why a paper matched: codes with arguments, stored in the English form every release has
written, said in the site's language by one function (i18n.say)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.config import ClassifyConfig, Topic
from pipeline.derive import topics
from pipeline.derive.classify import classify
from pipeline.site import i18n
from pipeline.text.reasons import Code, Reason, read, stored

ZH, EN = i18n.strings("zh-CN"), i18n.strings("en")


def r(code: Code, *args: str) -> Reason:
    return Reason(code, args)


# (codes, as stored, as a Chinese site says it)
SAID = [
    ((r(Code.KEYWORD, "diffusion", "abstract"), r(Code.CATEGORY, "cs.CV")),
     "keyword 'diffusion' in abstract; category cs.CV", "摘要含“diffusion”；分类 cs.CV"),
    ((r(Code.PHRASE, "language model", "title"),),
     "phrase 'language model' in title", "标题含“language model”"),
    ((r(Code.AUTHOR_AS, "Ling Yang", "L. Yang"),),
     "author Ling Yang (as L. Yang)", "作者 Ling Yang（署名 L. Yang）"),
    ((r(Code.AUTHOR, "Kaiming He"), r(Code.UPVOTES, "30")),
     "author Kaiming He; 30 upvotes", "作者 Kaiming He；HF 30 赞"),
    ((r(Code.ALL_OF, "world model", "robot"),),
     "all of 'world model', 'robot'", "同时含“world model”、“robot”"),
    ((r(Code.TEXT, "something new"),), "something new", "something new"),
]


@pytest.mark.parametrize(("why", "text", "zh"), SAID)
def test_a_reason_is_stored_as_before_read_back_whole_and_said_per_language(why, text, zh):
    assert stored(why) == text
    assert read(text) == why
    assert i18n.say(why, ZH) == zh
    assert i18n.say(why, EN) == text  # an English site shows what the store holds


@pytest.mark.parametrize("why", [
    (r(Code.KEYWORD, "robot's arm", "title"),),  # quotes inside a phrase
    (r(Code.KEYWORD, "x' in abstract", "title"),),
    (r(Code.AUTHOR_AS, "O. Brien (as x)", "O'Brien (Jr.)"),),
    (r(Code.ALL_OF, "it's", "a, b"),),
    (r(Code.CATEGORY, "cs.RO"), r(Code.UPVOTES, "0")),
])
def test_awkward_values_survive_the_stored_form(why):
    assert read(stored(why)) == why


def test_a_stored_part_of_another_shape_is_kept_as_text():
    assert read(None) == read("") == ()
    assert read("category") == (r(Code.TEXT, "category"),)
    assert read("keyword 'x' in body; 3 upvotes") == (
        r(Code.TEXT, "keyword 'x' in body"), r(Code.UPVOTES, "3"))
    assert i18n.say(read("weird; category cs.AI"), ZH) == "weird；分类 cs.AI"


def test_a_follows_reasons_are_led_by_its_name():
    why = (r(Code.FOLLOW, "Ann"), r(Code.KEYWORD, "agent", "title"))
    assert i18n.say(why, EN) == "Ann: keyword 'agent' in title"
    assert i18n.say(why, ZH) == "Ann：标题含“agent”"
    assert i18n.say((r(Code.FOLLOW, "Bo"), r(Code.WATCH, "2401.00001")), EN) == \
        "Bo: watch 2401.00001"
    assert i18n.say((r(Code.TOPIC, "agents"),), ZH) == "方向 agents"


def papers(*rows: dict) -> pa.Table:
    base = {"title": "", "abstract": "", "authors": [], "categories": ["cs.CL"],
            "hf_upvotes": None}
    return pa.Table.from_pylist([{**base, **row} for row in rows], pa.schema([
        ("title", pa.string()), ("abstract", pa.string()), ("authors", pa.list_(pa.string())),
        ("categories", pa.list_(pa.string())), ("hf_upvotes", pa.int32())]))


def test_topics_and_classify_say_why_in_codes_and_store_the_english_form():
    table = papers({"title": "LLM agents", "categories": ["cs.RO"], "hf_upvotes": 7},
                   {"abstract": "A robot.", "authors": ["K. He"], "hf_upvotes": 9})
    topic = Topic(keywords=("LLM agent",), authors=("Kaiming He",), categories=("cs.RO",),
                  min_upvotes=5, slug="t", name="t")
    names = topics.AuthorIndex(table["authors"])
    assert list(topics.match_topic(table, topic, names)) == [
        (r(Code.KEYWORD, "LLM agent", "title"), r(Code.CATEGORY, "cs.RO"),
         r(Code.UPVOTES, "7")), None]
    wider = Topic(authors=("Kaiming He",), match_initials=True, slug="u", name="u")
    assert list(topics.match_topic(table, wider, names)) == [
        None, (r(Code.AUTHOR_AS, "Kaiming He", "K. He"),)]
    assert topics.match(table, (topic, wider)).reasons.to_pylist() == [
        ["keyword 'LLM agent' in title; category cs.RO; 7 upvotes"],
        ["author Kaiming He (as K. He)"]]
    flag = classify(table, ClassifyConfig(ai_categories=("cs.RO",), ai_phrases=("robot",)))
    assert flag.ai_reason.to_pylist() == ["category cs.RO", "phrase 'robot' in abstract"]
