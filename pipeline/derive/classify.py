"""The AI-related flag: an explainable rule a reader can check by eye.

A paper is AI-related when any of its categories is one of `[classify]
ai_categories`, or when its title or abstract contains one of `ai_phrases`
(whole words, case-insensitive, see pipeline.text.phrases). The reason names the
first thing that decided it: its first AI category (the primary one when that
is AI), else the first phrase in config order found in the title, else in the
abstract: codes with arguments (pipeline/text/reasons.py), stored as "category cs.LG",
"phrase 'language model' in title".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.config import ClassifyConfig
from pipeline.text import phrases as _text
from pipeline.text.reasons import Code, Reason, stored


@dataclass(frozen=True)
class Classified:
    ai_related: pa.Array[Any]  # bool
    ai_reason: pa.Array[Any]  # string (reasons.stored), null when not AI-related


def first_category(categories: pa.ChunkedArray[Any] | pa.Array[Any], wanted: tuple[str, ...]
                   ) -> np.ndarray:
    """Per row, the first of its categories that is in `wanted` (None when none is)."""
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    categories = pc.fill_null(categories, pa.scalar([], pa.list_(pa.string())))  # type: ignore[assignment]
    flat = pc.list_flatten(categories)
    parents = pc.list_parent_indices(categories).to_numpy()
    out = np.full(len(categories), None, dtype=object)
    if not wanted or len(flat) == 0:
        return out
    hit = pc.is_in(flat, pa.array(wanted, pa.string())).to_numpy(zero_copy_only=False)
    rows, first = np.unique(parents[hit], return_index=True)  # parents ascend: first hit
    out[rows] = flat.to_numpy(zero_copy_only=False)[np.flatnonzero(hit)[first]]
    return out


def classify(papers: pa.Table, cfg: ClassifyConfig) -> Classified:
    """The flag and its reason for every row of a papers-shaped table."""
    category = first_category(papers["categories"], cfg.ai_categories)
    by_category = category.astype(bool)  # None → False; codes are non-empty
    reason = np.full(papers.num_rows, None, dtype=object)
    reason[by_category] = [Reason(Code.CATEGORY, (c,)) for c in category[by_category]]
    rest = np.flatnonzero(~by_category)  # only these need the text scan
    if cfg.ai_phrases and rest.size:
        title = papers["title"].take(rest)
        abstract = papers["abstract"].take(rest)
        matcher = _text.compiled(cfg.ai_phrases)
        hit = matcher.contains(title) | matcher.contains(abstract)
        hit_rows = np.flatnonzero(hit)
        why = _text.first_phrase(title.take(hit_rows), abstract.take(hit_rows), cfg.ai_phrases,
                                 Code.PHRASE)
        reason[rest[hit_rows]] = why
    flag = reason.astype(bool)  # a Reason is true, None false
    text = np.full(papers.num_rows, None, dtype=object)
    text[flag] = [stored((r,)) for r in reason[flag]]
    return Classified(pa.array(flag), pa.array(text, pa.string()))
