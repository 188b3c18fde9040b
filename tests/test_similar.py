"""Similar papers (pipeline.derive.similar): real stores on disk, the sample's real abstracts, and
an independent TF-IDF (scikit-learn's vocabulary-based vectorizer, no hashing) as the
oracle for what the scores must be."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline import build
from pipeline.config import Config
from pipeline.derive import embeddings as _embeddings
from pipeline.derive import similar
from pipeline.replay.openai import OpenAIReplay
from pipeline.store import Store, StoreError
from tests.support.servers import serve
from tests.support.site import make_config

pytestmark = pytest.mark.slow  # most tests make every similar list of the sample


def _project(folder: Path, extra: str = "") -> Config:
    return make_config(folder, None, extra)


def _lists(store: Store) -> dict[str, list[str]]:
    table = store.read("similar")
    return dict(zip(table["arxiv_id"].to_pylist(), table["neighbours"].to_pylist(),
                    strict=True))


def _hashes(store: Store) -> dict[str, str]:
    table = store.read("similar")
    return dict(zip(table["arxiv_id"].to_pylist(), table["text_hash"].to_pylist(), strict=True))


@pytest.fixture
def store_with_papers(tmp_path: Path, sample_papers: pa.Table) -> tuple[Config, Store]:
    """The sample's 1,333 papers, no similar lists yet."""
    cfg = _project(tmp_path)
    store = Store(cfg.store_path)
    store.write("papers", sample_papers)
    return cfg, store


@pytest.fixture(scope="module")
def store_with_lists(tmp_path_factory: pytest.TempPathFactory, sample_papers: pa.Table
                     ) -> tuple[Config, Store]:
    """The sample's papers with every similar list made (do not change it)."""
    cfg = _project(tmp_path_factory.mktemp("lists"))
    store = Store(cfg.store_path)
    store.write("papers", sample_papers)
    found = similar.similar(cfg, store)
    assert found.made == sample_papers.num_rows and found.updated == 0
    return cfg, store


