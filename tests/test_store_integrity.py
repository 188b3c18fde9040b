"""The store's commit point, its guards against losing data, and the upgrade of stores
earlier releases wrote (before the manifest, before partitions, before `hf` was a table)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from pipeline import config as config_mod
from pipeline import databranch, ingest
from pipeline.cli import cli
from pipeline.config import Config
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.sources import store_tables
from pipeline.store import MANIFEST, Store, StoreError, StoreLocked
from pipeline.tables import HF_COLUMNS, PAPERS, PAPERS_WITH_HF, to_table
from tests.support.replays import ingest_arxiv_paths
from tests.support.stores import PARTITIONED_STORE, checkout, same_state, store_state

DAYS = sample.days()
RELEASE_STORE = Path(__file__).parent / "data" / "store-v2"


def _at(day: str) -> dt.datetime:
    return sample.run_at(day)


def _ingest(cfg: Config, replay: ArxivReplay, day: str) -> None:
    replay.as_of = _at(day)
    ingest.ingest_arxiv(cfg, Store(cfg.store_path), now=replay.as_of)


@pytest.fixture
def store_of_two_days(config: Config, replay: ArxivReplay) -> Store:
    for day in DAYS[:2]:
        _ingest(config, replay, day)
    return Store(config.store_path)


def _tables(store: Store) -> dict[str, pa.Table]:
    return {name: store.read(name) for name in store_tables()}


def _today(tables: dict[str, pa.Table], papers_with_hf: pa.Table) -> dict[str, pa.Table]:
    """The tables as this release holds them, given papers with every HF column: those
    columns, of the papers the community picked, are the hf table."""
    picked = papers_with_hf.filter(pc.is_valid(papers_with_hf["hf_day"]))
    return {name: store_tables()[name].schema.empty_table() for name in store_tables()} | {
        **tables, "papers": papers_with_hf.select(PAPERS.names),
        "hf": picked.select(["arxiv_id", *HF_COLUMNS])}


def test_a_write_that_fails_midway_leaves_the_last_commit_and_no_file_behind(store_of_two_days):
    store = store_of_two_days
    before = _tables(store)
    with pytest.raises(RuntimeError), store.lock():
        store.append("versions", store.read("versions").slice(0, 3))
        raise RuntimeError("the process fails before it writes papers")
    assert _tables(store) == before
    assert sorted(p.name for p in (store.root / "tables").iterdir()) == sorted(
        p.name for p in store.files() if p.parent.name == "tables")


def test_leftovers_of_a_crashed_writer_are_removed_when_the_next_one_starts(store_of_two_days):
    store = store_of_two_days
    orphan = store.root / "tables" / "papers-999999-deadbeef.parquet"
    orphan.write_bytes(b"half a file")
    tmp = store.root / f".{MANIFEST}.123.tmp"
    tmp.write_text("{")
    snap = store.root / "snapshots" / "arxiv" / "2026-06-30" / "20260630T010000Z-arxiv-x.parquet"
    snap.parent.mkdir(parents=True)
    snap.write_bytes(b"never committed")
    with store.lock():
        pass
    assert not orphan.exists() and not tmp.exists() and not snap.parent.exists()
    assert not store.check()


def _release_store(into: Path) -> dict[str, pa.Table]:
    """A copy of the store the release before partitions made (tests/data/store-v2: the
    first sample day, one `papertrail run` with arXiv, Hugging Face and digests), and its
    tables as this release reads them (that one held one file each, papers with its HF
    columns); a table it did not have yet (similar) reads as empty."""
    shutil.copytree(RELEASE_STORE, into)
    manifest = json.loads((into / MANIFEST).read_text())
    tables = {name: pq.read_table(into / t["path"]).replace_schema_metadata(None)
              for name, t in manifest["tables"].items()}
    return _today(tables, tables["papers"])


@pytest.mark.parametrize("layout", ["manifest", "before the manifest"])
def test_a_store_made_by_the_release_before_partitions_migrates_on_its_first_write(
        tmp_path, config, replay, layout):
    root = tmp_path / "data"
    expected = _release_store(root)
    if layout == "before the manifest":  # the same files at fixed names
        manifest = json.loads((root / MANIFEST).read_text())
        for name, table in manifest["tables"].items():
            (root / table["path"]).rename(root / f"{name}.parquet")
        (root / MANIFEST).unlink()
    store = Store(root)
    assert _tables(store) == expected  # read as it is
    with store.lock():  # the first writer migrates it, even one that writes nothing
        pass
    assert _tables(store) == expected and not store.check()
    assert json.loads((root / MANIFEST).read_text())["format"] == 3
    assert not list(root.glob("*.parquet")) and len(list((root / "tables").iterdir())) == len(
        store.files()) - len(store.snapshots())
    assert store.rows("papers") == 243 and store.rows("hf") == 2
    assert json.loads((root / MANIFEST).read_text())["migrations"] == [
        "tables-in-partitions", "hf-in-its-own-table"]

    cfg = dataclasses.replace(config, store=dataclasses.replace(config.store, path=root))
    _ingest(cfg, replay, DAYS[1])  # and it goes on as any store
    after = _tables(store)
    assert after["runs"].num_rows == 4 and after["digests"].equals(expected["digests"])
    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(root, rebuilt)
    ingest.rebuild(cfg, Store(rebuilt))
    for name in ("papers", "versions"):
        assert Store(rebuilt).read(name).equals(after[name])


def test_rebuild_refuses_when_a_snapshot_is_missing_and_names_the_run(store_of_two_days, config):
    store = store_of_two_days
    papers = store.rows("papers")
    lost = store.snapshots()[0]
    lost.path.unlink()
    with pytest.raises(StoreError, match=lost.run_id):
        ingest.rebuild(config, store)
    assert store.rows("papers") == papers
    result = CliRunner().invoke(cli, ["--config", str(config.path), "rebuild"])
    assert result.exit_code == 1 and lost.run_id in result.output and "--force" in result.output
    forced = ingest.rebuild(config, store, force=True)
    assert forced["papers"] < papers and not store.check()


def test_a_corrupt_run_ledger_names_a_remedy_that_works(store_of_two_days, config):
    store = store_of_two_days
    papers = store.read("papers")
    store.table_files("runs")[0].write_bytes(b"PAR1 garbage")
    result = CliRunner().invoke(cli, ["--config", str(config.path), "status"])
    assert result.exit_code == 1 and "rebuild --force" in result.output
    fixed = CliRunner().invoke(cli, ["--config", str(config.path), "rebuild", "--force"])
    assert fixed.exit_code == 0, fixed.output
    assert store.read("runs").num_rows == 0 and store.read("papers").equals(papers)


def _saved_branch(tmp_path: Path, remote: Path, replay: ArxivReplay) -> Config:
    cfg = checkout(tmp_path, "run", remote, replay.url)
    databranch.restore(cfg.root, cfg.store_path)
    _ingest(cfg, replay, DAYS[0])
    databranch.save(cfg, cfg.root, now=_at(DAYS[0]))
    return cfg


def test_save_refuses_a_store_that_fails_its_check(tmp_path, remote, replay):
    cfg = _saved_branch(tmp_path, remote, replay)
    _ingest(cfg, replay, DAYS[1])
    store = Store(cfg.store_path)
    store.table_files("versions")[0].write_bytes(b"not parquet")
    before = subprocess.run(["git", "-C", str(remote), "rev-parse", "data"],
                            capture_output=True, text=True).stdout
    with pytest.raises(databranch.DataBranchError, match="versions"):
        databranch.save(cfg, cfg.root)
    after = subprocess.run(["git", "-C", str(remote), "rev-parse", "data"],
                           capture_output=True, text=True).stdout
    assert after == before


def test_save_refuses_a_store_that_holds_fewer_papers_than_the_branch(tmp_path, remote, replay):
    cfg = _saved_branch(tmp_path, remote, replay)
    store = Store(cfg.store_path)
    store.write("papers", store.read("papers").slice(0, 10))  # e.g. a bad hand edit
    args = ["--config", str(cfg.path), "data", "save"]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 1 and "10 papers" in refused.output
    forced = CliRunner().invoke(cli, [*args, "--force"])
    assert forced.exit_code == 0 and "no change" not in forced.output, forced.output


@pytest.mark.parametrize("command", [["data", "restore", "--force"], ["data", "save"],
                                     ["data", "compact"]])
def test_data_commands_take_the_writer_lock(command, tmp_path, remote, replay):
    cfg = _saved_branch(tmp_path, remote, replay)
    before = _tables(Store(cfg.store_path))
    with Store(cfg.store_path).lock():  # e.g. an ingest still running
        result = CliRunner().invoke(cli, ["--config", str(cfg.path), *command])
    assert result.exit_code == 1 and "locked by another papertrail process" in result.output
    assert _tables(Store(cfg.store_path)) == before


def test_restore_into_a_store_that_already_holds_the_branch_is_done_not_refused(
        tmp_path, remote, replay):
    cfg = _saved_branch(tmp_path, remote, replay)
    (cfg.store_path / databranch.BASE_FILE).unlink()  # a restore that stopped before this
    again = databranch.restore(cfg.root, cfg.store_path)
    assert again.commit and (cfg.store_path / databranch.BASE_FILE).read_text().strip() == (
        again.commit)
    Store(cfg.store_path).write("papers", Store(cfg.store_path).read("papers").slice(0, 1))
    with pytest.raises(databranch.DataBranchError, match="not empty"):
        databranch.restore(cfg.root, cfg.store_path)


def test_the_lock_is_refused_to_a_second_writer(store_of_two_days):
    with store_of_two_days.lock(), pytest.raises(StoreLocked):
        Store(store_of_two_days.root).write("papers", store_of_two_days.read("papers"))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 1 MiB (root mounts one here and in CI; elsewhere the test is skipped)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                          capture_output=True)
    if made.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def _fill(disk: Path, leave: int) -> None:
    """Take all but `leave` bytes of the file system."""
    free = shutil.disk_usage(disk).free
    (disk / "ballast").write_bytes(b"\0" * max(free - leave, 0))


def test_a_full_disk_fails_ingest_in_one_line_and_after_space_is_freed_the_rerun_is_exact(
        tmp_path, small_disk, replay, capfd):
    from tests.crashing import run_cli

    def project(folder: Path, store: Path) -> Config:
        folder.mkdir()
        (folder / "papertrail.toml").write_text(
            f'[store]\npath = "{store}"\n\n[sources.arxiv]\napi_url = "{replay.url}"\n'
            f'oai_url = "{replay.base}/oai"\nfeed_url = "{replay.base}/rss/"\n'
            'delay_seconds = 0\ncategories = ["cs.CL"]\n', encoding="utf-8")
        return config_mod.load(folder / "papertrail.toml")

    def ingest_day2(cfg: Config) -> int:
        replay.as_of = _at(DAYS[1])
        return run_cli(["--config", str(cfg.path), "ingest", "--source", "arxiv"],
                       now=_at(DAYS[1])).status

    clean = project(tmp_path / "clean", tmp_path / "clean-data")
    full = project(tmp_path / "full", small_disk / "data")
    for cfg in (clean, full):
        _ingest(cfg, replay, DAYS[0])
    day1 = store_state(full.store_path)
    assert ingest_day2(clean) == 0
    _fill(small_disk, leave=16 * 1024)
    capfd.readouterr()
    assert ingest_day2(full) == 1
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "Traceback" not in err[0]
    assert not Store(full.store_path).check()
    assert same_state(store_state(full.store_path), day1)  # nothing of the failed run is visible

    (small_disk / "ballast").unlink()
    assert ingest_day2(full) == 0
    assert same_state(store_state(full.store_path), store_state(clean.store_path))


def test_a_branch_whose_manifest_names_a_file_outside_the_store_is_refused(
        tmp_path, remote, replay):
    cfg = _saved_branch(tmp_path, remote, replay)
    # Someone else's data branch (e.g. one given to --seed-from) with a hostile manifest.
    work = tmp_path / "hostile"
    subprocess.run(["git", "clone", "--quiet", "--branch", "data", str(remote), str(work)],
                   check=True)
    manifest = json.loads((work / "data" / MANIFEST).read_text())
    manifest["snapshots"].append("../../escaped.parquet")
    (work / "data" / MANIFEST).write_text(json.dumps(manifest))
    (work / "escaped.parquet").write_bytes(b"PAR1")
    for args in (["add", "-A"], ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm",
                                 "hostile"], ["push", "-q", "origin", "data"]):
        subprocess.run(["git", "-C", str(work), *args], check=True)

    fresh = checkout(tmp_path, "fresh", remote, replay.url)
    result = CliRunner().invoke(cli, ["--config", str(fresh.path), "data", "restore"])
    assert result.exit_code == 1 and "outside the store" in result.output
    assert [p for p in tmp_path.rglob("escaped.parquet") if work not in p.parents] == []
    assert Store(fresh.store_path).is_empty()
    assert Store(cfg.store_path).rows("papers") > 0  # the first clone is untouched


def _saved_as_data_branch(tmp_path: Path, remote: Path,
                          store: Callable[[Path], dict[str, pa.Table]]) -> dict[str, pa.Table]:
    """An earlier release's store (`store` copies it into a folder and says what its tables
    read as) pushed as the data branch of `remote`."""
    work = tmp_path / "earlier-release"
    subprocess.run(["git", "clone", "--quiet", str(remote), str(work)], check=True)
    expected = store(work / "data")
    for args in (["checkout", "-q", "--orphan", "data"], ["add", "-A"],
                 ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "earlier"],
                 ["push", "-q", "origin", "data"]):
        subprocess.run(["git", "-C", str(work), *args], check=True)
    return expected


def test_a_branch_saved_by_the_release_before_partitions_restores_and_saves_partitioned(
        tmp_path, remote, replay):
    expected = _saved_as_data_branch(tmp_path, remote, _release_store)

    fresh = checkout(tmp_path, "fresh", remote, replay.url)
    databranch.restore(fresh.root, fresh.store_path)
    assert _tables(Store(fresh.store_path)) == expected
    _ingest(fresh, replay, DAYS[1])
    assert databranch.save(fresh, fresh.root, now=_at(DAYS[1])).commit
    tree = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "data"],
                          capture_output=True, text=True, check=True).stdout.split()
    saved = json.loads(subprocess.run(
        ["git", "-C", str(remote), "show", f"data:data/{MANIFEST}"],
        capture_output=True, text=True, check=True).stdout)
    assert saved["format"] == 3 and set(saved["tables"]) == {
        "papers", "hf", "versions", "digests", "runs"}
    assert not [f for f in tree if f.startswith("data/tables/") and "-" not in f]
    assert Store(fresh.store_path).read("digests").equals(expected["digests"])


def _as_saved(root: Path, name: str, key: list[str]) -> pa.Table:
    """A table of a partitioned store as the release that wrote it read it: each
    partition's files in order, the last row of each key winning."""
    manifest = json.loads((root / MANIFEST).read_text())
    files = [f for _, p in sorted(manifest["tables"][name].items())
             for f, _ in p["base"] + p["deltas"]]
    df = pd.concat([pq.read_table(root / f).to_pandas() for f in files], ignore_index=True)
    df = df.drop_duplicates(key, keep="last").sort_values(key, kind="stable")
    return pa.Table.from_pandas(df, preserve_index=False)


