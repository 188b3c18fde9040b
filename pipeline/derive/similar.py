"""Similar papers: each paper's `[similar] count` nearest papers in the library, stored in
the `similar` table the site reads (pipeline.derive.neighbours finds them: by words, or by the
embeddings pipeline.derive.embeddings fetches once every paper has one).

A run looks again only at what changed: a paper whose title or abstract is new (its hash
differs from the one its list was made for), and a paper whose list names one that
changed or left the library. Each of those gets a new list; every other paper keeps its
list, taking in those new papers that came closer than its last neighbour. So a day's
batch costs the library's vectors plus the batch's search (docs/SIMILAR.md), and a run
in which no text changed reads the texts and writes nothing. Another `count` or method,
or (by words) a library grown by a quarter since the oldest list, remakes every list, as
`papertrail similar --full` does.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.config import Config
from pipeline.derive import embeddings as _embeddings
from pipeline.derive import encoder as _encoder
from pipeline.derive import neighbours as _neighbours
from pipeline.store import Store
from pipeline.tables import SIMILAR, to_table

# A word's weight depends on how many papers use it, so lists by words made when the
# library was much smaller are scored on other weights than new ones: past this growth
# since the oldest list was made, every list is made anew (at 150,000 papers a year, every two to
# three months: 5 minutes at 200,000 papers).
GROWTH = 1.25


@dataclass(frozen=True)
class Found:
    papers: int
    made: int  # lists made anew
    updated: int  # lists that took in a new paper
    seconds: float
    skipped: str | None = None  # why nothing was looked at
    embeddings: str | None = None  # how far the embeddings are, when a model is set

    def line(self) -> str:
        if self.skipped:
            return f"similar: skipped ({self.skipped})"
        said = f" · {self.embeddings}" if self.embeddings else ""
        if not self.made and not self.updated:
            return f"similar: {self.papers:,} papers · nothing changed{said}"
        return (f"similar: {self.papers:,} papers · {self.made:,} lists made, "
                f"{self.updated:,} updated · {self.seconds:.1f} s{said}")


def similar(cfg: Config, store: Store, *, full: bool = False) -> Found:
    """Bring the `similar` table up to date with the papers (every list, when `full`)."""
    if not cfg.similar.enabled:
        return Found(0, 0, 0, 0.0, "[similar] enabled = false")
    started = time.monotonic()
    with store.lock():
        papers = store.read("papers", ["arxiv_id", "title", "abstract"])
        ids = papers["arxiv_id"].combine_chunks()
        texts = [f"{t or ''}\n{a or ''}" for t, a in zip(
            papers["title"].to_pylist(), papers["abstract"].to_pylist(), strict=True)]
        del papers
        hashes = pa.array([hashlib.blake2b(t.encode(), digest_size=8).hexdigest()
                           for t in texts], pa.string())
        # Made anew, the stored lists are not read: so `--full` also repairs a damaged file.
        stored = SIMILAR.empty_table() if full else store.read("similar")
        # Each paper's stored row (null: none), in the papers' order.
        known = stored.take(pc.index_in(ids, value_set=stored["arxiv_id"]))
        embedded, said = _embedded(cfg, store, ids, hashes, texts)
        s = cfg.similar
        source = embedder(cfg)
        method = _neighbours.METHOD + (f"+{source[0]}" if embedded is not None and source
                                       else "") + f"/{s.count}"
        # Word weights (and so the scores by words and meaning) drift as the library grows.
        redo = _to_redo(ids, hashes, stored, known, method, full or (
            len(stored) > 0 and pc.min(stored["library"]).as_py() * GROWTH < len(ids)))
        if not redo.any() and len(stored) == len(ids):
            return Found(len(ids), 0, 0, time.monotonic() - started, embeddings=said)
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        matrix = _neighbours.vectors(texts, jobs)
        del texts
        scored = (_neighbours.nearest(matrix, np.flatnonzero(redo), jobs) if embedded is None
                  else _neighbours.nearest_fused(matrix, embedded, np.flatnonzero(redo), jobs))
        del matrix
        neighbours, scores = _lists(ids, redo, known, scored, cfg.similar.count)
        # stubs: fill_null is typed as coalesce (one type for values and fill)
        before = pc.fill_null(pc.binary_join(known["neighbours"], "\x1f"), "")  # type: ignore[type-var]
        # stubs: binary_join's result type includes scalars
        updated = ~redo & ~_equal(before, pc.binary_join(neighbours, "\x1f"))  # type: ignore[arg-type]
        # stubs: fill_null is typed as coalesce (one type for values and fill)
        library = pc.fill_null(known["library"], 0).to_numpy(zero_copy_only=False).copy()  # type: ignore[attr-defined, type-var]
        library[redo] = len(ids)
        store.write("similar", to_table(pa.table({
            "arxiv_id": ids, "text_hash": hashes,
            "method": pa.array(np.full(len(ids), method), pa.string()),
            "library": pa.array(library, pa.int32()), "neighbours": neighbours,
            "scores": scores}), SIMILAR))
    return Found(len(ids), int(redo.sum()), int(updated.sum()), time.monotonic() - started,
                 embeddings=said)


def _embedded(cfg: Config, store: Store, ids: pa.Array[Any], hashes: pa.Array[Any], texts: list[str]
              ) -> tuple[np.ndarray | None, str | None]:
    """Every paper's embedding (a row each, in the papers' order) once each has one for its
    text and model, making up to `embeddings_per_run` missing ones, newest first: by
    `[similar] embeddings_model` on the [digest] server, else by the local `encoder`. Until
    then None (lists by words), and what to say of it."""
    s = cfg.similar
    source = embedder(cfg)
    if source is None:
        return None, None
    name, dimensions = source
    held = store.read("embeddings")
    known = held.take(pc.index_in(ids, value_set=held["arxiv_id"]))
    current = (_equal(known["text_hash"], hashes)
               & _equal(known["model"], pa.array([name] * len(ids)))
               # stubs: compute functions take Python scalars
               & pc.fill_null(pc.equal(pc.list_value_length(known["vector"]),  # type: ignore[call-overload]
                                       dimensions), False).to_numpy(zero_copy_only=False)
               & _finite(known["vector"]))
    missing = np.flatnonzero(~current)[::-1][:s.embeddings_per_run]
    vectors, error = _make(cfg, [texts[i] for i in missing]) if missing.size else ([], None)
    got = missing[:len(vectors)]
    if got.size:
        store.append("embeddings", pa.table({
            "arxiv_id": ids.take(got), "text_hash": hashes.take(got),
            "model": pa.array([name] * len(got), pa.string()),
            "vector": pa.array([v.tolist() for v in vectors], pa.list_(pa.float32()))}))
        held = store.read("embeddings")
        known = held.take(pc.index_in(ids, value_set=held["arxiv_id"]))
        current[got] = True
    have = int(current.sum())
    said = (f"embeddings {have:,} of {len(ids):,} by {name.split('@')[0]}"
            + (f" ({error})" if error else "")
            + ("" if have == len(ids) else "; lists by words until every paper has one"))
    if have < len(ids):
        return None, said
    flat = pc.list_flatten(known["vector"]).to_numpy(zero_copy_only=False)
    return flat.astype(np.float32).reshape(len(ids), -1), said


def embedder(cfg: Config) -> tuple[str, int] | None:
    """The embeddings the config asks for: the name stored with each vector (a local
    encoder's with its revision) and their length; None when it asks for none."""
    s = cfg.similar
    if s.embeddings_model:
        return s.embeddings_model, s.embeddings_dimensions
    if s.encoder:
        model = _encoder.MODELS[s.encoder]
        return f"{s.encoder}@{model.revision[:12]}", model.dimensions
    return None


def _make(cfg: Config, texts: list[str]) -> tuple[list[np.ndarray], str | None]:
    """Vectors for the first texts, in order, and why the rest are missing."""
    s = cfg.similar
    if s.embeddings_model:
        api_key = os.environ.get(cfg.digest.api_key_env, "").strip()
        if not api_key:
            return [], cfg.digest.no_key
        fetched = _embeddings.fetch(cfg, api_key, texts)
        return fetched.vectors, fetched.error
    model = _encoder.MODELS[s.encoder]
    try:
        folder = (cfg.root / s.encoder_path if s.encoder_path else _encoder.fetch(model))
        return list(_encoder.Encoder(model, folder).encode(texts)), None
    except _encoder.ModelError as exc:
        return [], f"model failing: {exc}"


def _finite(lists: pa.ChunkedArray[Any]) -> npt.NDArray[np.bool_]:
    """Per row: no NaN or inf in its list of numbers. A vector stored before answers were
    checked as float32 is asked for again: it would make every list wrong."""
    # In Arrow, bits per value: a year's vectors are 50 million numbers.
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    finite: pa.ChunkedArray[Any] | pa.Array[Any] = pc.fill_null(  # type: ignore[assignment, type-var]
        pc.is_finite(pc.list_flatten(lists)), False)
    bad = pc.indices_nonzero(pc.invert(finite)).to_numpy()
    ends = np.cumsum(pc.fill_null(pc.list_value_length(lists), 0).to_numpy(
        zero_copy_only=False))
    ok = np.ones(len(lists), dtype=bool)
    ok[np.searchsorted(ends, bad, side="right")] = False
    return ok


def _to_redo(ids: pa.Array[Any], hashes: pa.Array[Any], stored: pa.Table, known: pa.Table,
             method: str, full: bool) -> np.ndarray:
    """Which papers get a new list: all when `full` or the method changed; else those whose
    text is not the one their list was made for, and those whose list names a paper whose
    text changed or that left the library."""
    # stubs: compute functions take Python scalars
    if full or len(stored) == 0 or not pc.all(pc.equal(stored["method"], method)).as_py():  # type: ignore[call-overload]
        return np.ones(len(ids), dtype=bool)
    # A list scored from a NaN vector (stored before vectors were checked as float32).
    changed = ~_equal(known["text_hash"], hashes) | ~_finite(known["scores"])
    gone = pc.invert(pc.is_in(stored["arxiv_id"], value_set=ids))
    moved = pa.concat_arrays([pc.filter(ids, pa.array(changed)),
                              pc.filter(stored["arxiv_id"], gone).combine_chunks()])
    names = known["neighbours"]
    naming = pc.is_in(pc.list_flatten(names), value_set=moved).to_numpy(zero_copy_only=False)
    stale = np.zeros(len(ids), dtype=bool)
    stale[pc.list_parent_indices(names).to_numpy()[naming]] = True
    return changed | stale


def _lists(ids: pa.Array[Any], redo: np.ndarray, known: pa.Table, scored: _neighbours.Scored,
           count: int) -> tuple[pa.Array[Any], pa.Array[Any]]:
    """Every paper's list (ids, scores). A paper redone gets the best `count` of its
    candidates; any other keeps its stored list with each redone paper that found it among
    its candidates (cosine is symmetric) merged in."""
    fresh = scored.best(count)
    offered = ~redo[scored.row]
    rest = pa.array(~redo)
    names = pc.filter(known["neighbours"], rest)
    held_query = np.flatnonzero(~redo)[pc.list_parent_indices(names).to_numpy()]
    held_row = pc.index_in(pc.list_flatten(names), value_set=ids).to_numpy(
        zero_copy_only=False)
    held_score = pc.list_flatten(pc.filter(known["scores"], rest)).to_numpy()
    query = np.concatenate([fresh.query, held_query, scored.row[offered]])
    row = np.concatenate([fresh.row, held_row, scored.query[offered]])
    score = np.concatenate([fresh.score, held_score, scored.score[offered]])
    order = np.lexsort((row, -score, query))
    best = _neighbours.Scored(query[order], row[order], score[order]).best(count)
    offsets = pa.array(np.searchsorted(best.query, np.arange(len(ids) + 1)), pa.int32())
    return (pa.ListArray.from_arrays(offsets, ids.take(pa.array(best.row))),
            pa.ListArray.from_arrays(offsets, pa.array(best.score, pa.float32())))


def _equal(a: pa.ChunkedArray[Any] | pa.Array[Any], b: pa.ChunkedArray[Any] | pa.Array[Any]
           ) -> npt.NDArray[np.bool_]:
    """Row by row, whether two string columns hold the same value (a null equals nothing)."""
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    return pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)  # type: ignore[attr-defined, no-any-return, type-var]
