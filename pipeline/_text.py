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


def first_phrase(title: pa.Array | pa.ChunkedArray, abstract: pa.Array | pa.ChunkedArray,
                 phrases: tuple[str, ...] | list[str], label: str) -> np.ndarray:
    """For rows known to contain some phrase: why, as "<label> 'p' in title|abstract".

    The first phrase (in config order) found in the title wins, then in the abstract;
    rows where none is found get None.
    """
    why = np.full(len(title), None, dtype=object)
    unexplained = np.ones(len(title), dtype=bool)
    for where, texts in (("title", title), ("abstract", abstract)):
        for phrase in phrases:
            rows = np.flatnonzero(unexplained)
            if rows.size == 0:
                return why
            found = rows[contains(pc.take(texts, pa.array(rows)), phrase_pattern(phrase))]
            why[found] = f"{label} '{phrase}' in {where}"
            unexplained[found] = False
    return why