def _partitioned_store(into: Path) -> dict[str, pa.Table]:
    """A copy of the store the last release wrote (tests/data/store-v3: two sample days of
    `papertrail run`), and its tables as this release must read them."""
    shutil.copytree(PARTITIONED_STORE, into)
    papers = _as_saved(into, "papers", ["arxiv_id"])
    signals = _as_saved(into, "signals", ["arxiv_id"])
    at = pc.index_in(papers["arxiv_id"], value_set=signals["arxiv_id"])
    for column in ("hf_upvotes", "hf_stars", "hf_comments"):
        papers = papers.append_column(column, signals[column].take(at))
    with_hf = pa.Table.from_pylist(papers.to_pylist(), schema=PAPERS_WITH_HF)
    return {name: to_table(table, store_tables()[name].schema)
            for name, table in _today({}, with_hf).items()} | {
        "versions": to_table(_as_saved(into, "versions", ["arxiv_id", "version"]),
                             store_tables()["versions"].schema)}


def test_a_store_the_last_release_saved_is_upgraded_when_first_opened(tmp_path, config, replay):
    root = tmp_path / "data"
    expected = _partitioned_store(root)
    assert expected["hf"].num_rows == 20 and expected["papers"].num_rows == 780
    store = Store(root)
    for name in ("papers", "versions", "hf"):  # a reader upgrades it, in one commit
        assert store.read(name).equals(expected[name]), name
    manifest = json.loads((root / MANIFEST).read_text())
    assert manifest["migrations"] == ["tables-in-partitions", "hf-in-its-own-table"]
    assert "signals" not in manifest["tables"] and not list(root.glob("tables/signals-*"))
    assert not store.check() and store.read("digests").num_rows == 40
    assert store.library(["arxiv_id", "hf_upvotes"]).filter(
        pc.is_valid(pc.field("hf_upvotes"))).num_rows == 20

    cfg = dataclasses.replace(config, store=dataclasses.replace(config.store, path=root))
    _ingest(cfg, replay, DAYS[2])  # and it goes on as any store
    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(root, rebuilt)
    ingest.rebuild(cfg, Store(rebuilt))
    for name in ("papers", "versions", "hf"):
        assert Store(rebuilt).read(name).equals(store.read(name)), name


