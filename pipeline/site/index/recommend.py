"""为你推荐's data: the recent papers as what the reader's browser ranks them by against
the reader's own seeds (theme/static/foryou.js); nothing of the reader reaches the site.

Each paper first seen in the last `[site] recommend_days` days carries two measures, which
the browser fuses (docs/RECOMMEND.md has why and what each finds):
- meaning: its embedding by the configured model (`[similar] encoder` or
  `embeddings_model`), reduced by PCA to DIMS numbers; without embeddings for every
  paper, its TF-IDF reduced by a truncated SVD instead ("words"). Stored as int8, each row
  scaled so its largest number is ±127 (the browser takes the cosine).
- words: its TERMS heaviest words (TF-IDF over the search index's tokens, English stop
  words out), with their weights in LEVELS steps; rare ones are kept, not averaged away.
  Stored in the order of their indices, each as the step from the one before, the steps'
  high bytes apart from their low bytes: gzip packs that to half the indices. The SHOWN
  heaviest say why it was ranked.
And the hash of its normalised title, to match an imported entry that names no id. The
WORD_ROWS words the most papers use carry a row in the meaning space (each the TF-IDF-weighted
sum of the papers' rows that use it), and every word its IDF, so the browser places any text
in both: an imported entry, a saved paper older than the window, a followed query.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pipeline.site.index.search import fnv1a, tokens
from pipeline.site.render.tex import plain_tex
from pipeline.site.writer import gzipped

if TYPE_CHECKING:
    import scipy.sparse as sp

VERSION = 3
DIMS = 64  # meaning: 14 days of all cs.* fit ≤ 1.5 MB gzip with the rest (docs/RECOMMEND.md)
TERMS = 64  # words kept per paper for the ranking (docs/RECOMMEND.md: what more or fewer find)
LEVELS = 3  # a word's weight in its paper: 1..LEVELS, as finely as the ranking gains from
SHOWN = 8  # of those, the heaviest that say why
WORD_ROWS = 2048  # words with a row in the meaning space, the most used first
MAX_VOCAB = 0xFFFE  # uint16 indices, NO_TERM aside
MIN_DF = 2  # a word of one paper says nothing about another
MAX_DF = 0.5  # nor does one that half the papers use
NO_TERM = 0xFFFF
IDF_STEP = 32  # an IDF is stored as round((idf - 1) × IDF_STEP), a byte
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
    space: str  # "meaning": the model's embeddings; "words": TF-IDF's SVD
    model: str  # the model named, when meaning
    vectors: np.ndarray  # int8, a row per paper
    # uint16, TERMS per paper: indices into vocab, ascending, then NO_TERM when fewer
    terms: np.ndarray
    term_weights: np.ndarray  # uint8, each term's weight in its row, the heaviest LEVELS
    title_keys: np.ndarray  # uint32: title_key of each title
    vocab: list[str]  # words, the most used first
    idf: np.ndarray  # uint8 per vocab word: round((idf - 1) × IDF_STEP)
    term_vectors: np.ndarray  # int8, a row in the meaning space per word of vocab[:WORD_ROWS]
    weights: np.ndarray  # float32 per such word: its IDF × its row's scale (vector = q × weight)
    dois: dict[int, str]  # row → DOI, lower case, for the papers that have one


def words(text: str) -> list[str]:
    """A text's words as the vectors count them (recommend.js: the search index's tokens;
    a stop word is in no vocabulary, so it matches nothing there either). Word pairs cost
    8 vocabulary entries in 10 and found no more (docs/RECOMMEND.md)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    return [t for t in tokens(text) if t not in ENGLISH_STOP_WORDS]


def title_key(title: str) -> int:
    """The 32-bit hash of a title's words: foryou.js matches an imported title by it."""
    return fnv1a(" ".join(tokens(plain_tex(title))))


def idf_of(stored: np.ndarray) -> np.ndarray:
    return 1 + stored.astype(np.float64) / IDF_STEP