def _oracle(papers: pa.Table) -> tuple[list[str], np.ndarray]:
    """Every pair's cosine by an independent TF-IDF of the same definition."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # a second to import

    texts = [f"{t}\n{a}" for t, a in zip(papers["title"].to_pylist(),
                                         papers["abstract"].to_pylist(), strict=True)]
    matrix = TfidfVectorizer(ngram_range=(1, 2), stop_words="english",
                             sublinear_tf=True).fit_transform(texts)
    cosine = (matrix @ matrix.T).toarray()
    np.fill_diagonal(cosine, -1)
    return papers["arxiv_id"].to_pylist(), cosine


def test_every_paper_gets_the_papers_most_like_it(store_with_lists, sample_papers):
    cfg, store = store_with_lists
    table = store.read("similar")
    ids, cosine = _oracle(sample_papers)
    at = {i: n for n, i in enumerate(ids)}
    assert sorted(table["arxiv_id"].to_pylist()) == sorted(ids)
    found_pairs, found_best, errors = 0, 0, []
    for arxiv_id, names, scores in zip(*(table[c].to_pylist() for c in
                                         ("arxiv_id", "neighbours", "scores")), strict=True):
        assert len(names) == cfg.similar.count and arxiv_id not in names
        assert scores == sorted(scores, reverse=True)
        row = cosine[at[arxiv_id]]
        errors += list(np.abs(np.array(scores) - row[[at[n] for n in names]]))
        exact = set(np.argsort(-row, kind="stable")[:cfg.similar.count])
        found_best += len(exact & {at[n] for n in names})
        found_pairs += len(names)
    # The scores are the oracle's cosine. Hashing puts ~800 of the sample's 162,610 words
    # and word pairs into a column another one has too; a pair of papers sharing one such
    # column by chance ('relocalization' and 'wind') scores up to 0.025 more: rarely.
    assert np.quantile(errors, 0.99) < 1e-3 and max(errors) < 0.03
    recall = found_best / found_pairs
    print(f"share of the exact top {cfg.similar.count} found: {recall:.1%}")
    assert recall >= 0.85  # the candidates' step misses some near the bottom of a list


def test_similar_papers_share_their_field_far_more_than_chance(store_with_lists,
                                                                sample_papers):
    _, store = store_with_lists
    primary = dict(zip(sample_papers["arxiv_id"].to_pylist(),
                       sample_papers["primary_category"].to_pylist(), strict=True))
    pairs = [(primary[a], primary[n]) for a, names in _lists(store).items() for n in names]
    same = np.mean([a == b for a, b in pairs])
    counts = np.array(list(pc.value_counts(sample_papers["primary_category"])
                           .field("counts").to_pylist()))
    chance = float(((counts / counts.sum()) ** 2).sum())
    print(f"neighbours sharing the primary category: {same:.1%} (chance {chance:.1%})")
    assert same >= 1.8 * chance  # 63.3% against 31.0%: random lists would be at chance


def test_a_run_with_nothing_new_writes_nothing(store_with_lists):
    cfg, store = store_with_lists
    files = store.files()
    found = similar.similar(cfg, store)
    assert (found.made, found.updated) == (0, 0) and "nothing changed" in found.line()
    assert store.files() == files


def test_new_papers_get_lists_and_come_into_the_older_ones(store_with_papers,
                                                           sample_papers):
    cfg, store = store_with_papers
    # The newest 10% (a library grown by a quarter would have every list made anew).
    new = pc.greater(sample_papers["arxiv_id"], sorted(
        sample_papers["arxiv_id"].to_pylist())[-sample_papers.num_rows // 10 - 1])
    store.write("papers", sample_papers.filter(pc.invert(new)))
    similar.similar(cfg, store)
    before = _lists(store)
    store.write("papers", sample_papers)
    found = similar.similar(cfg, store)
    after = _lists(store)
    added = set(sample_papers.filter(new)["arxiv_id"].to_pylist())
    assert found.made == len(added) and found.updated > 0
    updated = [i for i in before if before[i] != after[i]]
    assert len(updated) == found.updated
    # An older list changes only by taking in new papers, which push its last ones out.
    for i in updated:
        assert set(after[i]) - set(before[i]) <= added
        kept = [n for n in after[i] if n not in added]
        assert kept == before[i][:len(kept)]
    # Against every list made anew on the whole library (other word weights: a library
    # grown by 11%), most of each list is the same.
    fresh = dict(after)
    similar.similar(cfg, store, full=True)
    full = _lists(store)
    overlap = np.mean([len(set(fresh[i]) & set(full[i])) / len(full[i]) for i in full])
    print(f"a day's lists against all made anew: {overlap:.1%} the same papers")
    assert overlap >= 0.8


def test_a_revised_abstract_remakes_its_list_and_the_lists_naming_it(store_with_papers,
                                                                     sample_papers):
    cfg, store = store_with_papers
    similar.similar(cfg, store)
    before = _lists(store)
    target = sample_papers["arxiv_id"][0].as_py()
    naming = {i for i, names in before.items() if target in names}
    assert naming
    abstract = sample_papers["abstract"].to_pylist()
    abstract[0] = abstract[0] + " We add experiments on protein folding benchmarks."
    store.write("papers", sample_papers.set_column(
        sample_papers.schema.get_field_index("abstract"), "abstract", pa.array(abstract)))
    hashes = _hashes(store)
    found = similar.similar(cfg, store)
    assert found.made == 1 + len(naming)  # it, and exactly the lists that named it
    after = _hashes(store)
    assert {i for i in after if after[i] != hashes[i]} == {target}
    assert similar.similar(cfg, store).made == 0


def test_a_paper_that_left_the_library_leaves_every_list(store_with_papers, sample_papers):
    cfg, store = store_with_papers
    similar.similar(cfg, store)
    gone = max(_lists(store).items(), key=lambda item: sum(
        item[0] in names for names in _lists(store).values()))[0]
    store.write("papers", sample_papers.filter(pc.not_equal(sample_papers["arxiv_id"], gone)))
    similar.similar(cfg, store)
    lists = _lists(store)
    assert gone not in lists and all(gone not in names for names in lists.values())
    assert all(len(names) == cfg.similar.count for names in lists.values())


def test_another_count_remakes_every_list(store_with_papers, sample_papers):
    cfg, store = store_with_papers
    similar.similar(cfg, store)
    five = dataclasses.replace(cfg, similar=dataclasses.replace(cfg.similar, count=5))
    found = similar.similar(five, store)
    assert found.made == sample_papers.num_rows
    assert {len(names) for names in _lists(store).values()} == {5}


def test_turned_off_it_reads_nothing_and_says_so(store_with_papers):
    cfg, store = store_with_papers
    off = dataclasses.replace(cfg, similar=dataclasses.replace(cfg.similar, enabled=False))
    assert similar.similar(off, store).line() == "similar: skipped ([similar] enabled = false)"
    assert store.read("similar").num_rows == 0


def test_an_empty_library_and_a_lone_paper_get_no_lists(tmp_path, sample_papers):
    cfg = _project(tmp_path)
    store = Store(cfg.store_path)
    assert similar.similar(cfg, store).made == 0
    store.write("papers", sample_papers.slice(0, 1))
    assert similar.similar(cfg, store).made == 1
    assert _lists(store) == {sample_papers["arxiv_id"][0].as_py(): []}


def _shown(page, url: str) -> list[tuple[str, str]]:
    """The similar papers a paper page lists once search.js has them: (link, title)."""
    page.goto(url)
    page.wait_for_function("() => !document.querySelector('section[data-similar]').dataset.busy")
    return [tuple(x) for x in page.eval_on_selector_all(
        "section.similar:not([hidden]) li a", "els => els.map(a => [a.href, a.textContent])")]


def test_a_paper_page_lists_them_and_follows_their_titles(store_with_papers, sample_papers,
                                                          page):
    cfg, store = store_with_papers
    cfg = dataclasses.replace(cfg, site=dataclasses.replace(cfg.site, paper_pages_days=2))
    similar.similar(cfg, store)
    now = pc.max(sample_papers["updated"]).as_py()
    build.build(cfg, now=now)
    lists = _lists(store)
    papers = {r["arxiv_id"]: r for r in sample_papers.to_pylist()}
    paged = {i for i, r in papers.items() if r["updated"] >= now - dt.timedelta(days=2)}
    arxiv_id = next(i for i in sorted(paged) if set(lists[i]) - paged and set(lists[i]) & paged
                    and not any("$" in papers[n]["title"] for n in lists[i]))
    listing = cfg.output_path / "paper" / f"{arxiv_id}.html"
    assert "<li>" not in listing.read_text("utf-8")  # the list is not in the page's bytes
    with serve(cfg.output_path) as url:
        # In the stored order; a paper with a page of its own links to it, any other to arXiv.
        assert _shown(page, f"{url}paper/{arxiv_id}.html") == [
            (f"{url}paper/{n}.html" if n in paged else f"https://arxiv.org/abs/{n}",
             " ".join(papers[n]["title"].split())) for n in lists[arxiv_id]]
    # A neighbour retitled: the page listing it shows the new title without being made again.
    neighbour = next(n for n in lists[arxiv_id] if n in paged)
    untouched = listing.stat().st_mtime_ns
    titles = sample_papers["title"].to_pylist()
    titles[sample_papers["arxiv_id"].to_pylist().index(neighbour)] = "A Retitled Neighbour"
    store.write("papers", sample_papers.set_column(
        sample_papers.schema.get_field_index("title"), "title", pa.array(titles)))
    build.build(cfg, now=now)
    with serve(cfg.output_path) as url:
        assert (f"{url}paper/{neighbour}.html", "A Retitled Neighbour") in _shown(
            page, f"{url}paper/{arxiv_id}.html")
    assert listing.stat().st_mtime_ns == untouched


def test_a_paper_without_similar_papers_has_no_section(store_with_papers, sample_papers):
    cfg, _ = store_with_papers
    build.build(cfg, now=pc.max(sample_papers["updated"]).as_py())  # no lists made
    pages = list((cfg.output_path / "paper").glob("*.html"))
    assert pages and not any("data-similar" in p.read_text("utf-8") for p in pages)


def test_a_damaged_table_is_named_and_made_anew_by_full(store_with_papers):
    cfg, store = store_with_papers
    similar.similar(cfg, store)
    lists = _lists(store)
    damaged = store.table_files("similar")[0]
    damaged.write_bytes(b"PAR1 not parquet PAR1")
    with pytest.raises(StoreError, match=re.escape(str(damaged)) + ".*similar --full"):
        similar.similar(cfg, store)
    assert similar.similar(cfg, store, full=True).made == len(lists)
    assert _lists(store) == lists and not store.check()


# -- by embeddings: the model replay's /v1/embeddings ----------------------------------------------


def _embedding(cfg: Config, llm: OpenAIReplay, monkeypatch: pytest.MonkeyPatch,
               **similar_changes: object) -> Config:
    """The config with an embeddings model on the replay (no retries: a fault is final)."""
    monkeypatch.setenv("TEST_EMBEDDINGS_KEY", "k")
    digest = dataclasses.replace(cfg.digest, base_url=llm.url, max_retries=0,
                                 api_key_env="TEST_EMBEDDINGS_KEY", timeout_seconds=5)
    return dataclasses.replace(cfg, digest=digest, similar=dataclasses.replace(
        cfg.similar, embeddings_model="replay-embed", **similar_changes))


def test_with_an_embeddings_model_the_lists_come_from_embeddings_asked_once(
        store_with_papers, sample_papers, llm, monkeypatch):
    from sklearn.feature_extraction.text import TfidfVectorizer

    cfg, store = store_with_papers
    cfg = _embedding(cfg, llm, monkeypatch)
    n = sample_papers.num_rows
    found = similar.similar(cfg, store)
    assert found.made == n and f"embeddings {n:,} of {n:,}" in found.line()
    assert len(llm.embedding_requests) == -(-n // _embeddings.BATCH) and llm.calls == 0
    assert set(store.read("similar")["method"].to_pylist()) == {
        "tfidf/2^24/0.02/64+replay-embed/8"}
    # Each list is the papers nearest by words and embeddings together: against an oracle
    # scoring every pair, each cosine as a z-score over all pairs (the step estimates the
    # two from 20,000 random pairs and scores only each paper's candidates).
    held = store.read("embeddings")
    at = {i: k for k, i in enumerate(held["arxiv_id"].to_pylist())}
    order = [at[i] for i in sample_papers["arxiv_id"].to_pylist()]
    vectors = np.array(held["vector"].to_pylist(), np.float32)[order]
    words = TfidfVectorizer(stop_words="english", ngram_range=(1, 2), sublinear_tf=True,
                            dtype=np.float64).fit_transform(
        [f"{t}\n{a}" for t, a in zip(sample_papers["title"].to_pylist(),
                                     sample_papers["abstract"].to_pylist(), strict=True)])
    by_words, by_meaning = (words @ words.T).toarray(), vectors @ vectors.T
    fused = ((by_words - by_words.mean()) / by_words.std()
             + (by_meaning - by_meaning.mean()) / by_meaning.std())
    np.fill_diagonal(fused, -np.inf)
    ids = sample_papers["arxiv_id"].to_pylist()
    lists = _lists(store)
    same = [len(set(lists[ids[i]]) & {ids[j] for j in np.argsort(-fused[i])[:8]})
            for i in range(0, len(ids), 10)]
    assert np.mean(same) >= 7, np.mean(same)
    only_meaning = [len(set(lists[ids[i]]) & {ids[j] for j in np.argsort(-by_meaning[i])[1:9]})
                    for i in range(0, len(ids), 10)]
    assert np.mean(only_meaning) < np.mean(same) - 1  # the words count
    # Cached: a second run asks nothing; a revised abstract asks for that paper alone.
    asked = len(llm.embedding_requests)
    assert similar.similar(cfg, store).made == 0 and len(llm.embedding_requests) == asked
    abstract = sample_papers["abstract"].to_pylist()
    abstract[5] += " We add a section on robustness."
    store.write("papers", sample_papers.set_column(
        sample_papers.schema.get_field_index("abstract"), "abstract", pa.array(abstract)))
    similar.similar(cfg, store)
    assert llm.embedding_requests[-1]["input"] == [
        f"{sample_papers['title'][5].as_py()}\n{abstract[5]}"]


def test_embeddings_come_in_over_runs_and_the_lists_follow_when_all_have_one(
        store_with_papers, sample_papers, llm, monkeypatch):
    cfg, store = store_with_papers
    cfg = _embedding(cfg, llm, monkeypatch, embeddings_per_run=500)
    n = sample_papers.num_rows
    first = similar.similar(cfg, store)
    assert "embeddings 500 of" in first.line() and "lists by words" in first.line()
    assert store.read("similar")["method"][0].as_py().startswith("tfidf/")
    assert "embeddings 1,000 of" in similar.similar(cfg, store).line()
    last = similar.similar(cfg, store)
    assert last.made == n and "lists by words" not in last.line()
    assert "+replay-embed/" in store.read("similar")["method"][0].as_py()


@pytest.mark.parametrize("fault", ["500", "page"])
def test_a_failing_embeddings_server_leaves_the_lists_by_words(store_with_papers, llm,
                                                               monkeypatch, fault):
    cfg, store = store_with_papers
    cfg = _embedding(cfg, llm, monkeypatch)
    llm.inject(fault)
    found = similar.similar(cfg, store)
    assert "embeddings 0 of" in found.line()
    assert ("InternalServerError" if fault == "500" else "unusable") in found.line()
    assert store.read("similar")["method"][0].as_py().startswith("tfidf/")
    assert found.made == store.rows("papers")


@pytest.mark.parametrize(("body", "problem"), [
    (b"<html>", "not JSON"),
    (b'{"data": []}', "expected 2 embeddings"),
    (b'{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 0, "embedding": [0, 1]}]}',
     "indices"),
    (b'{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [1]}]}',
     "not 2 finite numbers"),
    (b'{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [NaN, 1]}]}',
     "not 2 finite numbers"),
    (b'{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 0]}]}',
     "length 0"),
    # Finite as JSON and float64, inf as float32: the vector would come out NaN.
    (b'{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [1e300, 1]}]}',
     "not 2 finite numbers"),
    (b'{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [3e38, 3e38]}]}',
     "not 2 finite numbers"),
])
def test_an_unusable_embeddings_answer_is_refused_and_says_why(body, problem):
    vectors, why = _embeddings.parse(body, 2, 2)
    assert vectors is None and problem in why


def test_an_embeddings_answer_in_any_order_is_read_in_input_order():
    body = b'{"data": [{"index": 1, "embedding": [0, 3]}, {"index": 0, "embedding": [4, 0]}]}'
    vectors, _ = _embeddings.parse(body, 2, 2)
    assert vectors is not None and [v.tolist() for v in vectors] == [[1.0, 0.0], [0.0, 1.0]]


def test_growth_remakes_lists_by_words_alone_and_fused_with_embeddings(
        store_with_papers, sample_papers, llm, monkeypatch):
    cfg, store = store_with_papers
    older = pc.less(sample_papers["arxiv_id"], sorted(
        sample_papers["arxiv_id"].to_pylist())[sample_papers.num_rows * 3 // 4])

    def grown_by_a_third(config: Config) -> similar.Found:
        store.write("papers", sample_papers.filter(older))
        similar.similar(config, store, full=True)
        store.write("papers", sample_papers)
        return similar.similar(config, store)

    assert grown_by_a_third(cfg).made == sample_papers.num_rows  # word weights moved
    # Fused lists weigh words too: they are made anew likewise.
    assert grown_by_a_third(_embedding(cfg, llm, monkeypatch)).made == sample_papers.num_rows


def test_an_overflowing_embedding_is_never_stored_and_a_stored_bad_one_is_asked_again(
        store_with_papers, sample_papers, llm, monkeypatch):
    cfg, store = store_with_papers
    cfg = _embedding(cfg, llm, monkeypatch)
    n = sample_papers.num_rows
    llm.inject("overflow")  # the first batch holds a component of 1e300
    found = similar.similar(cfg, store)
    assert "embeddings 0 of" in found.line() and "unusable" in found.line()
    assert store.rows("embeddings") == 0
    # A vector stored before this check (NaN from an earlier server), and the list made
    # from it, are made again.
    assert f"embeddings {n:,} of {n:,}" in similar.similar(cfg, store).line()
    held = store.read("embeddings")
    poisoned = held["arxiv_id"][7].as_py()
    store.write("embeddings", _poison(held, "vector", 7, [float("nan")] * 256))
    lists = store.read("similar")
    at = lists["arxiv_id"].to_pylist().index(poisoned)
    lists = _poison(lists, "neighbours", at, [poisoned] * 8)
    store.write("similar", _poison(lists, "scores", at, [-float("inf")] + [float("nan")] * 7))
    asked = len(llm.embedding_requests)
    similar.similar(cfg, store)
    assert len(llm.embedding_requests) == asked + 1
    assert len(llm.embedding_requests[-1]["input"]) == 1
    vectors = np.array(store.read("embeddings")["vector"].to_pylist(), np.float32)
    assert np.isfinite(vectors).all()
    lists = store.read("similar")
    scores = pc.list_flatten(lists["scores"]).to_numpy(zero_copy_only=False)
    assert np.isfinite(scores).all()
    mine = _lists(store)[poisoned]
    assert poisoned not in mine and len(mine) == 8


def _poison(table: pa.Table, column: str, row: int, value: list) -> pa.Table:
    values = table[column].to_pylist()
    values[row] = value
    i = table.schema.get_field_index(column)
    return table.set_column(i, column, pa.array(values, table.schema.field(i).type))


def test_an_embeddings_server_that_trickles_its_answer_times_out_as_a_whole(
        store_with_papers, trickle, monkeypatch):
    cfg, store = store_with_papers
    monkeypatch.setenv("TEST_EMBEDDINGS_KEY", "k")
    cfg = dataclasses.replace(cfg, digest=dataclasses.replace(
        cfg.digest, base_url=trickle, max_retries=0, api_key_env="TEST_EMBEDDINGS_KEY",
        timeout_seconds=0.5), similar=dataclasses.replace(cfg.similar,
                                                          embeddings_model="replay-embed"))
    clock = time.monotonic()
    found = similar.similar(cfg, store)
    assert time.monotonic() - clock < 20  # the lists by words take most of it
    assert "embeddings 0 of" in found.line() and "APITimeoutError" in found.line()
    assert store.read("similar")["method"][0].as_py().startswith("tfidf/")
