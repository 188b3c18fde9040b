"""Papers' nearest neighbours by their words: TF-IDF cosine over title and abstract.

A paper's vector: every word and word pair of its title and abstract (English stop words
left out), hashed into 2^24 columns (no vocabulary to fit or keep, and the same text
always lands in the same columns; at 2^20 two rare word pairs sharing a column made one
sample pair in a hundred score 0.005 off a vocabulary's cosine, at 2^24 one in ten
thousand), weighted 1 + log(count) times the word's IDF in the
library, scaled to length 1, so a dot product is a cosine.

The exact product of every pair costs the sum over words of (papers using it)^2: at
200,000 papers ~35 minutes here, nearly all of it in the few hundred words most papers
use ("model", "learning", "language models"), which weigh least. So a search takes two
steps: candidates by the product over the words at most COMMON of the papers use, then
the exact cosine (every word) of each paper's CANDIDATES best; the best k of those win.
docs/SIMILAR.md has what that costs and finds.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

# sklearn is imported where vectors are made, not here: it takes ~2 s to import, and every
# reader of similar lists (the site's pages) would pay it.
if TYPE_CHECKING:
    from sklearn.feature_extraction.text import HashingVectorizer

COMMON = 0.02  # words in more of the papers than this do not propose candidates
CANDIDATES = 64  # per paper, scored exactly
BLOCK = 500  # papers per product: ~250 MB at 200,000 papers
DENSE = 256  # papers per product of embeddings: 200 MB at 200,000 papers
PAIRS = 20_000  # random pairs whose cosines set each measure's z-score
BITS = 24
# Names how lists are found: a list found otherwise is found again.
METHOD = f"tfidf/2^{BITS}/{COMMON}/{CANDIDATES}"

_FORKED: Any = None  # what forked workers inherit instead of having it pickled


@dataclass(frozen=True)
class Scored:
    """Candidate pairs with their exact cosine, by query then best first (ties by row)."""

    query: np.ndarray  # row of the paper asked about
    row: np.ndarray  # row of its candidate
    score: np.ndarray  # float32

    def best(self, k: int) -> Scored:
        """The first k pairs of each query."""
        starts = np.flatnonzero(np.r_[True, self.query[1:] != self.query[:-1]])
        rank = np.arange(len(self.query)) - np.repeat(starts, np.diff(np.r_[starts,
                                                                              len(self.query)]))
        keep = rank < k
        return Scored(self.query[keep], self.row[keep], self.score[keep])


def vectors(texts: Sequence[str], jobs: int = 1) -> sp.csr_matrix:
    """One row per text, as the module's docstring says."""
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

    hasher = HashingVectorizer(n_features=2**BITS, ngram_range=(1, 2), stop_words="english",
                               alternate_sign=False, norm=None, dtype=np.float32)
    step = -(-len(texts) // max(jobs, 1)) or 1
    parts = _map(_hash, [(a, a + step) for a in range(0, len(texts), step)], (hasher, texts),
                 jobs)
    counts = sp.vstack(parts or [sp.csr_matrix((0, hasher.n_features), dtype=np.float32)],
                       format="csr", dtype=np.float32)
    del parts
    weighted = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
    return sp.csr_matrix(weighted.astype(np.float32, copy=False))


def nearest(matrix: sp.csr_matrix, queries: np.ndarray, jobs: int = 1) -> Scored:
    """Each query row's CANDIDATES (itself excluded), scored exactly, best first."""
    common = np.bincount(matrix.indices, minlength=matrix.shape[1]) > max(
        COMMON * matrix.shape[0], 1)
    shared = (matrix, common, sp.csr_matrix(_rare(matrix, common).T),
              np.asarray(queries, np.int32))
    spans = [(a, a + BLOCK) for a in range(0, len(queries), BLOCK)]
    return _scored(_map(_candidates, spans, shared, jobs))


def nearest_dense(vectors: np.ndarray, queries: np.ndarray, jobs: int = 1) -> Scored:
    """As `nearest`, for unit-length rows (embeddings): every pair scored exactly, DENSE
    query rows at a time (200,000 × 256 dimensions: ~1e13 multiply-adds for all of them)."""
    shared = (vectors, np.asarray(queries, np.int32))
    spans = [(a, a + DENSE) for a in range(0, len(queries), DENSE)]
    return _scored(_map(_dense, spans, shared, jobs))


def nearest_fused(matrix: sp.csr_matrix, vectors: np.ndarray, queries: np.ndarray,
                  jobs: int = 1) -> Scored:
    """As `nearest`, by words and embeddings together: each query's candidates by either,
    scored by the sum of the two cosines, each as a z-score over the library's pairs (what
    the words find and what the model finds differ by interest: docs/RECOMMEND.md)."""
    words, meaning = nearest(matrix, queries, jobs), nearest_dense(vectors, queries, jobs)
    pair = np.unique(np.concatenate([
        words.query.astype(np.int64) * len(vectors) + words.row,
        meaning.query.astype(np.int64) * len(vectors) + meaning.row]))
    query, row = (pair // len(vectors)).astype(np.int32), (pair % len(vectors)).astype(np.int32)
    by_words, by_meaning = _cosines(matrix, vectors, query, row)
    rng = np.random.default_rng(0)  # the same library gives the same lists
    sample = rng.integers(0, len(vectors), (2, min(PAIRS, len(vectors) ** 2)))
    base_words, base_meaning = _cosines(matrix, vectors, sample[0], sample[1])
    score = ((by_words - base_words.mean()) / (base_words.std() or 1)
             + (by_meaning - base_meaning.mean()) / (base_meaning.std() or 1))
    return _scored([(query, row, score.astype(np.float32))])


def _cosines(matrix: sp.csr_matrix, vectors: np.ndarray, query: np.ndarray, row: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's cosine by words and by embeddings, DENSE × 256 pairs at a time."""
    step = DENSE * 256
    words, meaning = [], []
    for a in range(0, len(query), step):
        q, r = query[a:a + step], row[a:a + step]
        words.append(np.asarray(matrix[q].multiply(matrix[r]).sum(axis=1), np.float32).ravel())
        meaning.append(np.einsum("ij,ij->i", vectors[q], vectors[r]))
    empty = np.empty(0, np.float32)
    return (np.concatenate(words) if words else empty,
            np.concatenate(meaning) if meaning else empty)


def _scored(parts: list[tuple[np.ndarray, ...]]) -> Scored:
    query, row, score = (np.concatenate([p[i] for p in parts]) if parts else
                         np.empty(0, t) for i, t in enumerate((np.int32, np.int32,
                                                               np.float32)))
    order = np.lexsort((row, -score, query))
    return Scored(query[order], row[order], score[order])


def _rare(matrix: sp.csr_matrix, common: np.ndarray) -> sp.csr_matrix:
    """The rows without their common words."""
    rare = matrix.copy()
    rare.data[common[rare.indices]] = 0
    rare.eliminate_zeros()
    return rare


def _hash(shared: tuple[HashingVectorizer, Sequence[str]], a: int, b: int) -> sp.csr_matrix:
    hasher, texts = shared
    return hasher.transform(texts[a:b])


def _candidates(shared: tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix, np.ndarray], a: int,
                b: int) -> tuple[np.ndarray, ...]:
    matrix, common, transposed, queries = shared
    rows = queries[a:b]
    product = sp.csr_matrix(_rare(matrix[rows], common) @ transposed)
    query, row = [], []
    for i, asked in enumerate(rows):
        lo, hi = product.indptr[i], product.indptr[i + 1]
        found, value = product.indices[lo:hi], product.data[lo:hi]
        other = found != asked
        found, value = found[other], value[other]
        if len(found) > CANDIDATES:
            found = found[np.argpartition(-value, CANDIDATES)[:CANDIDATES]]
        query.append(np.full(len(found), asked, np.int32))
        row.append(found.astype(np.int32))
    q = np.concatenate(query) if query else np.empty(0, np.int32)
    r = np.concatenate(row) if row else np.empty(0, np.int32)
    exact = np.asarray(matrix[q].multiply(matrix[r]).sum(axis=1), np.float32).ravel()
    return q, r, exact


def _dense(shared: tuple[np.ndarray, np.ndarray], a: int, b: int) -> tuple[np.ndarray, ...]:
    vectors, queries = shared
    rows = queries[a:b]
    product = vectors[rows] @ vectors.T
    product[np.arange(len(rows)), rows] = -np.inf  # not itself
    k = min(CANDIDATES, len(vectors) - 1)
    if k <= 0:
        return np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.float32)
    top = np.argpartition(-product, k - 1, axis=1)[:, :k]
    score = np.take_along_axis(product, top, axis=1)
    return (np.repeat(rows, k).astype(np.int32), top.ravel().astype(np.int32),
            score.ravel().astype(np.float32))


def _map(fn: Callable[..., Any], spans: list[tuple[int, int]], shared: Any, jobs: int
         ) -> list[Any]:
    """fn(shared, a, b) for each span, in forked workers that inherit `shared`."""
    if jobs <= 1 or len(spans) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(shared, a, b) for a, b in spans]
    global _FORKED
    _FORKED = (fn, shared)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(spans))) as pool:
            return pool.starmap(_run, spans, chunksize=1)
    finally:
        _FORKED = None


def _run(a: int, b: int) -> Any:
    fn, shared = _FORKED
    return fn(shared, a, b)
