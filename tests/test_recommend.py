"""为你推荐's vectors (pipeline/site/index/recommend.py) on the real sample's papers: what the
browser reads, byte for byte, and that what it computes from them means what it says."""

from __future__ import annotations

import dataclasses
import gzip
import json

import numpy as np
import pytest

from pipeline.replay import sample
from pipeline.site.index import recommend as _recommend


@pytest.fixture(scope="module")
def sample_docs() -> list[_recommend.Doc]:
    entries = sorted((e for e in sample.entries() if e.version == 1),
                     key=lambda e: (e.announced, e.arxiv_id))
    return [_recommend.Doc(e.arxiv_id, e.title, e.abstract, e.doi) for e in entries]


@pytest.fixture(scope="module")
def sample_window(sample_docs) -> _recommend.Window:
    return _recommend.build(sample_docs)


def read_files(files: dict[str, bytes]) -> tuple[dict, bytes]:
    meta = json.loads(gzip.decompress(files[_recommend.META]))
    return meta, gzip.decompress(files[_recommend.VECTORS])


def test_the_files_hold_every_paper_in_order_and_the_shapes_they_say(sample_docs,
                                                                     sample_window):
    meta, blob = read_files(_recommend.files(sample_window, 40, 123, 7))
    n, dims, terms, vocab = meta["count"], meta["dims"], meta["terms"], len(meta["vocab"])
    assert meta["ids"] == [d.arxiv_id for d in sample_docs] and n == len(sample_docs)
    assert (meta["first_doc"], meta["as_of"], meta["days"], dims) == (40, 123, 7, _recommend.DIMS)
    assert (meta["space"], meta["model"]) == ("words", "")
    assert meta["vectors"] == _recommend.WORD_ROWS == len(meta["weights"]) < vocab
    assert vocab <= _recommend.MAX_VOCAB and "the" not in meta["vocab"]
    assert len(blob) == (n * 4 + n * terms * 2 + n * terms + vocab + n * dims
                         + meta["vectors"] * dims)
    high = np.frombuffer(blob, "u1", n * terms, n * 4).reshape(n, terms)  # the steps' high bytes
    assert (high[sample_window.terms != _recommend.NO_TERM] == 0).mean() > 0.5
    read = _recommend.from_files(meta, blob)
    for name in ("vectors", "terms", "term_weights", "title_keys", "idf", "term_vectors"):
        assert np.array_equal(getattr(read, name), getattr(sample_window, name)), name
    assert read.title_keys[0] == _recommend.title_key(sample_docs[0].title)
    assert (np.abs(read.vectors).max(axis=1) == 127).all()  # each row uses int8's whole range
    assert (read.term_weights.max(axis=1) == _recommend.LEVELS).all()  # each row's heaviest
    assert (read.term_weights[read.terms != _recommend.NO_TERM] >= 1).all()
    assert meta["doi"] == {}  # the sample's papers name none


def test_a_doi_is_kept_by_row_in_lower_case(sample_docs):
    docs = [*sample_docs[:30], dataclasses.replace(sample_docs[30], doi=" 10.1145/ABC.1 ")]
    meta, _ = read_files(_recommend.files(_recommend.build(docs), 0, 0, 7))
    assert meta["doi"] == {"30": "10.1145/abc.1"}


@pytest.mark.slow
def test_the_same_papers_make_the_same_bytes(sample_docs, sample_window):
    again = _recommend.build(sample_docs)
    assert _recommend.files(again, 0, 0, 7) == _recommend.files(sample_window, 0, 0, 7)


@pytest.mark.parametrize("space", ["words", "meaning"])
def test_a_papers_own_text_placed_by_the_words_lands_next_to_its_row(sample_docs,
                                                                     sample_window, space):
    """What the browser does with an imported entry or an older saved paper: its text
    through the vocabulary's rows lands where the paper's own row is, in either space (for
    meaning, a stand-in model: a fixed random projection of each paper's word counts)."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # a second to import

    window = sample_window  # by the words
    if space == "meaning":
        counts = TfidfVectorizer(analyzer=_recommend.words, use_idf=False).fit_transform(
            [f"{d.title} {d.abstract}" for d in sample_docs])
        vectors = counts @ np.random.default_rng(0).standard_normal((counts.shape[1], 96))
        window = _recommend.build(sample_docs, vectors, "stand-in")
    assert window.space == space
    rows = _recommend.unit(window.vectors)
    found, near = 0, []
    for i in range(0, len(sample_docs), 50):
        d = sample_docs[i]
        seed = _recommend.embed(window, f"{d.title}\n{d.abstract}")
        near.append(float(rows[i] @ _recommend.unit(seed.vector)))
        found += int(_recommend.rank(window, [seed])[0] == i)
    assert np.median(near) > (0.8 if space == "words" else 0.5)
    assert found >= 0.9 * len(near)


def test_seeds_of_one_category_rank_that_category_first(sample_docs, sample_window):
    entries = {e.arxiv_id: e for e in sample.entries() if e.version == 1}
    cats = [entries[d.arxiv_id].categories for d in sample_docs]
    seeds = [i for i, c in enumerate(cats) if "cs.CV" in c][:20]
    as_seeds = [_recommend.from_row(sample_window, r) for r in seeds]
    ranked = _recommend.rank(sample_window, as_seeds)[:20]
    assert not set(ranked) & set(seeds)
    assert sum("cs.CV" in cats[r] for r in ranked) >= 16
    _, closest = _recommend.score(sample_window, as_seeds)
    assert closest[seeds[3]] == 3  # a seed is closest to itself


def test_words_find_what_meaning_alone_ranks_low(sample_docs, sample_window):
    """The fusion: a paper that shares a seed's rare word pair scores higher than by the
    meaning space alone would put it."""
    seed = _recommend.from_row(sample_window, 0)
    both, _ = _recommend._similarity(sample_window, [seed])
    fused, _ = _recommend.score(sample_window, [seed])
    by_meaning = np.argsort(-both[0])
    shares = [r for r in by_meaning[1:] if set(_recommend.row_words(sample_window, r))
              & set(seed.words)]
    lowest = shares[-1]
    assert list(np.argsort(-fused)).index(lowest) < list(by_meaning).index(lowest)


def test_the_terms_are_each_papers_heaviest_words(sample_docs, sample_window):
    vocab = sample_window.vocab
    title_words = set(_recommend.words(sample_docs[0].title.lower()))
    row = sample_window.terms[0]
    terms = [vocab[t] for t in row if t != _recommend.NO_TERM]
    assert len(terms) == _recommend.TERMS and (np.diff(row.astype(int)) > 0).all()
    assert title_words & set(terms)
    assert not set(terms) & {"the", "of", "and", "we"}  # stop words never count


def test_a_window_too_small_for_the_svd_still_makes_files():
    for docs in ([], [_recommend.Doc("2606.00001", "One", "")],
                 [_recommend.Doc(f"2606.0000{i}", "Graph networks", "for graphs")
                  for i in range(3)]):
        window = _recommend.build(docs)
        meta, blob = read_files(_recommend.files(window, 0, 0, 7))
        assert meta["count"] == len(docs) and meta["dims"] == window.vectors.shape[1]
        assert len(blob) == len(docs) * (4 + 3 * meta["terms"] + meta["dims"]) + len(
            meta["vocab"]) + meta["vectors"] * meta["dims"]


def test_title_keys_ignore_case_tex_and_punctuation():
    assert _recommend.title_key("{Attention} is All you Need!") == _recommend.title_key(
        "attention is all you need")
    assert _recommend.title_key("$\\alpha$-Nets") != _recommend.title_key("Beta-Nets")
