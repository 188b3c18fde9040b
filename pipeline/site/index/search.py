"""The client-side search index: a small manifest, term-hashed shards and chunked docs.

A query fetches the manifest, one shard per query term (plus up to PREFIX_KEEP shards for
the expansions of the word being typed) and the doc chunks of the results it shows, so the
bytes before a first result do not grow with the corpus. Terms above CAP_DF documents keep
only their CAP_K best postings, so no shard grows with the corpus either. docs/SEARCH.md
describes the format; theme/static/search.js reads it (its tokenizer mirrors `tokens`).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import itertools
import json
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.site.model.views import CLOCKS, Paper
from pipeline.site.render.tex import excerpt, plain_tex
from pipeline.site.writer import gzipped
from pipeline.sources import picks
from pipeline.text.venue import Tier
from pipeline.text.venue import tier as venue_tier

VERSION = 1
CHUNK = 32  # docs per chunk: a result page of 20 loads at most 20 small files
FACET_BLOCK = 4096  # docs per facet block, loaded only when a filter or a clock sort is on
CAP_DF = 800  # a term in more documents than this keeps only its best CAP_K postings
CAP_K = 400
PREFIX_MIN = 2  # shortest Latin prefix that expands (a single CJK character also expands)
PREFIX_MAX = 12
PREFIX_KEEP = 3  # expansions per prefix, most frequent first
SHARD_TARGET = 24_000  # raw JSON bytes per shard on average (≈ 8 KB gzip)
RECENT = 1500  # newest papers (by first_seen) that "my feed" matches follows against
TLDR_CHARS = 160
BATCH = 2048  # docs tokenised per numpy pass
K1, B = 1.2, 0.75
# (field, weight, length-normalised): title and author hits outrank abstract hits.
FIELDS = (("id", 8.0, False), ("title", 3.0, False), ("authors", 3.0, False),
          ("categories", 2.0, False), ("topics", 2.0, False), ("venue", 2.0, False),
          ("abstract", 1.0, True), ("digest", 1.0, True))
# Pairs: each two words next to each other in the title or the abstract (PAIR_SKIP's words
# left out between them) are one more term, "a_b", weighted PAIR_WEIGHT a time it occurs: a
# quoted phrase requires them, and a query of several words ranks the papers that hold its
# words together higher. A pair of one paper only is left out (most are): a phrase of one
# paper is searched as its words. engine.js's PAIR_SKIP is the same list.
PAIRED = np.array([f in ("title", "abstract") for f, _, _ in FIELDS])
PAIR_WEIGHT = 1.0
PAIR_MIN_DF = 2
PAIR_SKIP = frozenset(("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in",
                       "into", "is", "it", "its", "of", "on", "or", "our", "that", "the",
                       "this", "to", "via", "we", "with"))
_WORD = re.compile(r"[0-9a-z]+")
VENUE_MIN = 2  # papers a venue needs to be in the filter's list (the search finds any)
VENUE_LIST = 80  # venues in the filter's list, most papers first
_VENUE_TAIL = re.compile(r"(?:\s(?:19|20)\d\d)?(?:\s(?:Workshop|Findings))?$")

_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[0-9]{{4}}\.[0-9]{{4,5}}|[0-9a-z\u0370-\u03ff\u0400-\u04ff]+|[{_CJK}]+")
# The same tokens as _TOKEN keeps for ASCII text: ids, words of 2+ characters, lone digits.
_ASCII_TOKEN = re.compile(r"[0-9]{4}\.[0-9]{4,5}|[0-9a-z]{2,}|[0-9]")
_CJK_RUN = re.compile(rf"[{_CJK}]")
_OTHER_SCRIPT = re.compile(rf"[\u0370-\u03ff\u0400-\u04ff{_CJK}]")  # Greek, Cyrillic, CJK
# For _cut: ASCII bytes lowered, and every byte no token holds made a space.
_RUNS = bytes(c + 32 if 65 <= c <= 90 else c if chr(c) in "0123456789abcdefghijklmnopqrstuvwxyz."
              else 32 for c in range(256))
# What splitting cut texts gives that tokens() leaves out: lone letters, and the empty
# strings Arrow's split gives at a text's ends and for a text with no token.
_NOT_TERMS = dict.fromkeys(["", *"abcdefghijklmnopqrstuvwxyz"], -1)
_ARXIV_ID = re.compile(r"[0-9]{4}\.[0-9]{4,5}")
MANIFEST = "search/manifest.json"


def normalise(text: str) -> str:
    """Case- and accent-insensitive form: NFKD, combining marks dropped, lower case."""
    return _MARKS.sub("", unicodedata.normalize("NFKD", text)).lower()


def tokens(text: str) -> list[str]:
    """Latin/Greek/Cyrillic words, arXiv ids whole, CJK runs as character bigrams."""
    if text.isascii():  # the common case: no script checks, the length rule in the regex
        return _ASCII_TOKEN.findall(text.lower())
    return _tokens_of_normalised(normalise(text))


def _tokens_of_normalised(text: str) -> list[str]:
    out: list[str] = []
    for tok in _TOKEN.findall(text):
        if _CJK_RUN.match(tok):
            out.extend([tok] if len(tok) == 1 else [tok[i:i + 2] for i in range(len(tok) - 1)])
        elif len(tok) > 1 or tok.isdigit():
            out.append(tok)
    return out


def _cut(text: str) -> str:
    """tokens(text) as one text, separated by spaces (at times a run of them, and at its
    ends), with lone letters kept: the index splits a batch's cut texts and numbers their
    tokens in Arrow, and drops what tokens() leaves out by number (_NOT_TERMS). Text in
    Latin letters, once normalised, is lowered and cut at every other character by one
    byte table, at C speed: findall tried its patterns at each character, 4x slower over
    the bench's texts. A dot stays only where an arXiv id may hold it: a sentence's goes by
    a replace, and the rest unless one has four digits on each side (then the pattern
    reads the cut text)."""
    if not text.isascii():
        text = normalise(text)
        if _OTHER_SCRIPT.search(text):
            return " ".join(_tokens_of_normalised(text))
    runs = text.encode("ascii", "replace").translate(_RUNS).decode().replace(". ", " ").rstrip(".")
    if "." not in runs:
        return runs
    if not _may_hold_id(runs):
        return runs.replace(".", " ")
    return " ".join(_ASCII_TOKEN.findall(runs))  # the id field, and the rare text that may hold one


def _may_hold_id(runs: str) -> bool:
    """Whether a dot has four digits before it and after it, as an arXiv id's has: a
    regex's search took 20 µs an abstract, and the few dots left are looked at here."""
    dot = runs.find(".")
    while dot >= 0:
        if runs[max(dot - 4, 0):dot].isdigit() and runs[dot + 1:dot + 5].isdigit():
            return True
        dot = runs.find(".", dot + 1)
    return False


