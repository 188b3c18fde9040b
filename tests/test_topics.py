"""Topic matching: phrases, all-groups, excludes, categories, authors, upvotes; the defaults."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import demo
from pipeline.cli import cli
from pipeline.config import Topic, TopicName
from pipeline.derive.topics import match, name_tokens, phrase_hits, same_person, unmatched
from pipeline.store import Store
from pipeline.text import patterns
from pipeline.text import phrases as _text

NAME = TopicName(zh="主题", en="Topic")


def _papers(*rows: dict) -> pa.Table:
    defaults = {"categories": ["cs.CL"], "title": "", "abstract": "", "authors": [],
                "hf_upvotes": None}
    full = [{**defaults, **r} for r in rows]
    return pa.table({k: pa.array([r[k] for r in full],
                                 pa.int32() if k == "hf_upvotes" else None)
                     for k in defaults})


def _one(papers: pa.Table, **topic: object) -> list[str | None]:
    """Per row: the topic's reason, or None when the row is not in it."""
    result = match(papers, (Topic(slug="t", name=NAME, **topic),))
    return [r[0] if r else None for r in result.reasons.to_pylist()]


def test_keywords_any_of_with_the_first_hit_as_reason() -> None:
    papers = _papers({"title": "Web agents at scale"},
                     {"abstract": "A new tool-use benchmark."},
                     {"title": "Agentic tools", "abstract": "tool use"},
                     {"title": "Agency theory"})
    assert _one(papers, keywords=("web agent", "tool use")) == [
        "keyword 'web agent' in title", "keyword 'tool use' in abstract",
        "keyword 'tool use' in abstract", None]


def test_all_groups_need_every_phrase_of_one_group() -> None:
    papers = _papers({"title": "Video diffusion", "abstract": ""},
                     {"title": "Diffusion on graphs", "abstract": "no moving pictures"},
                     {"title": "Agents", "abstract": "a benchmark for agents"})
    groups = (("diffusion", "video"), ("agent", "benchmark"))
    assert _one(papers, all=groups) == [
        "all of 'diffusion', 'video'", None, "all of 'agent', 'benchmark'"]


def test_keywords_or_all_groups() -> None:
    papers = _papers({"title": "LLM agents"}, {"title": "Agents that use an LLM"},
                     {"title": "LLM scaling"})
    assert _one(papers, keywords=("LLM agent",), all=(("agent", "LLM"),)) == [
        "keyword 'LLM agent' in title", "all of 'agent', 'LLM'", None]


def test_exclude_vetoes_any_match() -> None:
    papers = _papers({"title": "Diffusion models for images"},
                     {"title": "Diffusion models", "abstract": "for diffusion MRI scans"})
    assert _one(papers, keywords=("diffusion model",), exclude=("diffusion MRI",)) == [
        "keyword 'diffusion model' in title", None]


def test_phrases_respect_word_boundaries() -> None:
    papers = _papers({"title": "Neural networks"}, {"title": "Neuralgia treatment"})
    assert _one(papers, keywords=("neural",)) == ["keyword 'neural' in title", None]


def test_categories_filter_and_say_so() -> None:
    papers = _papers({"categories": ["cs.RO", "cs.LG"], "title": "Robot learning"},
                     {"categories": ["cs.CV"], "title": "Robot learning"},
                     {"categories": ["cs.CV", "cs.RO"], "title": "Grasping"})
    assert _one(papers, keywords=("robot learning",), categories=("cs.RO",)) == [
        "keyword 'robot learning' in title; category cs.RO", None, None]
    assert _one(papers, categories=("cs.RO",)) == ["category cs.RO", None, "category cs.RO"]


def test_authors_ignore_case_and_accents() -> None:
    papers = _papers({"authors": ["José Núñez", "A. Smith"]}, {"authors": ["JOSE NUNEZ"]},
                     {"authors": ["Josef Nunez"]})
    assert _one(papers, authors=("Jose Nunez",)) == [
        "author Jose Nunez (as José Núñez)", "author Jose Nunez (as JOSE NUNEZ)", None]


