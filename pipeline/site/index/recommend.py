"""为你推荐's data: the recent papers as small vectors that the reader's browser ranks
against the reader's own seeds (theme/static/foryou.js); nothing of the reader reaches
the site.

Each paper first seen in the last `[site] recommend_days` days: TF-IDF over its title
and abstract (the search index's tokens, English stop words left out), reduced by a
truncated SVD to DIMS numbers and stored as int8, each row scaled so its largest number
is ±127 (the browser takes the cosine, so a row's scale costs nothing); its TERMS
heaviest words, to say why it was ranked; and the hash of its normalised title, to match
an imported entry that names no id. The VOCAB words the most papers use carry their own
SVD row, so the browser places any text in the same space: an imported entry, a saved
paper older than the window, a followed query. docs/RECOMMEND.md has the format.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer
from sklearn.utils.extmath import randomized_svd

from pipeline.site.index.search import fnv1a, tokens
from pipeline.site.render.tex import plain_tex
from pipeline.site.writer import gzipped

VERSION = 1
DIMS = 48  # 14 days of all cs.* (~17,000 papers) fit ≤ 1.5 MB gzip with the rest
TERMS = 8  # words kept per paper for "why"
VOCAB = 8192  # words with an SVD row of their own, the most used first
MIN_DF = 2  # a word of one paper says nothing about another
MAX_DF = 0.5  # nor does one that half the papers use
NO_TERM = 0xFFFF
META = "recommend/meta.json.gz"
VECTORS = "recommend/vectors.bin.gz"


@dataclass(frozen=True)
class Doc:
    arxiv_id: str
    title: str
    abstract: str
    doi: str | None = None


@dataclass(frozen=True)
class Window:
    """The window's papers, in the search index's order (oldest first seen first)."""

    ids: list[str]
    vectors: np.ndarray  # int8, a row per paper
    terms: np.ndarray  # uint16, TERMS per paper: indices into vocab, NO_TERM when fewer
    title_keys: np.ndarray  # uint32: title_key of each title
    vocab: list[str]
    term_vectors: np.ndarray  # int8, a row per word of vocab
    weights: np.ndarray  # float32: each word's IDF × its row's scale (vector = q × weight)
    dois: dict[int, str]  # row → DOI, lower case, for the papers that have one


def words(text: str) -> list[str]:
    """A text's words as the vectors count them; foryou.js does the same."""
    return [t for t in tokens(text) if t not in ENGLISH_STOP_WORDS]


def title_key(title: str) -> int:
    """The 32-bit hash of a title's words: foryou.js matches an imported title by it."""
    return fnv1a(" ".join(tokens(plain_tex(title))))


def build(docs: Sequence[Doc], dims: int = DIMS) -> Window:
    """The window's vectors: the same docs make the same bytes (the SVD's seed is fixed)."""
    n = len(docs)
    texts = [f"{plain_tex(d.title)}\n{plain_tex(d.abstract, math=False)}" for d in docs]
    # In float64: the golden site is compared byte for byte, and another machine's BLAS
    # sums in another order; at float32 that would move some int8 roundings.
    vectorizer = TfidfVectorizer(analyzer=words, sublinear_tf=True, dtype=np.float64,
                                 min_df=MIN_DF if n > 2 else 1, max_df=MAX_DF if n > 4 else 1.0)
    try:
        matrix = sp.csr_matrix(vectorizer.fit_transform(texts))
        names = vectorizer.get_feature_names_out()
    except ValueError:  # no word left: an empty or wordless window
        matrix, names = sp.csr_matrix((n, 0)), np.array([], dtype=object)
    k = max(0, min(dims, n - 1, len(names) - 1))
    if k:
        u, s, vt = randomized_svd(matrix, k, random_state=0)
        rows, components = u * s, vt
    else:
        rows, components = np.zeros((n, 0)), np.zeros((0, len(names)))
    df = np.bincount(matrix.indices, minlength=len(names))
    keep = np.sort(np.lexsort((np.arange(len(names)), -df))[:VOCAB])  # most used words
    column = np.full(len(names), NO_TERM, np.int64)
    column[keep] = np.arange(len(keep))
    scale = np.abs(components[:, keep]).max(axis=0, initial=0.0)
    idf = vectorizer.idf_[keep] if len(names) else np.zeros(0)
    return Window(
        ids=[d.arxiv_id for d in docs], vectors=_int8_rows(rows),
        terms=_top_terms(matrix, column), title_keys=np.array(
            [title_key(d.title) for d in docs], np.uint32),
        vocab=[str(w) for w in names[keep]], term_vectors=_int8_rows(components[:, keep].T),
        weights=(idf * scale / 127).astype(np.float32),
        dois={i: d.doi.strip().lower() for i, d in enumerate(docs) if d.doi and d.doi.strip()})