def build(docs: Sequence[Doc], embeddings: np.ndarray | None = None, model: str = "",
          dims: int = DIMS) -> Window:
    """The window's data: the same docs (and embeddings, a row each) make the same bytes."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.utils.extmath import randomized_svd

    n = len(docs)
    texts = [f"{plain_tex(d.title)}\n{plain_tex(d.abstract, math=False)}" for d in docs]
    # In float64: the golden site is compared byte for byte, and another machine's BLAS
    # sums in another order; at float32 that would move some int8 roundings.
    vectorizer = TfidfVectorizer(analyzer=words, sublinear_tf=True, dtype=np.float64,
                                 min_df=MIN_DF if n > 2 else 1, max_df=MAX_DF if n > 4 else 1.0)
    try:
        matrix = sp.csr_matrix(vectorizer.fit_transform(texts))
        names = vectorizer.get_feature_names_out()
        idf = vectorizer.idf_
    except ValueError:  # no word left: an empty or wordless window
        matrix, names, idf = sp.csr_matrix((n, 0)), np.array([], dtype=object), np.zeros(0)
    df = np.bincount(matrix.indices, minlength=len(names))
    by_use = np.lexsort((np.arange(len(names)), -df))  # most used first
    heavy = np.unique(_top(matrix, np.arange(len(names)), TERMS)[0])
    heavy = heavy[heavy >= 0]
    listed = np.zeros(len(names), bool)
    listed[by_use[:WORD_ROWS]] = True
    listed[heavy] = True
    vocab = by_use[listed[by_use]][:MAX_VOCAB]  # the most used, then every heavy one
    column = np.full(len(names), -1, np.int64)
    column[vocab] = np.arange(len(vocab))
    top, term_weights = _top(matrix, column, TERMS)
    terms = np.where(top >= 0, top, NO_TERM).astype(np.uint16)
    with_rows = vocab[:WORD_ROWS]
    if embeddings is not None and n > 1:
        rows = _pca(np.asarray(embeddings, np.float64), dims)
        components = (matrix[:, with_rows].T @ _unit64(rows)).T  # a word: its papers' rows
        space = "meaning"
    else:
        k = max(0, min(dims, n - 1, len(names) - 1))
        u, s, vt = (randomized_svd(matrix, k, random_state=0) if k else
                    (np.zeros((n, 0)), np.zeros(0), np.zeros((0, len(names)))))
        rows, components, space, model = u * s, vt[:, with_rows], "words", ""
    scale = np.abs(components).max(axis=0, initial=0.0)
    return Window(
        ids=[d.arxiv_id for d in docs], space=space, model=model, vectors=_int8_rows(rows),
        terms=terms, term_weights=term_weights, title_keys=np.array(
            [title_key(d.title) for d in docs], np.uint32),
        vocab=[str(w) for w in names[vocab]],
        idf=np.clip(np.rint((idf[vocab] - 1) * IDF_STEP), 0, 255).astype(np.uint8),
        term_vectors=_int8_rows(np.asarray(components).T),
        weights=(idf_of(np.clip(np.rint((idf[with_rows] - 1) * IDF_STEP), 0, 255))
                 * scale / 127).astype(np.float32),
        dois={i: d.doi.strip().lower() for i, d in enumerate(docs) if d.doi and d.doi.strip()})


def _pca(vectors: np.ndarray, dims: int) -> np.ndarray:
    """The rows on their `dims` principal axes, each axis signed so its largest loading is
    positive (the same vectors give the same rows on any machine)."""
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:dims]
    axes *= np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])[:, None]
    return np.asarray(centred @ axes.T)


def _unit64(rows: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norm > 0, norm, 1)


def _top(matrix: sp.csr_matrix, column: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's k heaviest words that have a column (≥ 0; ties by column) in the order of
    their columns, -1 after them when fewer, and their weights in LEVELS steps of the row's
    heaviest."""
    out = np.full((matrix.shape[0], k), -1, np.int64)
    weight = np.zeros((matrix.shape[0], k), np.uint8)
    for i in range(matrix.shape[0]):
        lo, hi = matrix.indptr[i], matrix.indptr[i + 1]
        cols, values = column[matrix.indices[lo:hi]], matrix.data[lo:hi]
        inside = cols >= 0
        cols, values = cols[inside], values[inside]
        best = np.lexsort((cols, -values))[:k]
        if len(best):
            steps = np.maximum(np.rint(values[best] / values[best[0]] * LEVELS), 1)
            order = np.argsort(cols[best])
            out[i, :len(best)] = cols[best][order]
            weight[i, :len(best)] = steps[order]
    return out, weight


