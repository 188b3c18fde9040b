"""Topic matching: which configured `[[topics]]` each paper belongs to, and why.

A paper is in a topic when
  (a keyword is in its title/abstract, OR every phrase of some `all` group is,
   OR one of its authors is one of `authors`;
   a topic with none of these selects on its filters alone)
  AND (no `categories` given, or one of its categories is listed)
  AND its Hugging Face upvotes ≥ `min_upvotes` (no pick counts as 0)
  AND no `exclude` phrase is in its title/abstract.
A keyword or `all` hit of a topic with a description or examples counts only when the
paper's title and abstract are at least `min_similarity` (cosine of sublinear TF-IDF) like
the topic's meaning: its description and keywords, and its example papers' text. So
"Drift-Diffusion-Enhanced Elo" is not 扩散与生成式视觉 for the word "diffusion", and a
visual tokenizer is not 高效推理 for "quantization" (docs/TOPICS.md; bench/topics.py
measured the threshold on judged papers). Authors and filters are not checked.
Phrases match as in pipeline.text.phrases. Authors match on normalised names (case,
accents and punctuation ignored); with `match_initials`, "K. He" ~ "Kaiming He".

Vectorised per topic: the cheap filters shrink the rows first, then one automaton
scan per phrase list runs over what is left (linear in the text, whatever the
number of keywords), and the reason is worked out only for the rows that matched: codes
with arguments (pipeline/text/reasons.py), stored in the form `reasons.stored` writes.
Topics run in parallel threads (Arrow's kernels release the GIL; the scans share it).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.config import Follow, Topic
from pipeline.derive.classify import first_category
from pipeline.sources import signal
from pipeline.text import phrases as _text
from pipeline.text.names import name_tokens, same_person
from pipeline.text.reasons import Code, Reason, Why, stored

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

_STRS = pa.list_(pa.string())
FIT_ROWS = 20_000  # papers the word weights are learnt from (evenly spaced): a stable IDF


class AuthorIndex:
    """The distinct author names of a table, indexed by normalised surname."""

    def __init__(self, authors: pa.ChunkedArray[Any] | pa.Array[Any]) -> None:
        # stubs: fill_null is typed as coalesce (one type for values and fill)
        authors = pc.fill_null(authors, pa.scalar([], _STRS))  # type: ignore[assignment]
        flat = pc.list_flatten(authors)
        self.parents = pc.list_parent_indices(authors).to_numpy()
        encoded = pc.dictionary_encode(flat).combine_chunks() if isinstance(
            flat, pa.ChunkedArray) else pc.dictionary_encode(flat)
        # stubs: a dictionary-encoded ListArray's values
        self.codes = encoded.indices.to_numpy(zero_copy_only=False)  # type: ignore[attr-defined]
        # stubs: a dictionary-encoded ListArray's values
        self.names = encoded.dictionary.to_pylist()  # type: ignore[attr-defined]
        self.tokens = [name_tokens(n) for n in self.names]
        self.by_surname: dict[str, list[int]] = defaultdict(list)
        for code, tokens in enumerate(self.tokens):
            if tokens:
                self.by_surname[tokens[-1]].append(code)

    def match(self, wanted: tuple[str, ...], initials: bool, rows: int) -> np.ndarray:
        """Per row: the Reason (the name as configured, and the paper's spelling when it
        differs) or None."""
        reason_of_code: dict[int, Reason] = {}
        for name in wanted:
            tokens = name_tokens(name)
            for code in self.by_surname.get(tokens[-1] if tokens else "", ()):
                if code not in reason_of_code and same_person(tokens, self.tokens[code],
                                                              initials):
                    spelled = self.names[code]
                    reason_of_code[code] = (Reason(Code.AUTHOR, (name,)) if spelled == name
                                            else Reason(Code.AUTHOR_AS, (name, spelled)))
        why = np.full(rows, None, dtype=object)
        if not reason_of_code:
            return why
        codes = np.fromiter(reason_of_code, dtype=np.int64)
        hit = np.isin(self.codes, codes)
        hit_rows, first = np.unique(self.parents[hit], return_index=True)
        why[hit_rows] = [reason_of_code[c] for c in self.codes[np.flatnonzero(hit)[first]]]
        return why


@dataclass(frozen=True)
class Matched:
    topics: pa.Array[Any]  # list<string>: slugs, in config order
    reasons: pa.Array[Any]  # list<string>: parallel to topics (reasons.stored)


_FILTERS_ONLY = object()  # a topic without selectors: matched by its filters, which say why


def phrase_hits(papers: pa.Table, phrase: str) -> np.ndarray:
    return _holding(papers["title"], papers["abstract"], (phrase,))


def unmatched(papers: pa.Table, phrases: tuple[str, ...]) -> list[str]:
    """The phrases found in no row's title or abstract, in their order.

    One scan gives each row the phrase found first in it; those phrases are found, and
    the rest are looked for again only in the rows that held one (a row holding a phrase
    not found yet held some phrase in every earlier scan): a few scans, whatever the
    number of phrases."""
    rest = list(dict.fromkeys(phrases))
    rows = np.arange(papers.num_rows)
    while rest and rows.size:
        matcher = _text.compiled(tuple(rest))
        title, abstract = papers["title"].take(rows), papers["abstract"].take(rows)
        first = matcher.first(title)
        in_abstract = matcher.first(abstract)
        found = set(np.unique(np.concatenate([first[first >= 0],
                                              in_abstract[in_abstract >= 0]])).tolist())
        if not found:
            break
        rows = rows[(first >= 0) | (in_abstract >= 0)]
        rest = [p for i, p in enumerate(rest) if i not in found]
    return [p for p in dict.fromkeys(phrases) if p in rest]


def _holding(title: pa.Array[Any] | pa.ChunkedArray[Any],
             abstract: pa.Array[Any] | pa.ChunkedArray[Any],
             phrases: tuple[str, ...]) -> np.ndarray:
    """Which rows hold one of `phrases` in the title or (else) the abstract."""
    matcher = _text.compiled(phrases)
    hit = matcher.contains(title)
    rest = np.flatnonzero(~hit)
    hit[rest] = matcher.contains(abstract.take(rest))
    return hit


def follow_matches(papers: pa.Table, follow: Follow, authors: AuthorIndex | None
                   ) -> Iterator[tuple[int, Why]]:
    """(row, why) for each paper one of `follow`'s lists matches: unlike a topic, where
    categories narrow the keywords, each list is a topic of its own, so one is enough."""
    for topic in (Topic(keywords=follow.keywords),
                  Topic(authors=follow.authors, match_initials=follow.match_initials),
                  Topic(categories=follow.categories)):
        if topic.keywords or topic.authors or topic.categories:
            for row, why in enumerate(match_topic(papers, topic, authors)):
                if why is not None:
                    yield row, why


def match_topic(papers: pa.Table, topic: Topic, authors: AuthorIndex | None,
                group_heads: dict[str, np.ndarray] | None = None,
                meaning: Meaning | None = None) -> np.ndarray:
    """Per row, why the paper is in `topic` (a Why: the keyword, phrases or author that
    matched, then the filters: (KEYWORD x in title, CATEGORY cs.RO)), or None.

    `group_heads`: precomputed hits (over all rows) of the first phrase of `all` groups,
    shared by the topics that start a group with the same phrase. `meaning`: where the
    keyword and `all` hits of a gated topic are checked (before its authors are looked at).
    """
    n = papers.num_rows
    rows = np.arange(n)
    category = upvotes = None
    if topic.categories:
        category = first_category(papers["categories"], topic.categories)
        rows = rows[category.astype(bool)[rows]]
    if topic.min_upvotes:
        # stubs: fill_null is typed as coalesce (one type for values and fill)
        counted = signal("upvotes")  # the source signal it reads (`Source.signals`)
        upvotes = np.zeros(n, dtype=np.int64) if counted is None else pc.fill_null(  # type: ignore[attr-defined]
            papers[counted.column], 0).to_numpy()  # type: ignore[type-var]
        rows = rows[upvotes[rows] >= topic.min_upvotes]

    why = np.full(n, None, dtype=object)
    if not (topic.keywords or topic.all or topic.authors):
        if category is None and upvotes is None:
            return why  # selects nothing (the config loader refuses such a topic)
        why[rows] = _FILTERS_ONLY
    if rows.size == n:  # no filter: no copy of the text
        title, abstract = papers["title"], papers["abstract"]
    else:
        title, abstract = papers["title"].take(rows), papers["abstract"].take(rows)
    if topic.keywords and rows.size:
        hit = np.flatnonzero(_holding(title, abstract, topic.keywords))
        why[rows[hit]] = _text.first_phrase(title.take(hit), abstract.take(hit), topic.keywords,
                                            Code.KEYWORD)
    _match_groups(why, rows, title, abstract, topic.all, group_heads or {})
    if meaning is not None and topic.gated():
        hits = rows[~_unset(why[rows]) & (why[rows] != _FILTERS_ONLY)]
        why[meaning.unlike(topic, hits)] = None
    if topic.authors and authors is not None:  # None only when no topic names authors
        by_author = authors.match(topic.authors, topic.match_initials, n)
        fill = rows[_unset(why[rows]) & ~_unset(by_author[rows])]
        why[fill] = by_author[fill]
    matched = _drop_excluded(papers, why, topic.exclude)
    for i in matched:  # one by one: a slice would take each tuple for a row of values
        parts: Why = () if why[i] is _FILTERS_ONLY else (why[i],)
        if category is not None:
            parts += (Reason(Code.CATEGORY, (category[i],)),)
        if upvotes is not None:
            parts += (Reason(Code.UPVOTES, (str(upvotes[i]),)),)
        why[i] = parts
    return why


def _match_groups(why: np.ndarray, rows: np.ndarray, title: pa.ChunkedArray[Any],
                  abstract: pa.ChunkedArray[Any], groups: tuple[tuple[str, ...], ...],
                  heads: dict[str, np.ndarray]) -> None:
    """Mark (in `why`) the rows not matched yet that hold every phrase of an `all` group."""
    for group in groups:
        open_rows = np.flatnonzero(_unset(why[rows]))
        rest = group
        if group[0] in heads:
            open_rows, rest = open_rows[heads[group[0]][rows[open_rows]]], group[1:]
        for phrase in rest:  # each phrase only scans the rows every earlier one matched
            if open_rows.size == 0:
                break
            t, a = title.take(open_rows), abstract.take(open_rows)
            open_rows = open_rows[_holding(t, a, (phrase,))]
        why[rows[open_rows]] = Reason(Code.ALL_OF, group)


def _drop_excluded(papers: pa.Table, why: np.ndarray, exclude: tuple[str, ...]) -> np.ndarray:
    """Unmark the matched rows holding an excluded phrase; the rows still matched."""
    matched = np.flatnonzero(~_unset(why))
    if exclude and matched.size:
        vetoed = _holding(papers["title"].take(matched), papers["abstract"].take(matched), exclude)
        why[matched[vetoed]] = None
        matched = matched[~vetoed]
    return matched


def _unset(why: np.ndarray) -> np.ndarray:
    return np.asarray(pd.isna(why), dtype=bool)


def match(papers: pa.Table, topics: tuple[Topic, ...]) -> Matched:
    """The topics (and reasons) of every row of a papers-shaped table."""
    n = papers.num_rows
    authors = AuthorIndex(papers["authors"]) if any(t.authors for t in topics) else None
    heads = {g[0] for t in topics for g in t.all}
    meaning = Meaning(papers) if any(t.gated() for t in topics) else None
    workers = max(1, min(len(topics), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        group_heads = dict(zip(heads, pool.map(lambda p: phrase_hits(papers, p), heads),
                               strict=True))
        columns = list(pool.map(lambda t: match_topic(papers, t, authors, group_heads,
                                                      meaning), topics))
    if not columns:
        empty = pa.array([[]] * n, _STRS)
        return Matched(empty, empty)
    why = np.stack(columns, axis=1) if n else np.zeros((0, len(topics)), dtype=object)
    hit = ~_unset(why)
    row_idx, topic_idx = np.nonzero(hit)  # row-major: each row's topics in config order
    offsets = np.concatenate([[0], np.cumsum(hit.sum(axis=1))]).astype(np.int32)
    slugs = np.array([t.slug for t in topics], dtype=object)
    values = pa.array(slugs[topic_idx].tolist(), pa.string())
    reasons = pa.array([stored(w) for w in why[row_idx, topic_idx]], pa.string())
    return Matched(pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values),
                   pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), reasons))


class Meaning:
    """What each gated topic means, in the word space of a papers table (sublinear TF-IDF
    of title and abstract, its weights learnt from at most FIT_ROWS evenly spaced papers)."""

    def __init__(self, papers: pa.Table) -> None:
        # sklearn is imported here, not above: it costs ~2 s, and only gated topics need it
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.texts = _texts(papers)
        step = max(1, len(self.texts) // FIT_ROWS)
        self.words = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit(
            self.texts[::step])
        self.ids = {a: i for i, a in enumerate(papers["arxiv_id"].to_pylist())} if \
            "arxiv_id" in papers.column_names else {}

    def unlike(self, topic: Topic, rows: np.ndarray) -> np.ndarray:
        """The rows less similar than `topic.min_similarity` to its description and keywords
        and (as much) its examples' centroid."""
        from sklearn.preprocessing import normalize

        meaning = vectors(self.words, [" ".join((topic.description, *topic.keywords))])
        examples = [self.texts[r] for a in topic.examples if (r := self.ids.get(a)) is not None]
        if examples:
            meaning = normalize(meaning + normalize(vectors(self.words, examples).mean(
                axis=0, keepdims=True)))
        near: np.ndarray = vectors(self.words, [self.texts[r] for r in rows]) @ meaning.T
        return rows[near.ravel() < topic.min_similarity]


def vectors(words: TfidfVectorizer, texts: list[str]) -> np.ndarray:
    from sklearn.preprocessing import normalize

    return np.asarray(normalize(words.transform(texts)).toarray())


def _texts(papers: pa.Table) -> list[str]:
    """Each paper's title and abstract, as one text."""
    return [f"{t or ''}. {a or ''}" for t, a in zip(papers["title"].to_pylist(),
                                                   papers["abstract"].to_pylist(), strict=True)]


def counts(matched: Matched) -> dict[str, int]:
    """Papers per topic slug (slugs matching nothing are absent), in one pass over the
    matched lists."""
    # stubs: to_pylist is typed for flat types only
    found: list[dict[str, Any]] = pc.value_counts(  # type: ignore[assignment, misc]
        pc.list_flatten(matched.topics)).to_pylist()
    return {row["values"]: row["counts"] for row in found}
