"""Phrase matching over whole columns of text, shared by classify and topics.

A phrase matches whole words, case-insensitively: "VLA" matches "VLA-based" and
"(VLA)" but not "Vladislav" or "TuringViT". Words may be joined by spaces or
hyphens or nothing ("fine-tuning" ~ "fine tuning" ~ "finetuning"), and a phrase
ending in a letter also matches its plural ("language model" ~ "language models").
A word is a run of ASCII letters, digits and _ (RE2's \b): any other character
ends one, so "VLA" is found in "视觉VLA模型", and a phrase that starts or ends with
a Chinese (or any non-ASCII) character matches there without a word break, as
Chinese text has none ("大模型" in "这个大模型很好").

A short list runs as one RE2 pattern in Arrow, a whole column per call (fastest
for a few phrases). A long list (more than `AUTOMATON_FROM` phrases) goes into
one Aho-Corasick automaton instead, so a scan costs the length of the text
whatever the number of phrases: an RE2 alternation of a thousand phrases is
~100× slower per row than one of a hundred, and past ~20,000 RE2 refuses it. For
the automaton the text is lowercased and its runs of spaces and hyphens made one
space first (by Arrow). Both give the same answers. Config text is never a pattern.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Any, cast

import ahocorasick
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.text.reasons import Code, Reason

_SEPARATOR = r"[\s\-]"  # spaces and hyphens
_SEPARATORS = _SEPARATOR + "+"
AUTOMATON_FROM = 100  # phrases in a list from which the automaton beats one RE2 pattern
_RE2_SPECIAL = re.compile(r"([\\.^$|?*+()\[\]{}])")
_JOINS_ENUMERATED = 5  # words of a phrase up to which every join (space/none) is tried


def _normalised(texts: pa.Array[Any] | pa.ChunkedArray[Any]
                ) -> pa.Array[Any] | pa.ChunkedArray[Any]:
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    return pc.replace_substring_regex(pc.utf8_lower(pc.fill_null(texts, "")), _SEPARATORS,  # type: ignore[return-value, type-var]
                                      " ")


def _in_word(ch: str) -> bool:
    """Whether `ch` continues a word: an ASCII letter or digit, or _ (RE2's \\b)."""
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _joins(words: list[str]) -> list[str]:
    """The spellings of a phrase's words: each gap a space or nothing (for a long phrase,
    all spaces or none)."""
    if len(words) > _JOINS_ENUMERATED:
        return [" ".join(words), "".join(words)]
    out = []
    for gaps in itertools.product((" ", ""), repeat=len(words) - 1):
        out.append(words[0] + "".join(g + w for g, w in zip(gaps, words[1:], strict=True)))
    return out


class Phrases:
    """A list of phrases compiled once: per text, the one found first."""

    def __init__(self, phrases: tuple[str, ...], automaton: bool | None = None) -> None:
        self.phrases = phrases
        self._automaton = ahocorasick.Automaton()
        self._pattern = ""
        if not (len(phrases) >= AUTOMATON_FROM if automaton is None else automaton):
            self._pattern = "|".join(f"(?P<p{i}>{_re2(p)})" for i, p in enumerate(phrases))
            return
        spellings: dict[str, list[tuple[int, bool, bool, bool]]] = {}
        normalised = cast(list[str], _normalised(pa.array(phrases, pa.string())).to_pylist())
        for i, norm in enumerate(normalised):
            words = [w for w in norm.split(" ") if w]
            if not words:
                continue
            start, last = words[0][0], words[-1][-1]
            plural = _in_word(last) and last.isalpha()
            for spelled in _joins(words):
                spellings.setdefault(spelled, []).append(
                    (i, _in_word(start), _in_word(last), plural))
        for spelled, found in spellings.items():
            self._automaton.add_word(spelled, (len(spelled), tuple(found)))
        if spellings:
            self._automaton.make_automaton()

    def first(self, texts: pa.Array[Any] | pa.ChunkedArray[Any]) -> np.ndarray:
        """Per text, the index of the phrase found first (leftmost; list order breaks ties),
        or -1 (null text: -1). One pass over the column's text."""
        found = np.full(len(texts), -1, dtype=np.int64)
        if len(texts) == 0:
            return found
        if self._pattern:
            return self._first_by_re2(texts)
        if self._automaton.kind != ahocorasick.AHOCORASICK:
            return found
        norm = _normalised(texts)
        # One string for the whole column, texts apart by a line break (which no
        # normalised text or phrase holds): one automaton call, no per-row overhead.
        joined = "\n".join(cast(list[str], norm.to_pylist()))
        # stubs: utf8_length takes any string array
        lengths = pc.utf8_length(norm).to_numpy(zero_copy_only=False) + 1  # type: ignore[arg-type]
        starts_of_rows = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        starts, which = [], []
        size = len(joined)
        for end, (length, spelled_by) in self._automaton.iter(joined):
            begin = end - length + 1
            before = joined[begin - 1] if begin else "\n"
            after = joined[end + 1] if end + 1 < size else "\n"
            for i, need_start, need_end, plural in spelled_by:
                if need_start and _in_word(before):
                    continue
                if need_end and _in_word(after) and not (
                        plural and _plural_ends(joined, end + 1, size)):
                    continue
                starts.append(begin)
                which.append(i)
        if not which:
            return found
        begin_at = np.asarray(starts)
        row = np.searchsorted(starts_of_rows, begin_at, side="right") - 1
        order = np.lexsort((np.asarray(which), begin_at))  # leftmost, then list order
        row, index = row[order], np.asarray(which)[order]
        first_rows, first = np.unique(row, return_index=True)
        found[first_rows] = index[first]
        return found

    def _hits_by_re2(self, texts: pa.Array[Any] | pa.ChunkedArray[Any]) -> np.ndarray:
        # stubs: fill_null is typed as coalesce (one type for values and fill)
        return pc.fill_null(pc.match_substring_regex(texts, self._pattern, ignore_case=True),  # type: ignore[attr-defined, no-any-return, type-var]
                            False).to_numpy(zero_copy_only=False)

    def _first_by_re2(self, texts: pa.Array[Any] | pa.ChunkedArray[Any]) -> np.ndarray:
        found = np.full(len(texts), -1, dtype=np.int64)
        rows = np.flatnonzero(self._hits_by_re2(texts))  # only these need the capturing scan
        if rows.size == 0:
            return found
        groups = pc.extract_regex(texts.take(rows), "(?i)" + self._pattern)
        which = np.full(rows.size, -1, dtype=np.int64)
        for i in reversed(range(len(self.phrases))):  # a match fills exactly one group
            # stubs: compute functions take Python scalars
            filled = pc.fill_null(pc.not_equal(pc.struct_field(groups, [i]), ""), False)  # type: ignore[call-overload]
            which[filled.to_numpy(zero_copy_only=False)] = i
        found[rows] = which
        return found

    def contains(self, texts: pa.Array[Any] | pa.ChunkedArray[Any]) -> np.ndarray:
        """A bool array: which texts hold any of the phrases."""
        if self._pattern and len(texts):
            return self._hits_by_re2(texts)
        return self.first(texts) >= 0


def _re2(phrase: str) -> str:
    """One phrase as RE2 (case flag apart), by the automaton's rules."""
    words = [_RE2_SPECIAL.sub(r"\\\1", w) for w in re.split(r"[\s\-]+", phrase) if w]
    body = f"{_SEPARATOR}*".join(words)
    first, last = phrase.strip()[0], phrase.strip()[-1]
    start = r"\b" if _in_word(first) else ""
    plural = "(?:s|es)?" if _in_word(last) and last.isalpha() else ""
    end = r"\b" if _in_word(last) else ""
    return f"{start}{body}{plural}{end}"


def _plural_ends(text: str, at: int, size: int) -> bool:
    """Whether "s" or "es" at `at` ends a word (the plural of the phrase before it)."""
    for suffix in ("s", "es"):
        end = at + len(suffix)
        if text.startswith(suffix, at) and (end >= size or not _in_word(text[end])):
            return True
    return False


@lru_cache(maxsize=256)
def compiled(phrases: tuple[str, ...]) -> Phrases:
    """The compiled phrases, kept for the next call with the same list."""
    return Phrases(phrases)


def first_phrase(title: pa.Array[Any] | pa.ChunkedArray[Any],
                 abstract: pa.Array[Any] | pa.ChunkedArray[Any],
                 phrases: tuple[str, ...], code: Code) -> np.ndarray:
    """For rows known to contain some phrase: why, as a Reason(code, (phrase, where)),
    where is "title" or "abstract".

    The phrase found first in the title wins, else the one found first in the abstract;
    rows where none is found get None.
    """
    matcher = compiled(phrases)
    why = np.full(len(title), None, dtype=object)
    in_title = matcher.first(title)
    rest = np.flatnonzero(in_title < 0)
    in_abstract = np.full(len(title), -1, dtype=np.int64)
    in_abstract[rest] = matcher.first(abstract.take(rest))
    for where, found in (("title", in_title), ("abstract", in_abstract)):
        for i in np.unique(found[found >= 0]):
            why[found == i] = Reason(code, (phrases[i], where))
    return why