def test_a_store_upgraded_by_a_newer_release_is_refused(tmp_path):
    root = tmp_path / "data"
    shutil.copytree(PARTITIONED_STORE, root)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["migrations"] = ["tables-in-partitions", "hf-in-its-own-table", "from-2027"]
    (root / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=r"newer papertrail \(from-2027\); upgrade papertrail"):
        Store(root).read("papers")


@pytest.mark.slow
def test_a_branch_the_last_release_saved_restores_upgraded_and_saves(tmp_path, remote, replay):
    expected = _saved_as_data_branch(tmp_path, remote, _partitioned_store)

    fresh = checkout(tmp_path, "fresh", remote, replay.url)
    databranch.restore(fresh.root, fresh.store_path)
    assert Store(fresh.store_path).read("hf").equals(expected["hf"])  # upgraded when read
    _ingest(fresh, replay, DAYS[2])
    assert databranch.save(fresh, fresh.root, now=_at(DAYS[2])).commit
    saved = json.loads(subprocess.run(
        ["git", "-C", str(remote), "show", f"data:data/{MANIFEST}"],
        capture_output=True, text=True, check=True).stdout)
    assert saved["migrations"] == ["tables-in-partitions", "hf-in-its-own-table"]
    assert "signals" not in saved["tables"] and "hf" in saved["tables"]