def _int8_rows(rows: np.ndarray) -> np.ndarray:
    """Each row scaled so its largest number is ±127, rounded; a zero row stays zero."""
    peak = np.abs(rows).max(axis=1, initial=0.0, keepdims=True)
    return np.rint(rows * (127 / np.where(peak > 0, peak, 1))).astype(np.int8)


def _top_terms(matrix: sp.csr_matrix, column: np.ndarray) -> np.ndarray:
    """Each row's TERMS heaviest words that are in the vocabulary, heaviest first."""
    out = np.full((matrix.shape[0], TERMS), NO_TERM, np.uint16)
    for i in range(matrix.shape[0]):
        lo, hi = matrix.indptr[i], matrix.indptr[i + 1]
        cols, values = column[matrix.indices[lo:hi]], matrix.data[lo:hi]
        inside = cols != NO_TERM
        cols, values = cols[inside], values[inside]
        best = np.lexsort((cols, -values))[:TERMS]
        out[i, :len(best)] = cols[best]
    return out


def files(window: Window, first_doc: int, as_of: int, days: int) -> dict[str, bytes]:
    """The two files foryou.js loads, gzipped (the same window, the same bytes).
    vectors.bin: title keys (uint32), terms (uint16), vectors, then the words' vectors
    (int8), each little-endian and row by row; meta.json says the shapes."""
    n, dims = window.vectors.shape
    meta = {"v": VERSION, "as_of": as_of, "days": days, "count": n, "dims": dims,
            "terms": TERMS, "first_doc": first_doc, "ids": window.ids,
            "vocab": window.vocab, "weights": [_short(w) for w in window.weights.tolist()],
            "doi": {str(i): d for i, d in sorted(window.dois.items())}}
    blob = b"".join([window.title_keys.astype("<u4").tobytes(),
                     window.terms.astype("<u2").tobytes(), window.vectors.tobytes(),
                     window.term_vectors.tobytes()])
    text = json.dumps(meta, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return {META: gzipped(text.replace("<", "\\u003c").encode()), VECTORS: gzipped(blob)}


def _short(x: float) -> float:
    """Four significant digits: the int8 rows hold no more."""
    return float(f"{x:.4g}") if x and math.isfinite(x) else 0.0


# -- the browser's ranking, mirrored for the benchmark and the tests ------------------------

def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.float32)
    norm = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norm > 0, norm, 1)


def embed(window: Window, text: str) -> np.ndarray:
    """A text's vector as foryou.js makes it: each vocabulary word's row × (1 + log count) ×
    its weight, summed. Words outside the vocabulary are left out."""
    at = {w: i for i, w in enumerate(window.vocab)}
    counts: dict[int, int] = {}
    for w in words(text):
        if w in at:
            counts[at[w]] = counts.get(at[w], 0) + 1
    out = np.zeros(window.term_vectors.shape[1], np.float32)
    for i, c in counts.items():
        out += window.term_vectors[i].astype(np.float32) * (1 + math.log(c)) * window.weights[i]
    return out


def score(window: Window, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each paper's score against the seeds (rows of any scale) and its closest seed:
    half its cosine with the seeds' centroid (what the profile is about), half with its
    closest seed (one seed's narrow interest is not averaged away)."""
    papers, s = unit(window.vectors), unit(seeds)
    sims = papers @ s.T
    centroid = unit(s.mean(axis=0))
    return 0.5 * (papers @ centroid) + 0.5 * sims.max(axis=1), sims.argmax(axis=1)


def rank(window: Window, seeds: np.ndarray) -> list[int]:
    """Rows best first, ties to the newer (foryou.js leaves out the seeds' own rows)."""
    scores, _ = score(window, seeds)
    return [int(i) for i in np.lexsort((-np.arange(len(scores)), -np.round(scores, 6)))]