def _int8_rows(rows: np.ndarray) -> np.ndarray:
    """Each row scaled so its largest number is ±127, rounded; a zero row stays zero."""
    peak = np.abs(rows).max(axis=1, initial=0.0, keepdims=True)
    return np.rint(rows * (127 / np.where(peak > 0, peak, 1))).astype(np.int8)


def files(window: Window, first_doc: int, as_of: int, days: int) -> dict[str, bytes]:
    """The two files foryou.js loads, gzipped (the same window, the same bytes).
    vectors.bin: title keys (uint32, little-endian), terms (each the step from the paper's
    term before, the first from 0: every step's high byte, then every low byte), term
    weights, IDFs (uint8), vectors, then the words' vectors (int8), row by row; meta.json
    says the shapes."""
    n, dims = window.vectors.shape
    meta: dict[str, object] = {"v": VERSION, "as_of": as_of, "days": days, "count": n, "dims": dims,
            "terms": TERMS, "shown": SHOWN, "space": window.space, "model": window.model,
            "first_doc": first_doc, "ids": window.ids, "vocab": window.vocab,
            "vectors": len(window.term_vectors), "idf_step": IDF_STEP,
            "weights": [_short(w) for w in window.weights.tolist()],
            "doi": {str(i): d for i, d in sorted(window.dois.items())}}
    steps = as_steps(window.terms).astype(">u2").view(np.uint8)  # each: high byte, low byte
    blob = b"".join([window.title_keys.astype("<u4").tobytes(), steps[:, ::2].tobytes(),
                     steps[:, 1::2].tobytes(), window.term_weights.tobytes(),
                     window.idf.tobytes(), window.vectors.tobytes(),
                     window.term_vectors.tobytes()])
    text = json.dumps(meta, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return {META: gzipped(text.replace("<", "\\u003c").encode()), VECTORS: gzipped(blob)}


def from_files(meta: dict[str, object], blob: bytes) -> Window:
    """The window as foryou.js reads it (windowOf) from the two files, gunzipped."""
    n, dims, k = int(meta["count"]), int(meta["dims"]), int(meta["terms"])  # type: ignore[call-overload]
    vocab = [str(w) for w in meta["vocab"]]  # type: ignore[attr-defined]
    rows = int(meta["vectors"])  # type: ignore[call-overload]
    at = 0

    def take(dtype: str, count: int) -> np.ndarray:
        nonlocal at
        out = np.frombuffer(blob, dtype, count, at)
        at += count * out.itemsize
        return out
    keys, high = take("<u4", n), take("u1", n * k).astype(np.uint16)
    terms = from_steps((high << 8 | take("u1", n * k)).reshape(n, k))
    weights, idf = take("u1", n * k).reshape(n, k), take("u1", len(vocab))
    vectors = take("i1", n * dims).reshape(n, dims)
    return Window(ids=[str(i) for i in meta["ids"]], space=str(meta["space"]),  # type: ignore[attr-defined]
                  model=str(meta["model"]), vectors=vectors, terms=terms, term_weights=weights,
                  title_keys=keys, vocab=vocab, idf=idf,
                  term_vectors=take("i1", rows * dims).reshape(rows, dims),
                  weights=np.array(meta["weights"], np.float32), dois={})


def as_steps(terms: np.ndarray) -> np.ndarray:
    """Each paper's ascending term indices as steps from the one before (the first from 0),
    NO_TERM left as it is: numbers that need fewer bytes, which gzip finds."""
    at = terms.astype(np.int64)
    return np.where(at == NO_TERM, NO_TERM, np.diff(at, axis=1, prepend=0))


def from_steps(steps: np.ndarray) -> np.ndarray:
    """as_steps undone (foryou.js's windowOf does the same)."""
    at = steps.astype(np.int64)
    return np.where(at == NO_TERM, NO_TERM, np.cumsum(np.where(at == NO_TERM, 0, at), axis=1)
                    ).astype(np.uint16)


def _short(x: float) -> float:
    """Four significant digits: the int8 rows hold no more."""
    return float(f"{x:.4g}") if x and math.isfinite(x) else 0.0


# -- the browser's ranking, mirrored for the benchmark and the tests ------------------------

def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.float32)
    norm = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norm > 0, norm, 1)