def pairs(terms: Iterable[str]) -> list[str]:
    """The "a_b" terms of a text's tokens: neighbouring words (Latin letters and digits;
    PAIR_SKIP's words left out, so "chain of thought" gives "chain_thought")."""
    words = [t for t in terms if t not in PAIR_SKIP and _WORD.fullmatch(t)]
    return [f"{a}_{b}" for a, b in itertools.pairwise(words)]


def prefixes(term: str) -> Iterable[str]:
    """The prefixes a partly typed word may be: none for ids and numbers."""
    if _CJK_RUN.match(term):
        return [term[0]] if len(term) == 2 else []
    if term.isdigit() or _ARXIV_ID.fullmatch(term):
        return []
    return (term[:n] for n in range(PREFIX_MIN, min(len(term), PREFIX_MAX + 1)))


def fnv1a(term: str) -> int:
    """32-bit FNV-1a over UTF-8; search.js computes the same to find a term's shard."""
    h = 0x811C9DC5
    for byte in term.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def minutes(t: dt.datetime | None) -> int:
    return 0 if t is None else int(t.timestamp() // 60)


def stored(name: str, text: str) -> tuple[str, bytes]:
    """Where an index file is written, and its bytes: the term shards, doc chunks, facet
    blocks and similar lists gzipped (GitHub Pages' 1 GB counts stored bytes, and this
    JSON gzips to a third; search.js inflates it), the same text always to the same bytes."""
    if name.startswith(("search/t/", "search/d/", "search/f/", "search/s/")):
        return name + ".gz", gzipped(text.encode())
    return name, text.encode()


def dumps(value: object) -> str:
    """Compact, sorted, and `<` escaped so no JSON file carries markup-looking text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")
                      ).replace("<", "\\u003c") + "\n"


@dataclass
class Index:
    """Files of the index by path under the output folder, ready to write."""

    files: dict[str, str]
    shards: int
    terms: int
    categories: list[str]
    topics: list[str]
    key: str  # fingerprint(docs), made along the way


def _digest_text(p: Paper) -> str:
    return plain_tex(" ".join(v for v in (p.digest or {}).values() if v))


def venue_of(p: Paper) -> str | None:
    """The venue a filter groups a paper under: its badge without year, "Workshop" or
    "Findings" ("ECCV 2026 Workshop" → "ECCV"); none for a venue known by a DOI alone."""
    if p.venue is None or p.venue.source == "doi":
        return None
    return _VENUE_TAIL.sub("", p.venue.short) or p.venue.short


def venues(papers: Iterable[Paper]) -> list[str]:
    """The venue filter's list: venues of VENUE_MIN papers or more, most papers first."""
    counts = Counter(v for p in papers if (v := venue_of(p)))
    ranked = sorted(counts.items(), key=lambda x: (-x[1], x[0]))
    return [v for v, n in ranked if n >= VENUE_MIN][:VENUE_LIST]


TIERS = ("main", "findings", "workshop", "journal")  # best first: a venue query's order


def tier_of(p: Paper) -> str:
    """The kind of acceptance (main, findings, workshop, journal) or "": a conference no
    category counts among its best is still a main conference here."""
    if p.venue is None:
        return ""
    kind = venue_tier(p.venue, p.categories)
    return Tier.MAIN.value if kind is Tier.OTHER else kind.value


def _field_texts(p: Paper, topic_names: dict[str, str]) -> dict[str, str]:
    digest = _digest_text(p)
    topics = " ".join(f"{s} {topic_names.get(s, '')}" for s, _ in p.topics)
    venue = "" if p.venue is None or p.venue.source == "doi" else \
        f"{p.venue.short} {p.venue.name}"
    return {"id": p.arxiv_id, "title": plain_tex(p.title), "authors": " ".join(p.authors),
            "categories": " ".join(p.categories), "topics": topics, "venue": venue,
            "abstract": plain_tex(p.abstract_text, math=False), "digest": digest}


class _Column:
    """An array made batch by batch. Small arrays come from the C heap, which keeps the
    memory they free; every JOIN_ROWS rows the batches are joined into one array that is
    mapped on its own and given back when freed. So the heap holds one chunk's batches at
    a time where it held the whole index's (~450 MB at 200,000 papers)."""

    JOIN_ROWS = 1 << 24  # 64 MB of 32-bit values: past glibc's largest mmap threshold

    def __init__(self, dtype: type[np.generic]) -> None:
        self.dtype = dtype
        self.chunks: list[np.ndarray] = []
        self.batches: list[np.ndarray] = []
        self.rows = 0

    def append(self, batch: np.ndarray) -> None:
        self.batches.append(batch)
        self.rows += len(batch)
        if self.rows >= self.JOIN_ROWS:
            self.chunks.append(np.concatenate(self.batches))
            self.batches, self.rows = [], 0

    def array(self) -> np.ndarray:
        """The whole array; the column is left empty."""
        parts, self.chunks, self.batches, self.rows = self.chunks + self.batches, [], [], 0
        return np.concatenate(parts) if parts else np.zeros(0, self.dtype)


def _postings(docs: Sequence[Paper], key: Key
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                         np.ndarray]:
    """(terms, df, starts, doc, score, worded): postings sorted by term number, docs
    ascending within a term; term k's postings are doc[starts[k]:starts[k + 1]]; worded[k]:
    term k occurs outside author names. The docs' texts go into `key` in order."""
    n = len(docs)
    avg = {"abstract": sum(len(p.abstract_text) for p in docs) / max(n, 1) or 1.0,
           "digest": sum(len(_digest_text(p)) for p in docs) / max(n, 1) or 1.0}
    # Terms are numbered as they first come in the docs (_batch_postings).
    term_no: defaultdict[str, int] = defaultdict(itertools.count().__next__, _NOT_TERMS)
    # Per (doc, term): the doc, the term and the summed weight; per (doc, pair): the doc,
    # the pair (its words' numbers) and how often it occurs.
    doc_col, tno_col, w_col = _Column(np.uint32), _Column(np.uint32), _Column(np.float32)
    pdoc_col, pair_col, ptf_col = _Column(np.uint32), _Column(np.int64), _Column(np.float32)
    worded = np.zeros(0, dtype=bool)  # by term number: occurs outside author names
    for start in range(0, n, BATCH):
        found = _batch_postings(docs, range(start, min(n, start + BATCH)), key, avg, term_no)
        if found is None:
            continue
        for column, values in zip((doc_col, tno_col, w_col, pdoc_col, pair_col, ptf_col),
                                  (*found[:3], *found[4:]), strict=True):
            column.append(values)
        if len(worded) < len(term_no):  # at least doubled: O(terms) in all
            worded = np.concatenate((worded, np.zeros(max(len(worded), len(term_no)), bool)))
        worded[found[3]] = True
    words = list(term_no)[len(_NOT_TERMS):]  # in the order of their numbers
    pair_terms, pair_doc, pair_no, pair_w = _kept_pairs(
        words, pdoc_col.array(), pair_col.array(), ptf_col.array())
    terms = words + pair_terms
    # 32-bit columns: at 200k papers there are ~35M postings.
    df, doc, score = _in_term_order(n, len(terms), np.concatenate((doc_col.array(), pair_doc)),
                                    np.concatenate((tno_col.array(), pair_no)),
                                    np.concatenate((w_col.array(), pair_w)))
    worded = np.concatenate((worded[:len(words)], np.ones(len(pair_terms), dtype=bool)))
    return (np.array(terms, dtype=object), df, np.concatenate(([0], np.cumsum(df))), doc,
            score, worded)


def _kept_pairs(words: list[str], doc: np.ndarray, pair: np.ndarray, tf: np.ndarray
                ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of PAIR_MIN_DF papers or more as terms numbered after the words: their
    names ("a_b"), and per (doc, pair) the doc, the pair's term number and its weight."""
    kinds, which, papers = np.unique(pair, return_inverse=True, return_counts=True)
    kept = papers >= PAIR_MIN_DF
    number = np.cumsum(kept) - 1 + len(words)  # by kind, for the kept ones
    rows = kept[which]
    names = [f"{words[k >> 32]}_{words[k & 0xFFFFFFFF]}" for k in kinds[kept].tolist()]
    return (names, doc[rows], number[which[rows]].astype(np.uint32),
            tf[rows] * np.float32(PAIR_WEIGHT))


_OUTSIDE_NAMES = np.array([field != "authors" for field, _, _ in FIELDS])


def _batch_postings(docs: Sequence[Paper], batch: range, key: Key, avg: dict[str, float],
                    term_no: defaultdict[str, int]
                    ) -> tuple[np.ndarray, ...] | None:
    """One batch's (doc, term number, summed weight) per (doc, term), the numbers of its
    terms found outside author names, and its (doc, pair, times) per (doc, pair) (_pairs);
    None when it has no term.

    Each (doc, field)'s text is cut (_cut), then split and its tokens numbered in Arrow,
    with no Python string a token: a batch's distinct tokens are numbered in the order they
    first come (dictionary_encode's order), new ones drawing the next number of `term_no`.
    Per (doc, field) run of tokens, the field's weight and whether it is outside the author
    names: numpy repeats those over each run and sums per (doc, term). What tokens() leaves
    out (_NOT_TERMS, -1) is dropped by numpy. At 200,000 papers (51 million tokens) a
    Python string and a dict lookup a token took this 49–52 s, Arrow 26–33 s."""
    cuts: list[str] = []
    r_w: list[float] = []
    for i in batch:
        texts = _field_texts(docs[i], key.topic_names)
        key.text(texts)
        for field, weight, norm in FIELDS:
            cuts.append(_cut(texts[field]))
            r_w.append(weight / (1 - B + B * len(texts[field]) / avg[field]) if norm
                       else weight)
    # 64-bit offsets: a batch of untrusted texts may pass 2 GB
    split = pc.ascii_split_whitespace(pa.array(cuts, pa.large_string()))
    counts = pc.list_value_length(split).to_numpy()
    tokens_of_batch = split.flatten().dictionary_encode()
    distinct = cast("list[str]", tokens_of_batch.dictionary.to_pylist())  # no nulls
    numbers = np.fromiter(map(term_no.__getitem__, distinct), dtype=np.int64,
                          count=len(distinct))[tokens_of_batch.indices.to_numpy()]
    kept = numbers >= 0
    if not kept.any():
        return None
    r_doc = np.repeat(np.array(batch, dtype=np.int64), len(FIELDS))
    pairs = (np.repeat(r_doc, counts) << 32 | numbers)[kept]
    uniq, inverse = np.unique(pairs, return_inverse=True)  # (doc, term)
    tno = (uniq & 0xFFFFFFFF).astype(np.uint32)
    weights = np.bincount(inverse, weights=np.repeat(r_w, counts)[kept]).astype(np.float32)
    outside = np.bincount(inverse, weights=np.repeat(np.tile(_OUTSIDE_NAMES, len(batch)),
                                                     counts)[kept]) > 0
    pairable = np.fromiter((t not in PAIR_SKIP and _WORD.fullmatch(t) is not None
                            for t in distinct), dtype=bool, count=len(distinct))
    return ((uniq >> 32).astype(np.uint32), tno, weights, tno[outside],
            *_pairs(r_doc, counts, numbers, kept & pairable[tokens_of_batch.indices.to_numpy()]))


def _pairs(r_doc: np.ndarray, counts: np.ndarray, numbers: np.ndarray, pairable: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (doc, pair) of a batch: the doc, the pair (the two words' numbers, the first in
    the high 32 bits) and how often it occurs. A pair is two pairable tokens (words, not
    PAIR_SKIP's) of the same title or abstract with none but unpairable ones between them:
    as pairs(tokens(text)) gives, in numpy."""
    run = np.repeat(np.arange(len(counts)), counts)  # (doc, field) runs, fields in FIELDS order
    at = np.flatnonzero(pairable & PAIRED[run % len(FIELDS)])
    first, second = at[:-1], at[1:]
    same = run[first] == run[second]
    first, second = first[same], second[same]
    if not first.size:
        return np.zeros(0, np.uint32), np.zeros(0, np.int64), np.zeros(0, np.float32)
    kinds, kind = np.unique(numbers[first] << 32 | numbers[second], return_inverse=True)
    doc = r_doc[run[first]]
    # one int64 per (doc, pair): a batch's docs and distinct pairs each fit in 32 bits
    both, times = np.unique((doc - doc[0]) << 32 | kind, return_counts=True)
    return ((both >> 32) + doc[0]).astype(np.uint32), kinds[both & 0xFFFFFFFF], \
        times.astype(np.float32)


def _in_term_order(n: int, terms: int, doc_all: np.ndarray, tno_all: np.ndarray,
                   w_all: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(df, doc, score): each term's document count, and the postings' docs and BM25
    scores (× 100, integers ≥ 1) sorted by term number, docs ascending within a term."""
    df = np.bincount(tno_all, minlength=terms)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    # BM25's 100 * idf * w * (K1 + 1) / (w + K1), in place and before the sort, then each
    # column put in term order alone: at 200,000 papers a column is 140 MB, and three
    # gathered beside their sources and the order were the build's peak of memory.
    scaled = idf[tno_all]
    scaled *= 100
    scaled *= w_all
    scaled *= K1 + 1
    w_all += K1
    scaled /= w_all
    del w_all
    score = np.maximum(1, np.rint(scaled, out=scaled), out=scaled).astype(np.int32)
    del scaled
    order = np.argsort(tno_all, kind="stable")  # docs stay ascending within a term
    del tno_all
    doc = doc_all[order]
    del doc_all
    score = score[order]
    del order
    return df, doc, score


def build_index(papers: Sequence[Paper], now: dt.datetime,
                topic_names: dict[str, str] | None = None) -> Index:
    """Every file of the index, deterministic: unchanged papers → unchanged bytes."""
    # Oldest first, so new papers append doc numbers and old chunks keep their bytes.
    docs = sorted(papers, key=lambda p: (p.first_seen, p.arxiv_id))
    key = Key(topic_names or {})
    spans, flat, names_only = _spans(docs, key)
    files, shards = _shards(spans, flat, names_only)
    cats = sorted({c for p in docs for c in p.categories})
    topics = sorted({s for p in docs for s, _ in p.topics})
    venue_list = venues(docs)
    files.update(_doc_files(docs, cats, topics, venue_list, key))
    similar, similar_shards = _similar_files(docs)
    files.update(similar)
    files[MANIFEST] = dumps({
        "v": VERSION, "as_of": minutes(now), "docs": len(docs), "shards": shards,
        "chunk": CHUNK, "facet_block": FACET_BLOCK, "categories": cats, "topics": topics,
        "venues": venue_list, "cap_df": CAP_DF, "fields": SCHEMA, "similar_shards": similar_shards})
    return Index(files, shards, len(spans), cats, topics, key.hexdigest())


# A term's postings: a span [a, e) of the flat (gap, score) array, or its capped list.
Span = tuple[int, list[int] | None, int, int]  # (df, capped postings or None, a, e)


def _spans(docs: Sequence[Paper], key: Key
           ) -> tuple[dict[str, Span], np.ndarray, set[str]]:
    """Terms in order, each with its postings as a span of one flat array, so only one
    shard's worth of Python lists exists at a time; and the terms found only in author
    names."""
    terms, df, starts, doc, score, worded = _postings(docs, key)
    doc = doc.view(np.int32)  # doc numbers stay far below 2**31
    # (gap, score) pairs, the gaps made in place (140 MB a column at 200,000 papers)
    flat = np.empty(2 * len(doc), dtype=np.int32)
    gaps = flat[0::2]
    gaps[:1] = doc[:1]
    np.subtract(doc[1:], doc[:-1], out=gaps[1:])
    firsts = starts[:-1][df > 0]
    gaps[firsts] = doc[firsts]  # each list starts from doc 0
    flat[1::2] = score
    del gaps, firsts
    spans: dict[str, Span] = {}
    for k in np.argsort(terms.astype(str), kind="stable"):
        t, a, b, count = str(terms[k]), int(starts[k]), int(starts[k + 1]), int(df[k])
        if count > CAP_DF:  # best scores, ties to the older doc, then back in doc order
            d, sc = doc[a:b], score[a:b]
            keep = np.sort(np.lexsort((d, -sc))[:CAP_K])
            d, sc = d[keep], sc[keep]
            cf = np.empty(2 * len(d), dtype=np.int64)
            cf[0::2], cf[1::2] = np.diff(d, prepend=0), sc
            spans[t] = (count, cf.tolist(), 0, 0)
        else:
            spans[t] = (count, None, 2 * a, 2 * b)
    return spans, flat, {str(t) for t in terms[~worded]}


def _shards(spans: dict[str, Span], flat: np.ndarray, names_only: set[str]
            ) -> tuple[dict[str, str], int]:
    """The term shards (terms and prefix expansions by hash) and how many there are. A
    word found only in author names completes no prefix: "VLA" being typed finds VLA
    papers, not Vladislav's (an author is matched whole, or by `au:`)."""
    expansions: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for t, (count, *_) in spans.items():
        if t in names_only or "_" in t:  # a pair is no word being typed
            continue
        for pre in prefixes(t):
            expansions[pre].append((-count, t))
    prefix_map = {pre: [t for _, t in sorted(c)[:PREFIX_KEEP]] for pre, c in expansions.items()}
    del expansions
    size = sum(len(t) + 8 + 3 * (len(c) if c else e - a) for t, (_, c, a, e) in spans.items()
               ) + sum(len(p) + 12 * len(v) for p, v in prefix_map.items())
    shards = _shard_count(size)
    shard_t: list[list[str]] = [[] for _ in range(shards)]
    shard_p: list[dict[str, list[str]]] = [{} for _ in range(shards)]
    for t in spans:
        shard_t[fnv1a(t) % shards].append(t)
    for pre, v in prefix_map.items():
        shard_p[fnv1a(pre) % shards][pre] = v

    def entry(t: str) -> list[object]:  # in SCHEMA["term"] order
        count, capped, a, e = spans[t]
        return [count, 1, capped] if capped is not None else [count, 0, flat[a:e].tolist()]

    return {f"search/t/{k}.json": dumps({"prefixes": shard_p[k],
                                         "terms": {t: entry(t) for t in shard_t[k]}})
            for k in range(shards)}, shards


def _shard_count(size: int) -> int:
    """Shards for `size` raw bytes: a power of two, so each averages ≤ SHARD_TARGET and the
    count only changes when the data doubles."""
    return 1 << max(0, math.ceil(math.log2(max(1, size / SHARD_TARGET))))


def _doc_files(docs: Sequence[Paper], cats: list[str], topics: list[str],
               venue_list: list[str], key: Key) -> dict[str, str]:
    """Doc chunks, facet blocks and recent.json, each record in SCHEMA's order; the docs'
    records go into `key` in order."""
    cat_ix = {c: i for i, c in enumerate(cats)}
    topic_ix = {s: i for i, s in enumerate(topics)}
    venue_ix = {v: i for i, v in enumerate(venue_list)}
    files: dict[str, str] = {}
    for start in range(0, len(docs), CHUNK):
        chunk = docs[start:start + CHUNK]
        records = [_doc(p) for p in chunk]
        for record, p in zip(records, chunk, strict=True):
            key.doc(record, p)
        files[f"search/d/{start // CHUNK}.json"] = dumps(records)
    facets: dict[str, Callable[[Paper], object]] = {
        "categories": lambda p: [cat_ix[c] for c in p.categories], "flags": _flags,
        "topics": lambda p: [topic_ix[s] for s, _ in p.topics],
        "venue": lambda p: venue_ix.get(venue_of(p) or "", -1),
        **{clock: _clock(clock) for clock in CLOCKS}}
    for start in range(0, len(docs), FACET_BLOCK):
        block = docs[start:start + FACET_BLOCK]
        files[f"search/f/{start // FACET_BLOCK}.json"] = dumps(
            {name: [facets[name](p) for p in block] for name in SCHEMA["facet"]})
    newest = range(len(docs) - 1, max(len(docs) - RECENT, 0) - 1, -1)  # in first_seen order
    files["search/recent.json"] = dumps([[i, *(f(docs[i]) for f in _RECENT.values())]
                                         for i in newest])
    return files


def _similar_files(docs: Sequence[Paper]) -> tuple[dict[str, str], int]:
    """Each paper's similar papers, by the hash of its id as term shards are: its own doc
    number, then theirs, most similar first. So 更多类似 works from every result, whether
    the paper has a page or not, and loads one small file for the list."""
    number = {p.arxiv_id: i for i, p in enumerate(docs)}
    lists = {p.arxiv_id: [number[p.arxiv_id], *(number[n] for n in p.similar if n in number)]
             for p in docs if p.similar}
    if not lists:
        return {}, 0
    size = sum(len(i) + 4 + 7 * len(v) for i, v in lists.items())
    shards = _shard_count(size)
    parts: list[dict[str, list[int]]] = [{} for _ in range(shards)]
    for arxiv_id, numbers in lists.items():
        parts[fnv1a(arxiv_id) % shards][arxiv_id] = numbers
    return {f"search/s/{k}.json": dumps(part) for k, part in enumerate(parts)}, shards


def _clock(name: str) -> Callable[[Paper], int]:
    return lambda p: minutes(getattr(p, name))


def _flags(p: Paper) -> int:
    """Bit i set when SCHEMA["flag"][i] holds."""
    return sum(1 << i for i, test in enumerate(_FLAGS.values()) if test(p))


def _doc(p: Paper) -> list[object]:
    return [f(p) for f in _DOC.values()]


# The records the index holds, by field: declared once here, named in the manifest
# ("fields"), read by name in search.js and follow.js.
_DOC: dict[str, Callable[[Paper], object]] = {
    "id": lambda p: p.arxiv_id, "title": lambda p: plain_tex(p.title),
    "authors": lambda p: p.authors[:12], "n_authors": lambda p: len(p.authors),
    "categories": lambda p: p.categories, "topics": lambda p: [s for s, _ in p.topics],
    "flags": _flags, **{clock: _clock(clock) for clock in CLOCKS},
    "version": lambda p: p.version,
    "tldr": lambda p: excerpt(plain_tex((p.digest or {}).get("tldr") or ""), TLDR_CHARS),
    "venue": lambda p: p.venue.short if p.venue else "",  # the badge: "ICML 2026", "DOI"
    "tier": lambda p: tier_of(p),
}
_RECENT: dict[str, Callable[[Paper], object]] = {  # after "doc", the doc's number
    "id": lambda p: p.arxiv_id, "first_seen": _clock("first_seen"),
    "authors": lambda p: [normalise(a) for a in p.authors], "categories": lambda p: p.categories,
    "topics": lambda p: [s for s, _ in p.topics],
}
def _picked(p: Paper, day: str) -> bool:
    return p.sourced.get(day) is not None


# "page": the paper may have a page; it has one from the manifest's pages_from on (the
# oldest page [site] max_site_mb keeps), so the index need not change when that moves.
_FLAGS: dict[str, Callable[[Paper], bool]] = {
    "ai": lambda p: p.ai_related, "revised": lambda p: p.version > 1,
    # each source's picks, by its name (`Source.picks`: "hf", Hugging Face's)
    **{name: functools.partial(_picked, day=chosen.day) for name, chosen in picks().items()},
    "page": lambda p: p.pageable,
    "venue": lambda p: p.venue is not None,
}
SCHEMA = {"doc": list(_DOC), "recent": ["doc", *_RECENT], "flag": list(_FLAGS),
          "facet": ["categories", "topics", "flags", "venue", *CLOCKS],
          "term": ["df", "capped", "postings"]}


class Key:
    """The index's key over everything it is made of, in index order: what each doc is
    searched by, what it shows and its similar papers, the topic names and this module's
    code and constants. Fields the index leaves out (HF upvotes, comments, …) change often
    and leave the key alone. Made on its own (fingerprint) or by build_index as it goes,
    from the texts and records it makes anyway: the same key either way."""

    def __init__(self, topic_names: dict[str, str]) -> None:
        self.topic_names = topic_names
        self.texts = hashlib.blake2b(digest_size=16)
        self.docs = hashlib.blake2b(digest_size=16)

    def text(self, texts: dict[str, str]) -> None:
        """A doc's texts (_field_texts, always the same fields in the same order), each
        after its length: repr() of them took 3 s of the index's 50 at 200,000 papers."""
        self.texts.update("".join(f"{len(t)}:{t}" for t in texts.values()).encode(
            "utf-8", "surrogatepass"))

    def doc(self, record: list[object], p: Paper) -> None:
        self.docs.update(repr((record, p.similar)).encode())

    def hexdigest(self) -> str:
        h = hashlib.blake2b(Path(__file__).read_bytes(), digest_size=16)
        h.update(repr(sorted(self.topic_names.items())).encode())
        h.update(self.texts.digest())
        h.update(self.docs.digest())
        return h.hexdigest()


def fingerprint(docs: Sequence[Paper], topic_names: dict[str, str]) -> str:
    """The Key of the index build_index would make of `docs` (in index order)."""
    key = Key(topic_names)
    for p in docs:
        key.text(_field_texts(p, topic_names))
    for p in docs:
        key.doc(_doc(p), p)
    return key.hexdigest()
