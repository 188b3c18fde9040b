"""Phrase matching over whole columns of text, shared by classify and topics.

A phrase matches whole words, case-insensitively: "neural" does not match
"neuralgia". Words may be joined by spaces or hyphens or nothing ("fine-tuning"
~ "fine tuning" ~ "finetuning"), and a phrase ending in a letter also matches
its plural ("language model" ~ "language models"). Patterns run in Arrow's RE2
engine, a whole column per call, and phrases are escaped: config text is
never a regex.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_SEPARATORS = re.compile(r"[\s\-]+")
_RE2_SPECIAL = re.compile(r"([\\.^$|?*+()\[\]{}])")


def phrase_pattern(phrase: str) -> str:
    """The RE2 pattern of one phrase (without the case flag)."""
    words = [_RE2_SPECIAL.sub(r"\\\1", w) for w in _SEPARATORS.split(phrase.strip()) if w]
    body = r"[\s\-]*".join(words)
    start = r"\b" if re.match(r"\w", words[0]) else ""
    if re.search(r"[^\W\d_]$", words[-1]):
        end = r"(?:s|es)?\b"
    else:
        end = r"\b" if re.search(r"\w$", words[-1]) else ""
    return f"{start}{body}{end}"


def any_pattern(phrases: tuple[str, ...] | list[str]) -> str:
    return "|".join(f"(?:{phrase_pattern(p)})" for p in phrases)


def contains(texts: pa.Array | pa.ChunkedArray, pattern: str) -> np.ndarray:
    """A bool array: which texts contain the pattern (null text: no)."""
    if len(texts) == 0:
        return np.zeros(0, dtype=bool)
    hits = pc.match_substring_regex(texts, pattern, ignore_case=True)
    return pc.fill_null(hits, False).to_numpy(zero_copy_only=False)


def which_phrase(texts: pa.Array | pa.ChunkedArray, phrases: tuple[str, ...] | list[str]
                 ) -> np.ndarray:
    """Per text, the index of the phrase found first (leftmost; config order breaks ties),
    or -1. One capturing scan for all phrases: only run it on the rows that matched."""
    found = np.full(len(texts), -1, dtype=np.int64)
    if len(texts) == 0:
        return found
    pattern = "(?i)" + "|".join(f"(?P<p{i}>{phrase_pattern(p)})" for i, p in enumerate(phrases))
    groups = pc.extract_regex(texts, pattern)
    for i in reversed(range(len(phrases))):  # a match fills exactly one group
        hit = pc.fill_null(pc.not_equal(pc.struct_field(groups, [i]), ""), False)
        found[hit.to_numpy(zero_copy_only=False)] = i
    return found


def first_phrase(title: pa.Array | pa.ChunkedArray, abstract: pa.Array | pa.ChunkedArray,
                 phrases: tuple[str, ...] | list[str], label: str) -> np.ndarray:
    """For rows known to contain some phrase: why, as "<label> 'p' in title|abstract".

    The phrase found first in the title wins, else the one found first in the abstract;
    rows where none is found get None.
    """
    why = np.full(len(title), None, dtype=object)
    in_title = which_phrase(title, phrases)
    rest = np.flatnonzero(in_title < 0)
    in_abstract = np.full(len(title), -1, dtype=np.int64)
    in_abstract[rest] = which_phrase(pc.take(abstract, pa.array(rest)), phrases)
    for where, found in (("title", in_title), ("abstract", in_abstract)):
        for i, phrase in enumerate(phrases):
            why[found == i] = f"{label} '{phrase}' in {where}"
    return why