@dataclass(frozen=True)
class Seed:
    """A seed as the ranking sees it: a vector in the meaning space and words with weights
    (vocab index → weight), each of any scale; `rows`: the window's rows it stands for."""

    vector: np.ndarray
    words: dict[int, float]
    rows: tuple[int, ...] = ()


def row_words(window: Window, r: int) -> dict[int, float]:
    return {int(t): float(q) for t, q in zip(window.terms[r], window.term_weights[r],
                                             strict=True) if t != NO_TERM}


def from_row(window: Window, r: int) -> Seed:
    return Seed(window.vectors[r].astype(np.float32), row_words(window, r), (r,))


def embed(window: Window, text: str) -> Seed:
    """A text placed as foryou.js places it: in the meaning space, each word's row × (1 +
    log count) × its weight, summed; its words weighted (1 + log count) × IDF. Words outside
    the vocabulary (stop words among them) are left out."""
    at = {w: i for i, w in enumerate(window.vocab)}
    counts: dict[int, int] = {}
    for w in words(text):
        if w in at:
            counts[at[w]] = counts.get(at[w], 0) + 1
    out = np.zeros(window.vectors.shape[1], np.float32)
    idf = idf_of(window.idf)
    for i, c in counts.items():
        if i < len(window.term_vectors):
            out += window.term_vectors[i].astype(np.float32) * (1 + math.log(c)) * window.weights[i]
    return Seed(out, {i: (1 + math.log(c)) * float(idf[i]) for i, c in counts.items()})


def _similarity(window: Window, seeds: Sequence[Seed]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's site score by meaning and by words: half its cosine with the seeds'
    centroid (what the profile is about), half with its closest seed (one seed's narrow
    interest is not averaged away); and the closest seed by both."""
    papers, s = unit(window.vectors), unit(np.array([x.vector for x in seeds]))
    dense = papers @ s.T
    weights = window.term_weights.astype(np.float32)
    weights /= np.maximum(np.linalg.norm(weights, axis=1, keepdims=True), 1e-9)
    sparse = np.zeros_like(dense)
    lookups = [_unit_words(x.words) for x in seeds]
    centroid_words: dict[int, float] = {}
    for own in lookups:
        for t, v in own.items():
            centroid_words[t] = centroid_words.get(t, 0.0) + v / len(seeds)
    centroid_words = _unit_words(centroid_words)
    to_centroid = np.zeros(len(window.ids), np.float32)
    for r in range(len(window.ids)):
        for t, q in zip(window.terms[r], weights[r], strict=True):
            if t == NO_TERM:
                break
            to_centroid[r] += q * centroid_words.get(int(t), 0.0)
            for k, own in enumerate(lookups):
                sparse[r, k] += q * own.get(int(t), 0.0)
    centroid = unit(s.mean(axis=0))
    by_meaning = 0.5 * (papers @ centroid) + 0.5 * dense.max(axis=1)
    by_words = 0.5 * to_centroid + 0.5 * sparse.max(axis=1)
    return np.stack([by_meaning, by_words]), (dense + sparse).argmax(axis=1)


def _unit_words(w: dict[int, float]) -> dict[int, float]:
    norm = math.sqrt(sum(v * v for v in w.values()))
    return {t: v / norm for t, v in w.items()} if norm > 0 else {}


def score(window: Window, seeds: Sequence[Seed]) -> tuple[np.ndarray, np.ndarray]:
    """Each paper's score against the seeds and its closest seed: its scores by meaning and
    by words, each as a z-score over the papers ranked (the seeds' own rows aside), summed.
    What the two find differs by interest; the sum keeps what either finds."""
    both, closest = _similarity(window, seeds)
    own = np.zeros(len(window.ids), bool)
    own[[r for x in seeds for r in x.rows]] = True
    total = np.zeros(len(window.ids))
    for measure in both:
        ranked = measure[~own] if (~own).any() else measure
        std = float(ranked.std())
        total += (measure - float(ranked.mean())) / (std if std > 0 else 1.0)
    return total, closest


def rank(window: Window, seeds: Sequence[Seed]) -> list[int]:
    """Rows best first, ties to the newer, the seeds' own rows left out (as foryou.js)."""
    scores, _ = score(window, seeds)
    own = {r for x in seeds for r in x.rows}
    return [int(i) for i in np.lexsort((-np.arange(len(scores)), -np.round(scores, 6)))
            if int(i) not in own]