def test_initials_match_only_when_the_topic_says_so() -> None:
    papers = _papers({"authors": ["K. He"]}, {"authors": ["Kaiming He"]},
                     {"authors": ["Kevin Ho"]}, {"authors": ["Xiangyu He"]})
    assert _one(papers, authors=("Kaiming He",)) == [None, "author Kaiming He", None, None]
    assert _one(papers, authors=("Kaiming He",), match_initials=True) == [
        "author Kaiming He (as K. He)", "author Kaiming He", None, None]
    assert _one(papers, authors=("K. He",), match_initials=True) == [
        "author K. He", "author K. He (as Kaiming He)", None, None]


def test_min_upvotes_counts_missing_picks_as_zero() -> None:
    papers = _papers({"title": "LLM agents", "hf_upvotes": 30},
                     {"title": "LLM agents", "hf_upvotes": 3}, {"title": "LLM agents"})
    assert _one(papers, keywords=("LLM agent",), min_upvotes=10) == [
        "keyword 'LLM agent' in title; 30 upvotes", None, None]
    assert _one(papers, min_upvotes=3) == ["30 upvotes", "3 upvotes", None]


def test_many_topics_give_parallel_slug_and_reason_lists() -> None:
    papers = _papers({"title": "LLM agents for robots"}, {"title": "Nothing here"})
    topics = (Topic(slug="agents", name=NAME, keywords=("LLM agent",)),
              Topic(slug="none", name=NAME, keywords=("quantum",)),
              Topic(slug="robots", name=NAME, keywords=("robot",)))
    result = match(papers, topics)
    assert result.topics.to_pylist() == [["agents", "robots"], []]
    assert result.reasons.to_pylist() == [
        ["keyword 'LLM agent' in title", "keyword 'robot' in title"], []]


@pytest.mark.parametrize(("name", "tokens"), [
    ("Kaiming  HE", ("kaiming", "he")), ("José-María Núñez", ("jose", "maria", "nunez")),
    ("K. He", ("k", "he")), ("Zoë O'Brien", ("zoe", "o", "brien"))])
def test_name_normalisation(name: str, tokens: tuple[str, ...]) -> None:
    assert name_tokens(name) == tokens


def test_initials_need_the_same_surname_and_shape() -> None:
    assert same_person(("j", "r", "tolkien"), ("john", "ronald", "tolkien"), True)
    assert not same_person(("j", "tolkien"), ("john", "ronald", "tolkien"), True)
    assert not same_person(("k", "he"), ("kaiming", "ho"), True)


def test_each_demo_topic_matches_a_sample_paper(sample_papers: pa.Table) -> None:
    cfg = config_mod.load(demo.CONFIG)
    assert len(cfg.topics) >= 6
    result = match(sample_papers, cfg.topics).topics.to_pylist()
    counts = {t.slug: sum(t.slug in row for row in result) for t in cfg.topics}
    assert all(n >= 1 for n in counts.values()), counts


