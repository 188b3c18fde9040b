"""The partitioned store: a write rewrites only what changed, deltas fold, no file grows
with the corpus, and whatever the sequence of writes, a read gives what was written."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline.store import Store
from pipeline.store import writing as store_writing
from pipeline.store.partition import keys_of
from pipeline.tables import TABLES


@pytest.fixture
def store_with_sample_papers(tmp_path, sample_papers) -> Store:
    store = Store(tmp_path / "data")
    store.write("papers", sample_papers)
    return store


def _files(store: Store, name: str) -> dict[str, list[str]]:
    """Each partition's file names."""
    return {key: [f.path for f in p.files]
            for key, p in store._manifest().tables.get(name, {}).items()}


def _with(table: pa.Table, column: str, rows: list[int], values: list) -> pa.Table:
    data = table[column].to_pylist()
    for row, value in zip(rows, values, strict=True):
        data[row] = value
    return table.set_column(table.schema.get_field_index(column), column,
                            pa.array(data, table.schema.field(column).type))


def test_the_sample_is_partitioned_by_id_month_and_first_digit(store_with_sample_papers,
                                                               sample_papers):
    store = store_with_sample_papers
    assert set(_files(store, "papers")) == set(
        keys_of(TABLES["papers"], sample_papers).unique().to_pylist()) == {"2606.1", "2606.2"}
    assert store.read("papers").equals(sample_papers)
    assert store.rows("papers") == sample_papers.num_rows


def test_a_changed_paper_writes_one_delta_in_its_partition_and_nothing_else(
        store_with_sample_papers, sample_papers):
    store = store_with_sample_papers
    before = _files(store, "papers")
    row = sample_papers["arxiv_id"].to_pylist().index(
        next(i for i in sample_papers["arxiv_id"].to_pylist() if i.startswith("2606.2")))
    edited = _with(sample_papers, "title", [row], ["A new title"])
    store.write("papers", edited)
    after = _files(store, "papers")
    assert after["2606.1"] == before["2606.1"]  # untouched: the same files
    assert after["2606.2"][:-1] == before["2606.2"] and len(after["2606.2"]) == 2
    delta = store._manifest().tables["papers"]["2606.2"].deltas[0]
    assert delta.rows == 1
    assert store.read("papers").equals(edited)


def test_hugging_face_counts_change_its_own_table_only(store_with_sample_papers, sample_papers):
    store = store_with_sample_papers
    papers = _files(store, "papers")
    ids = sample_papers["arxiv_id"].to_pylist()
    picks = pa.Table.from_pylist([{"arxiv_id": ids[0], "hf_upvotes": 12},
                                  {"arxiv_id": ids[5], "hf_upvotes": 3}])
    store.write("hf", picks)
    assert _files(store, "papers") == papers and store.rows("hf") == 2
    counted = _files(store, "hf")
    store.write("hf", _with(picks, "hf_upvotes", [0], [13]))  # an hour later
    assert _files(store, "papers") == papers and _files(store, "hf") != counted
    assert store.library(["arxiv_id", "hf_upvotes"])["hf_upvotes"].to_pylist()[:1] == [13]
    assert store.read("papers").equals(sample_papers)


def test_deltas_fold_into_the_base_at_half_its_size(store_with_sample_papers, sample_papers):
    store = store_with_sample_papers
    ids = sample_papers["arxiv_id"].to_pylist()
    rows = [i for i, a in enumerate(ids) if a.startswith("2606.1")]
    base = store._manifest().tables["papers"]["2606.1"].base
    table, step = sample_papers, 0
    while store._manifest().tables["papers"]["2606.1"].base == base:
        chunk = rows[step * 40:(step + 1) * 40]
        table = _with(table, "comment", chunk, [f"edit {step}"] * len(chunk))
        store.write("papers", table)
        step += 1
    folded = store._manifest().tables["papers"]["2606.1"]
    assert not folded.deltas and folded.rows == len(rows)
    assert 40 * step * 2 >= len(rows) > 40 * (step - 1) * 2 - 80  # at about half, not sooner
    assert store.read("papers").equals(table)


def test_no_file_holds_more_than_piece_rows(tmp_path, sample_papers, monkeypatch):
    monkeypatch.setattr(store_writing, "PIECE_ROWS", 100)
    store = Store(tmp_path / "data")
    store.write("papers", sample_papers)
    counts = [f.rows for p in store._manifest().tables["papers"].values() for f in p.files]
    assert max(counts) == 100 and sum(counts) == sample_papers.num_rows
    assert store.read("papers").equals(sample_papers)


def test_a_table_that_loses_rows_is_written_again_whole(store_with_sample_papers,
                                                        sample_papers):
    store = store_with_sample_papers
    fewer = sample_papers.slice(1)
    store.write("papers", fewer)
    assert store.read("papers").equals(fewer)
    assert all(not p.deltas for p in store._manifest().tables["papers"].values())


@pytest.mark.slow
def test_any_sequence_of_writes_and_appends_reads_back_as_written(tmp_path, sample_papers):
    """Against a model: the versions table as a dict by key, in key order."""
    rng = random.Random(7)
    store = Store(tmp_path / "data")
    pool = sample_papers.select(["arxiv_id", "version", "updated", "first_seen", "title",
                                 "abstract"]).to_pylist()
    model: dict[tuple[str, int], dict] = {}
    for step in range(40):
        picked = rng.sample(pool, rng.randint(1, 60))
        rows = [{**r, "version": rng.randint(1, 3), "title": f"{r['title']} {step}"}
                for r in picked]
        if rng.random() < 0.5:
            store.append("versions", pa.Table.from_pylist(rows))
            model.update({(r["arxiv_id"], r["version"]): r for r in rows})
        else:
            kept = {k: v for k, v in model.items() if rng.random() > 0.05}  # some removed
            kept.update({(r["arxiv_id"], r["version"]): r for r in rows})
            model = kept
            store.write("versions", pa.Table.from_pylist(list(model.values())))
        expected = [model[k] for k in sorted(model, key=lambda k: (keys_of(
            TABLES["versions"], pa.table({"arxiv_id": [k[0]]}))[0].as_py(), k))]
        got = store.read("versions")
        assert got.num_rows == store.rows("versions") == len(model), step
        assert got.select(["arxiv_id", "version", "title"]).to_pylist() == [
            {c: r[c] for c in ("arxiv_id", "version", "title")} for r in expected], step
    assert not store.check()


def test_the_run_ledger_keeps_the_order_runs_were_recorded(tmp_path):
    store = Store(tmp_path / "data")
    started = pa.scalar(0, pa.timestamp("us", tz="UTC")).as_py()
    for run_id in ("b", "a", "c"):
        store.append_run({"run_id": run_id, "source": "arxiv", "started": started,
                          "finished": started, "status": "ok"})
    assert store.read("runs")["run_id"].to_pylist() == ["b", "a", "c"]
    assert pc.all(pc.equal(keys_of(TABLES["runs"], store.read("runs")), "197001")).as_py()