# Three sample days of `papertrail run` saved by the release before arXivRaw's DOIs,
# affiliations and version sizes had a table of their own (54b49d4): its oai snapshot
# lacks those columns, and it has no oai, announcements or notified table.
TODAYS_STORE = Path(__file__).parent / "data" / "store-v4"


def test_a_store_todays_release_saved_is_read_as_it_is_and_goes_on(tmp_path, config, replay):
    root = tmp_path / "data"
    shutil.copytree(TODAYS_STORE, root)
    store = Store(root)
    before = {name: _as_saved(root, name, list(store_tables()[name].key))
              for name in ("papers", "versions", "hf")}
    for name, saved in before.items():  # no migration: read as the release wrote it
        assert store.read(name).equals(to_table(saved, store_tables()[name].schema)), name
    assert not store.check() and store.read("oai").num_rows == 0
    view = store.library(["arxiv_id", "license", "affiliations"])
    assert view.num_rows == before["papers"].num_rows > 1000
    assert view["license"].null_count == view.num_rows  # nothing read of them yet

    cfg = dataclasses.replace(config, store=dataclasses.replace(config.store, path=root))
    replay.as_of = _at(DAYS[3])
    ingest_arxiv_paths(cfg, store, replay.as_of)  # the next day, as any store goes on
    own = store.read("oai")
    assert own.num_rows and own["license"].null_count == 0
    manifest = json.loads((root / MANIFEST).read_text())
    assert manifest["migrations"] == ["tables-in-partitions", "hf-in-its-own-table"]
    rebuilt = tmp_path / "rebuilt"  # the old snapshot and the new one replay alike
    shutil.copytree(root, rebuilt)
    ingest.rebuild(cfg, Store(rebuilt))
    for name in ("papers", "versions", "hf", "oai"):
        assert Store(rebuilt).read(name).equals(store.read(name)), name