class _CountedSlug(str):
    """A slug that counts how often it is compared: the cost of counting matches."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedSlug.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_topics_check_counts_matches_in_one_pass(tmp_path: Path, sample_papers: pa.Table,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Counting with `slug in row` for every topic and paper compares each slug with every
    # slug matched by every paper: quadratic in topics (10,000 took 9½ minutes).
    Store(tmp_path / "data").write("papers", sample_papers)
    words = ["model", "learning", "data", "network", "language", "method", "results"]
    topics = tuple(Topic(slug=_CountedSlug(f"t-{i}"), name=NAME, keywords=(words[i % 7],))
                   for i in range(35))
    (tmp_path / "papertrail.toml").write_text('[store]\npath = "data"\n', encoding="utf-8")
    cfg = config_mod.load(tmp_path / "papertrail.toml")
    monkeypatch.setattr(config_mod, "load", lambda _path: dataclasses.replace(cfg, topics=topics))
    expected = match(sample_papers, topics).topics.to_pylist()
    _CountedSlug.compared = 0
    result = CliRunner().invoke(cli, ["--config", str(tmp_path / "papertrail.toml"), "topics",
                                      "check"])
    assert result.exit_code == 0, result.output
    assert _CountedSlug.compared <= 2 * len(topics)
    for topic in topics:
        count = sum(topic.slug in row for row in expected)
        assert f"ok  {topic.slug} " in result.output
        assert f"· {count} of {sample_papers.num_rows} papers" in result.output.split(
            f"ok  {topic.slug} ", 1)[1].splitlines()[0]


BOUNDARIES = [  # (text, phrase found first or None)
    ("TuringViT is a vision model", None), ("Vladislav Petrov", None), ("éVLAs", "VLA"),
    ("VLAs for robots", "VLA"), ("a VLA-based policy", "VLA"), ("(VLA)", "VLA"),
    ("视觉VLA模型", "VLA"), ("这个大模型很好", "大模型"), ("Finetuning at scale", "fine-tuning"),
    ("fine -  tuning", "fine-tuning"), ("language models", "language model"),
    ("languagemodeling", None), ("written in C++ code", "C++"), ("GPT 4o and VLA", "GPT-4o"),
]


@pytest.mark.parametrize("automaton", [False, True], ids=["re2", "automaton"])
@pytest.mark.parametrize(("text", "found"), BOUNDARIES)
def test_phrases_match_at_word_boundaries_in_both_engines(text: str, found: str | None,
                                                           automaton: bool) -> None:
    phrases = ("GPT-4o", "VLA", "fine-tuning", "language model", "大模型", "C++")
    first = _text.Phrases(phrases, automaton).first(pa.array([text, None]))
    assert [phrases[i] if i >= 0 else None for i in first] == [found, None]


def test_a_topic_of_twenty_thousand_keywords_matches_as_a_short_one() -> None:
    papers = _papers({"title": "TuringViT"}, {"abstract": "Vladislav's VLA policies"},
                     {"title": "Word 19999 and word 7"})
    many = (*tuple(f"word {i}" for i in range(20000)), "VLA")
    assert _one(papers, keywords=many) == [
        None, "keyword 'VLA' in abstract", "keyword 'word 19999' in title"]
    assert _one(papers, keywords=("VLA",), exclude=many[:5_000]) == [
        None, "keyword 'VLA' in abstract", None]


@pytest.mark.parametrize(("keyword", "forms"), [
    ("prompt.*injection", ("prompt injection",)), ("attack|defen[cs]e", ("attack", "defence",
                                                                         "defense")),
    ("LiDAR?", ("LiDAR",)), ("(un)safe", ("unsafe", "safe")), ("SLAM\\b", ("SLAM",)),
    ("\\bvision\\s+transformers?\\b", ("vision transformer",)), ("colou?r", ("colour", "color")),
    ("large (language|vision) models?", ("large language model", "large vision model")),
    ("(VLA", ("VLA",)), ("(" * 5000 + "x", ()), ("C++", ()), ("C#", ()), ("GPT-4.5", ()),
])
def test_a_keyword_written_as_a_pattern_gets_its_plain_forms(keyword: str,
                                                             forms: tuple[str, ...]) -> None:
    assert patterns.plain_forms(keyword) == forms
    assert patterns.looks_like_pattern(keyword) == (keyword not in ("C++", "C#", "GPT-4.5"))


def test_unmatched_finds_every_phrase_no_paper_holds(sample_papers: pa.Table) -> None:
    # Phrases that share rows (each scan finds only a row's leftmost one) and some in none.
    words = ("model", "language model", "large language model", "learning", "robot",
             "prompt.*injection", "zzqx unheard", "LiDAR", "C++", "reinforcement learning")
    expected = [w for w in words if not phrase_hits(sample_papers, w).any()]
    assert expected == ["prompt.*injection", "zzqx unheard"]
    assert unmatched(sample_papers, words) == expected
    assert unmatched(sample_papers.slice(0, 0), words) == list(words)


def test_topics_check_warns_per_keyword_with_what_the_plain_form_would_match(
        tmp_path: Path, sample_papers: pa.Table) -> None:
    Store(tmp_path / "data").write("papers", sample_papers)
    path = tmp_path / "papertrail.toml"
    path.write_text('[store]\npath = "data"\n[[topics]]\nslug = "sec"\n'
                    'name = { zh = "安全", en = "Security" }\nkeywords = ["prompt.*injection", '
                    '"attack|defen[cs]e", "(un)safe", "zzqx unheard", "robot", "C++"]\n'
                    '[[follows]]\nname = "mine"\nkeywords = ["robot", "LiDAR?", "qqzx"]\n',
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(path), "topics", "check"])
    assert result.exit_code == 0, result.output
    total = sample_papers.num_rows

    def hits(phrase: str) -> str:
        return f"{phrase!r} would match {int(phrase_hits(sample_papers, phrase).sum())} of {total}"

    lines = result.stdout.splitlines()
    where = f"{path}: topics[0].keywords"
    assert (f"warn  {where}[0] 'prompt.*injection' (topic 'sec') matches nothing: it looks like "
            "a regular expression, but keywords are plain phrases matched as written; "
            f"{hits('prompt injection')}") in lines
    assert f"; {hits('attack')}, {hits('defence')}, {hits('defense')}" in result.stdout
    assert f"; {hits('unsafe')}, {hits('safe')}" in result.stdout
    assert (f"warn  {where}[3] 'zzqx unheard' (topic 'sec') matches nothing in the store "
            f"({total} papers)") in lines
    assert not any("'robot'" in line for line in lines)
    assert (f"note  {where}[5] 'C++' (topic 'sec'): '+' matched as written, not as a pattern "
            f"(keywords are plain phrases): {int(phrase_hits(sample_papers, 'C++').sum())} of "
            f"{total} papers") in lines
    follow = f"{path}: follows[0].keywords"
    assert (f"warn  {follow}[1] 'LiDAR?' (follow 'mine') matches nothing: it looks like a "
            f"regular expression, but keywords are plain phrases matched as written; "
            f"{hits('LiDAR')}") in lines
    assert f"warn  {follow}[2] 'qqzx' (follow 'mine') matches nothing in the store" in result.stdout
    assert "1 topics valid" in result.stdout


# -- keyword hits checked against the topic's meaning -------------------------------------------

SHIPPED = config_mod.load(Path(__file__).resolve().parent.parent / "papertrail.toml")


def _tagged(papers: pa.Table, slug: str, topics: tuple[Topic, ...]) -> dict[str, bool]:
    found = match(papers, topics).topics.to_pylist()
    return {a: slug in t for a, t in zip(papers["arxiv_id"].to_pylist(), found, strict=True)}


@pytest.mark.parametrize(("slug", "off", "on"), [
    # "drift diffusion model" of cognitive science, in a chess rating paper
    ("generative-vision", "2606.26267", "2606.22568"),
    # "quantization" of a visual tokenizer's discrete codes, beside an LLM quantization paper
    ("efficient-inference", "2606.27313", "2606.26650"),
])
def test_a_keyword_hit_the_topics_meaning_does_not_support_is_not_tagged(
        sample_papers: pa.Table, slug: str, off: str, on: str) -> None:
    topics = SHIPPED.topics
    tagged = _tagged(sample_papers, slug, topics)
    assert tagged[on] and not tagged[off]
    # the keyword alone did tag it: the check (or the topic's exclude) is what leaves it out
    bare = tuple(dataclasses.replace(t, min_similarity=0.0, exclude=()) for t in topics)
    assert _tagged(sample_papers, slug, bare)[off]


def test_the_meaning_check_gates_keywords_and_groups_not_authors() -> None:
    papers = _papers(
        {"title": "Diffusion models for image generation",
         "abstract": "We train a text-to-image diffusion model that generates images."},
        {"title": "A drift diffusion model of choices in chess",
         "abstract": "Players' decisions follow a drift diffusion model; Elo ratings."},
        {"title": "A drift diffusion model of reaction times", "authors": ["Ada Lovelace"],
         "abstract": "Reaction times of human decisions."})
    papers = papers.append_column("arxiv_id", pa.array(["2606.00001", "2606.00002",
                                                        "2606.00003"]))
    topic = dict(keywords=("diffusion model",), authors=("Ada Lovelace",),
                 description="Generators of images and video: diffusion and text-to-image.",
                 min_similarity=0.25)  # three papers: every word is about as rare
    assert [r is not None for r in _one(papers, **topic)] == [True, False, True]
    assert [r is not None for r in _one(papers, **{**topic, "min_similarity": 0.0})] == [True] * 3
    # examples alone give the topic a meaning; an example id the store lacks is no error
    assert [r is not None for r in _one(papers, keywords=("diffusion model",),
                                        examples=("2606.00001", "2606.99999"),
                                        min_similarity=0.5)
            ] == [True, False, False]


def test_each_shipped_topic_has_examples_of_the_sample(sample_papers: pa.Table) -> None:
    ids = set(sample_papers["arxiv_id"].to_pylist())
    for topic in SHIPPED.topics:
        assert topic.gated() and topic.examples and set(topic.examples) <= ids, topic.slug
