"""The AI-related flag: table-driven cases, including near-misses that must not hit."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.config import ClassifyConfig
from pipeline.derive.classify import classify

DEFAULT = ClassifyConfig()

CASES = [
    # (categories, title, abstract, expected reason or None)
    (["cs.LG"], "On sorting", "", "category cs.LG"),
    (["math.OC", "stat.ML"], "Convex bounds", "", "category stat.ML"),
    (["cs.CV", "cs.LG"], "x", "", "category cs.CV"),  # the primary one when it is AI
    (["cs.DS"], "Graph algorithms", "We study shortest paths.", None),
    (["q-bio.NC"], "Neuralgia in adults", "Chronic neuralgia pain.", None),  # not "neural"
    (["q-bio.NC"], "Neural networks of the brain", "", "phrase 'neural network' in title"),
    (["cs.DS"], "Sorting", "We fine-tune large language models.",
     "phrase 'large language model' in abstract"),
    (["cs.IT"], "Capacity", "An LLM-based decoder.", "phrase 'LLM' in abstract"),
    (["cs.IT"], "Capacity", "LLMs and codes.", "phrase 'LLM' in abstract"),  # plural
    (["cs.IT"], "Capacity", "The ALLMOST code.", None),  # LLM inside a word
    (["cs.GT"], "Auctions", "We use deep-learning to price.", "phrase 'deep learning' in abstract"),
    (["cs.GT"], "Auctions", "We apply Fine Tuning.", "phrase 'fine-tuning' in abstract"),
    (["cs.GT"], "Transformers in auctions", "A deep learning view.",
     "phrase 'transformer' in title"),  # title before abstract
    (["cs.CE"], "Machine-learning surrogates", "", "phrase 'machine learning' in title"),
    (["cs.CE"], "Finite elements", "Learning rates of machines.", None),  # words, not phrase
    ([], "", "", None),
]


@pytest.mark.parametrize(("categories", "title", "abstract", "expected"), CASES)
def test_flag_and_reason(categories: list[str], title: str, abstract: str,
                         expected: str | None) -> None:
    table = pa.table({"categories": [categories], "title": [title], "abstract": [abstract]})
    result = classify(table, DEFAULT)
    assert result.ai_reason.to_pylist() == [expected]
    assert result.ai_related.to_pylist() == [expected is not None]


def test_many_rows_at_once_keep_their_own_reasons() -> None:
    rows = CASES * 50
    table = pa.table({"categories": [r[0] for r in rows], "title": [r[1] for r in rows],
                      "abstract": [r[2] for r in rows]})
    assert classify(table, DEFAULT).ai_reason.to_pylist() == [r[3] for r in rows]


def test_null_text_and_categories_are_not_ai() -> None:
    table = pa.table({"categories": pa.array([None], pa.list_(pa.string())),
                      "title": pa.array([None], pa.string()),
                      "abstract": pa.array([None], pa.string())})
    assert classify(table, DEFAULT).ai_related.to_pylist() == [False]


def test_the_rule_follows_the_config() -> None:
    cfg = ClassifyConfig(ai_categories=("cs.DS",), ai_phrases=("shortest path",))
    table = pa.table({"categories": [["cs.LG"], ["cs.DS"], ["math.CO"]],
                      "title": ["A", "B", "Shortest paths"], "abstract": ["", "", ""]})
    assert classify(table, cfg).ai_reason.to_pylist() == [
        None, "category cs.DS", "phrase 'shortest path' in title"]


def test_phrases_are_text_not_regex() -> None:
    cfg = ClassifyConfig(ai_categories=(), ai_phrases=("C++ (templates)", "a.b"))
    table = pa.table({"categories": [[], [], []],
                      "title": ["Using C++ (templates) well", "axb", "a.b rules"],
                      "abstract": ["", "", ""]})
    assert classify(table, cfg).ai_related.to_pylist() == [True, False, True]
