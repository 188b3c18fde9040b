"""The update workflow's data steps, replayed locally: a bare repository stands in for GitHub,
each "run" is a fresh clone (as in Actions) that restores, ingests from the arXiv replay and
saves."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline import compact, databranch, ingest
from pipeline.config import Config
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.sources import store_tables
from pipeline.store import Store
from pipeline.tables import NOTES
from tests.support.replays import fast_arxiv
from tests.support.stores import checkout, git, git_config_env, https_alias

pytestmark = pytest.mark.slow  # real git repositories, pushed and cloned, most with the pipeline

DAYS = sample.days()


def run_once(cfg: Config, replay: ArxivReplay, day: str, *, save: bool = True
             ) -> databranch.SaveResult | None:
    databranch.restore(cfg.root, cfg.store_path)
    replay.as_of = sample.run_at(day)
    ingest.ingest_arxiv(cfg, Store(cfg.store_path), now=replay.as_of)
    return databranch.save(cfg, cfg.root, now=replay.as_of) if save else None


def _tables(store: Store) -> tuple:
    return store.read("papers"), store.read("versions")


def test_two_runs_in_sequence_carry_the_data_forward(tmp_path, remote, replay):
    first = checkout(tmp_path, "run1", remote, replay.url)
    assert databranch.restore(first.root, first.store_path).commit is None  # first run: empty
    replay.as_of = sample.run_at(DAYS[0])
    ingest.ingest_arxiv(first, Store(first.store_path), now=replay.as_of)
    saved = databranch.save(first, first.root, now=replay.as_of)
    assert saved.commit and not saved.merged
    day1 = Store(first.store_path).read("papers").num_rows

    second = checkout(tmp_path, "run2", remote, replay.url)
    restored = databranch.restore(second.root, second.store_path)
    assert restored.commit == saved.commit
    store2 = Store(second.store_path)
    assert store2.read("papers").num_rows == day1
    replay.as_of = sample.run_at(DAYS[1])
    ingest.ingest_arxiv(second, store2, now=replay.as_of)
    again = databranch.save(second, second.root, now=replay.as_of)
    assert git(remote, "rev-parse", "data") == again.commit
    assert git(remote, "rev-list", "--count", "data") == "2"
    assert store2.read("papers").num_rows > day1
    assert len(store2.runs("arxiv")) == 2  # the second run added to the first's ledger

    # Nothing changed since: no commit, no push.
    assert databranch.save(second, second.root, now=replay.as_of).commit is None
    assert git(remote, "rev-parse", "data") == again.commit


def test_a_concurrent_push_is_retried_and_both_changes_survive(tmp_path, remote, replay):
    run_once(checkout(tmp_path, "run1", remote, replay.url), replay, DAYS[0])
    ours = checkout(tmp_path, "ours", remote, replay.url)
    run_once(ours, replay, DAYS[1], save=False)
    # Meanwhile another clone restores the same tip, ingests a later day and pushes first.
    theirs = checkout(tmp_path, "theirs", remote, replay.url)
    run_once(theirs, replay, DAYS[2])
    their_runs = set(Store(theirs.store_path).runs()["run_id"])

    result = databranch.save(ours, ours.root, now=replay.as_of)
    assert result.merged and result.commit
    assert git(remote, "rev-parse", "data") == result.commit

    final = checkout(tmp_path, "final", remote, replay.url)
    databranch.restore(final.root, final.store_path)
    store = Store(final.store_path)
    runs = set(store.runs()["run_id"])
    assert their_runs < runs and len(runs) == 3  # day 1, theirs (day 3) and ours (day 2)
    assert len(store.snapshots()) == 3
    papers, versions = _tables(store)
    ingest.rebuild(final, store)
    assert _tables(store) == (papers, versions)
    ids = set(papers["arxiv_id"].to_pylist())
    assert {e.arxiv_id for e in sample.entries()
            if e.announced <= sample.announced_at(DAYS[2])} <= ids


def test_a_rejected_push_that_is_not_a_conflict_fails_naming_the_command(tmp_path, remote,
                                                                          replay):
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    cfg = checkout(tmp_path, "run", remote, replay.url)
    with pytest.raises(databranch.DataBranchError, match=r"`git -C .* push .*protected branch"):
        run_once(cfg, replay, DAYS[0])


def test_restore_refuses_to_overwrite_a_store_without_force(tmp_path, remote, replay):
    cfg = checkout(tmp_path, "run1", remote, replay.url)
    run_once(cfg, replay, DAYS[0])
    run_once(cfg, replay, DAYS[1], save=False)  # the store now holds more than the branch
    with pytest.raises(databranch.DataBranchError, match="--force"):
        databranch.restore(cfg.root, cfg.store_path)
    assert databranch.restore(cfg.root, cfg.store_path, force=True).files > 0


def test_save_squashes_after_n_commits_and_at_a_new_month(tmp_path, remote, replay):
    cfg = checkout(tmp_path, "run", remote, replay.url)
    store = Store(cfg.store_path)
    databranch.restore(cfg.root, cfg.store_path)
    for i, day in enumerate(DAYS[:4]):
        replay.as_of = sample.run_at(day)
        ingest.ingest_arxiv(cfg, store, now=replay.as_of)
        result = databranch.save(cfg, cfg.root, squash_after=3, now=replay.as_of)
        assert result.squashed == (i == 3)
    assert git(remote, "rev-list", "--count", "data") == "1"
    later = replay.as_of + dt.timedelta(days=40)  # next month: squash regardless of count
    ingest.ingest_arxiv(cfg, store, now=later)
    assert databranch.save(cfg, cfg.root, squash_after=3, now=later).squashed
    assert git(remote, "rev-list", "--count", "data") == "1"


def test_compaction_keeps_rebuild_exact(tmp_path, replay, base_config):
    cfg = fast_arxiv(base_config, replay.url)
    store = Store(cfg.store_path)
    # Every day's run, then one more per day for the sample's re-announced v2s.
    for day in DAYS:
        replay.as_of = sample.run_at(day)
        ingest.ingest_arxiv(cfg, store, now=replay.as_of)
    before = _tables(store)
    snaps_before = [(s.source, s.day, s.run_id) for s in store.snapshots()]
    files_before = len(list((store.root / "snapshots").rglob("*.parquet")))
    report = compact.compact(store, dt.date(2030, 1, 1))
    assert report.months >= 1 and report.files_before == files_before
    assert len(list((store.root / "snapshots").rglob("*.parquet"))) == report.months
    assert [(s.source, s.day, s.run_id) for s in store.snapshots()] == snaps_before
    ingest.rebuild(cfg, store)
    assert _tables(store) == before
    assert compact.compact(store, dt.date(2030, 1, 1)).months == 0  # idempotent


def test_compaction_leaves_the_current_month(tmp_path, replay, base_config):
    cfg = fast_arxiv(base_config, replay.url)
    store = Store(cfg.store_path)
    replay.as_of = sample.run_at(DAYS[0])
    ingest.ingest_arxiv(cfg, store, now=replay.as_of)
    assert compact.compact(store, replay.as_of.date()).months == 0
    assert store.snapshots()[0].row_groups is None  # still a loose file


def test_a_fork_can_start_from_upstreams_data(tmp_path, remote, replay):
    run_once(checkout(tmp_path, "upstream", remote, replay.url), replay, DAYS[0])
    fork_remote = tmp_path / "fork.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(fork_remote)], check=True)
    fork = checkout(tmp_path, "fork", fork_remote, replay.url)
    seeded = databranch.restore(fork.root, fork.store_path, seed=str(remote))
    assert seeded.commit == git(remote, "rev-parse", "data")
    upstream_papers = Store(fork.store_path).read("papers").num_rows
    assert upstream_papers > 0
    saved = databranch.save(fork, fork.root)
    assert saved.commit and not saved.merged  # the fork's own first data commit
    assert git(fork_remote, "rev-list", "--count", "data") == "1"


def test_the_cli_runs_the_data_steps_and_reports_git_errors(tmp_path, remote, replay):
    from click.testing import CliRunner

    from pipeline.cli import cli

    cfg = checkout(tmp_path, "run", remote, replay.url)
    args = ["--config", str(cfg.path), "data"]
    runner = CliRunner()
    first = runner.invoke(cli, [*args, "restore"])
    assert first.exit_code == 0 and "starting with an empty store" in first.output
    missing = runner.invoke(cli, [*args, "save"])
    assert missing.exit_code == 1 and "nothing to save" in missing.output
    replay.as_of = sample.run_at(DAYS[0])
    ingest.ingest_arxiv(cfg, Store(cfg.store_path), now=replay.as_of)
    saved = runner.invoke(cli, [*args, "save", "-m", "data - run 1"])
    assert saved.exit_code == 0 and "committed" in saved.output, saved.output
    assert git(remote, "log", "-1", "--format=%s", "data") == "data - run 1"
    assert "no change" in runner.invoke(cli, [*args, "save"]).output
    summary = runner.invoke(cli, [*args, "summary"])
    assert "| arxiv | ok |" in summary.output and "All sources ok." in summary.output
    bad = runner.invoke(cli, [*args, "restore", "--force", "--remote", str(tmp_path / "nope")])
    assert bad.exit_code == 1 and "papertrail: data branch: `git" in bad.output


def test_the_summary_names_a_failing_source(tmp_path, replay, base_config):
    from pipeline import summary

    cfg = fast_arxiv(base_config, replay.url, max_retries=0)
    store = Store(cfg.store_path)
    replay.inject("503")
    ingest.ingest_arxiv(cfg, store, now=sample.announced_at(DAYS[0]))
    text = summary.markdown(store)
    assert "| arxiv | failed |" in text and "⚠ arxiv failed" in text


def test_a_concurrent_push_merges_with_a_store_compacted_meanwhile(tmp_path, remote, replay):
    for day in DAYS[:2]:
        run_once(checkout(tmp_path, f"run-{day}", remote, replay.url), replay, day)
    ours = checkout(tmp_path, "ours", remote, replay.url)
    run_once(ours, replay, DAYS[2], save=False)
    assert compact.compact(Store(ours.store_path), dt.date(2030, 1, 1)).months == 1
    theirs = checkout(tmp_path, "theirs", remote, replay.url)
    run_once(theirs, replay, DAYS[3])  # pushes loose snapshots of runs we just compacted

    assert databranch.save(ours, ours.root, now=replay.as_of).merged
    store = Store(ours.store_path)
    runs = [s.run_id for s in store.snapshots()]
    assert len(runs) == len(set(runs)) == 4
    papers, versions = _tables(store)
    ingest.rebuild(ours, store)
    assert _tables(store) == (papers, versions)


def test_a_month_file_gives_back_each_run_exactly_even_past_a_row_group(tmp_path):
    import pyarrow as pa

    from pipeline.tables import ARXIV_SNAPSHOT, to_table

    store = Store(tmp_path / "data")
    originals = {}
    for n, (rows, day) in enumerate([(20_001, 3), (3, 4), (5, 4)]):
        ids = [f"2605.{n}{i:05d}" for i in range(rows)]
        table = to_table(pa.table({"arxiv_id": ids, "version": [1] * rows}), ARXIV_SNAPSHOT)
        run_id = f"202605{day:02d}T0{n}0000Z-arxiv-test"
        store.write_snapshot("arxiv", run_id, dt.datetime(2026, 5, day, tzinfo=dt.UTC), table)
        originals[run_id] = table
    assert compact.compact(store, dt.date(2026, 6, 1)).runs == 3
    (month,) = (store.root / "snapshots" / "arxiv").iterdir()
    assert month.name == "2026-05"
    snaps = store.snapshots()
    assert [s.run_id for s in snaps] == sorted(originals)
    for snap in snaps:
        assert store.read_snapshot(snap).equals(originals[snap.run_id])


def test_two_runs_change_notes_both_survive_a_concurrent_save(tmp_path, remote, replay):
    """Rows the snapshots cannot rebuild (digests, change notes, similar lists, embeddings,
    the ledgers) are merged by key: each run's notes survive the other's push."""
    assert {t.name for t in store_tables().values() if t.on_save == "union"} == {
        "digests", "notes", "similar", "embeddings", "notified", "runs", "announcements"}
    run_once(checkout(tmp_path, "run1", remote, replay.url), replay, DAYS[0])
    ours = checkout(tmp_path, "ours", remote, replay.url)
    theirs = checkout(tmp_path, "theirs", remote, replay.url)
    ids = []
    for cfg in (ours, theirs):
        databranch.restore(cfg.root, cfg.store_path)
        store = Store(cfg.store_path)
        arxiv_id = store.read("papers")["arxiv_id"][len(ids)].as_py()
        ids.append(arxiv_id)
        row = {"arxiv_id": arxiv_id, "from_version": 1, "version": 2, "language": "zh-CN",
               "model": "m", "prompt_hash": "p", "status": "ok", "note": f"note of {arxiv_id}",
               "attempts": 1, "created": replay.as_of}
        with store.lock():
            store.write("notes", pa.Table.from_pylist([row], schema=NOTES))
    databranch.save(theirs, theirs.root, now=replay.as_of)
    assert databranch.save(ours, ours.root, now=replay.as_of).merged

    final = checkout(tmp_path, "final", remote, replay.url)
    databranch.restore(final.root, final.store_path)
    notes = Store(final.store_path).read("notes").to_pylist()
    assert sorted((r["arxiv_id"], r["note"]) for r in notes) == sorted(
        (i, f"note of {i}") for i in ids)


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "tables"])
def test_a_seed_branch_holding_a_link_is_refused_in_one_line(tmp_path, remote, replay, target):
    """A store is files and folders; a link in a branch's data/ (absolute, out of it, or
    within) is refused before anything is written, with no traceback."""
    from click.testing import CliRunner

    from pipeline.cli import cli

    seed, made = tmp_path / "seed.git", tmp_path / "made"
    subprocess.run(["git", "init", "--quiet", "--bare", str(seed)], check=True)
    (made / "data" / "tables").mkdir(parents=True)
    (made / "data" / "tables" / "x.parquet").write_bytes(b"PAR1")
    (made / "data" / "link").symlink_to(target)
    git(made.parent, "init", "--quiet", "-b", "data", str(made))
    git(made, "add", "-A")
    git(made, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "seed")
    git(made, "push", "--quiet", str(seed), "data")
    cfg = checkout(tmp_path, "fork", remote, replay.url)
    url, alias = https_alias(seed)
    result = CliRunner().invoke(cli, ["--config", str(cfg.path), "data", "restore",
                                      "--seed-from", url], env=git_config_env(alias))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    tip = git(seed, "rev-parse", "data")[:12]
    assert result.output == (f"papertrail: data branch: 'data/link' at {tip} is a link; a "
                             "store holds only files and folders: refused\n")
    assert Store(cfg.store_path).is_empty() and not (tmp_path / "outside").exists()


# -- what a branch may hold: only the store's files are read, streamed, within bounds -----------

# Runs a command and prints the peak memory (KiB) of the largest process it ran: the command
# itself or a git it started.
_PEAK = """
import resource, subprocess, sys
status = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(status)
"""


# Git streams a file over core.bigFileThreshold (512 MiB by default) when it sends or
# fetches it, and holds a smaller one whole: here 16 MiB on both sides, so the test's
# 200 MiB of zeros stand for the 1.5 GB a branch held (git's own tests lower it so too).
BIG_FILE = "16m"
_BIG = {"core.bigFileThreshold": BIG_FILE}


def _papertrail_peak(cfg: Config, *args: str, config: dict[str, str] | None = None
                     ) -> tuple[int, str, int]:
    """`papertrail ARGS` in a process of its own: its exit status, what it printed, and the
    peak memory in MiB of it or of any git it ran."""
    import sys

    done = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-c",
                           "from pipeline.cli import main; main()", "--config", str(cfg.path),
                           *args], capture_output=True, text=True,
                          env={**os.environ, **git_config_env({**_BIG, **(config or {})})})
    *out, peak = done.stdout.splitlines()
    return done.returncode, "\n".join(out) + done.stderr, int(peak) // 1024


def _commit_to_branch(repo: Path, files: dict[str, int], manifest: str | None = None) -> str:
    """A commit on top of `repo`'s data branch adding a file of zeros of each size (git packs
    them to almost nothing), and replacing the store's manifest when one is given."""
    zeros = repo.parent / "zeros"
    index = {"GIT_INDEX_FILE": str(repo.parent / "index")}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                              text=True, env={**os.environ, **index}).stdout.strip()

    git("read-tree", "data")
    blobs: dict[int, str] = {}
    for path, size in files.items():
        if size not in blobs:
            with open(zeros, "wb") as fh:
                fh.truncate(size)  # sparse: nothing is written
            blobs[size] = git("hash-object", "-w", str(zeros))
        git("update-index", "--add", "--cacheinfo", f"100644,{blobs[size]},{path}")
    if manifest is not None:
        (repo.parent / "manifest.json").write_text(manifest, encoding="utf-8")
        oid = git("hash-object", "-w", str(repo.parent / "manifest.json"))
        git("update-index", "--cacheinfo", f"100644,{oid},data/manifest.json")
    zeros.unlink(missing_ok=True)
    commit = git("-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", git("write-tree"),
                 "-p", "data", "-m", "more")
    git("update-ref", "refs/heads/data", commit)
    return commit


JUNK = 200 * 2**20


@pytest.mark.parametrize("command", ["restore --seed-from", "save"])
def test_a_large_file_the_manifest_does_not_name_is_never_read(tmp_path, remote, replay,
                                                               command):
    """A branch holding 200 MiB of zeros beside its store (a few hundred kB packed): `data
    restore --seed-from` and `data save`'s fold-in take only the store's files, and their
    memory, git's included, stays what it is without the zeros."""
    run_once(checkout(tmp_path, "upstream", remote, replay.url), replay, DAYS[0])
    git(remote, "config", "core.bigFileThreshold", BIG_FILE)
    peaks = []
    for size in (1, JUNK):
        ours = checkout(tmp_path, f"ours-{size}", remote, replay.url)
        if command == "save":  # restored before they pushed the zeros: save folds them in
            databranch.restore(ours.root, ours.store_path)
        tip = _commit_to_branch(remote, {f"data/zeros-{size}": size})
        if command == "save":
            code, out, peak = _papertrail_peak(ours, "data", "save")
            assert code == 0 and "(merged a concurrent push)" in out, out
        else:
            fork_remote = tmp_path / f"fork-{size}.git"
            subprocess.run(["git", "init", "--quiet", "--bare", str(fork_remote)], check=True)
            git(ours.root, "remote", "set-url", "origin", str(fork_remote))
            url, alias = https_alias(remote)
            code, out, peak = _papertrail_peak(ours, "data", "restore", "--seed-from", url,
                                               config=alias)
            assert code == 0 and f"from data @ {tip[:12]}" in out, out
        peaks.append(peak)
        assert not any(p.name.startswith("zeros") for p in ours.store_path.rglob("*"))
        assert Store(ours.store_path).read("papers").num_rows > 0
    print(f"peak memory: {peaks[0]} MiB, with 200 MiB of zeros on the branch {peaks[1]} MiB")
    assert peaks[1] < peaks[0] + 50


def _manifest_naming(repo: Path, paths: list[str]) -> str:
    manifest = json.loads(git(repo, "show", "data:data/manifest.json"))
    manifest["snapshots"] += paths
    return json.dumps(manifest)


@pytest.mark.parametrize(("files", "refusal"), [
    ({"snapshots/arxiv/2026-06-01/big.parquet": 101 * 2**20},
     "'data/snapshots/arxiv/2026-06-01/big.parquet' at {tip} is 101 MiB; a store's file is at "
     "most 100 MiB (GitHub's limit): refused"),
    ({f"snapshots/arxiv/2026-06-01/run-{n:02d}.parquet": 99 * 2**20 for n in range(52)},
     "the store at {tip} is 5.0 GiB; papertrail takes at most 5 GiB (GitHub's advice for a "
     "whole repository): refused"),
], ids=["a file over 100 MiB", "over 5 GiB in all"])
def test_a_store_past_the_bounds_is_refused_in_one_line(tmp_path, remote, replay, files,
                                                       refusal):
    """The manifest names a file of 101 MiB, or 52 of 99 MiB (one blob, 5.0 GiB to write):
    refused before anything is read or written."""
    from click.testing import CliRunner

    from pipeline.cli import cli

    run_once(checkout(tmp_path, "upstream", remote, replay.url), replay, DAYS[0])
    tip = _commit_to_branch(remote, {f"data/{p}": size for p, size in files.items()},
                            _manifest_naming(remote, list(files)))
    fork_remote = tmp_path / "fork.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(fork_remote)], check=True)
    fork = checkout(tmp_path, "fork", fork_remote, replay.url)
    url, alias = https_alias(remote)
    result = CliRunner().invoke(cli, ["--config", str(fork.path), "data", "restore",
                                      "--seed-from", url], env=git_config_env(alias))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output == f"papertrail: data branch: {refusal.format(tip=tip[:12])}\n"
    assert Store(fork.store_path).is_empty()
    assert not list(fork.store_path.rglob("*.parquet"))


PWNED = "--upload-pack=touch PWNED"


@pytest.mark.parametrize("seed", [PWNED, "/srv/upstream.git", "../upstream.git",
                                  "git@github.com:o/r.git", "ssh://github.com/o/r.git",
                                  "http://github.com/o/r.git", "file:///srv/upstream.git",
                                  "https://github.com/o/r.git\n--upload-pack=x", "https://"])
def test_a_seed_other_than_an_https_url_is_refused_naming_the_option(tmp_path, remote, replay,
                                                                      monkeypatch, seed):
    """The workflow's seed_from input reaches `--seed-from` with the write token in the step:
    nothing but an https URL gets to git."""
    from click.testing import CliRunner

    from pipeline.cli import cli

    fork_remote = tmp_path / "fork.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(fork_remote)], check=True)
    cfg = checkout(tmp_path, "fork", fork_remote, replay.url)
    monkeypatch.chdir(cfg.root)
    result = CliRunner().invoke(cli, ["--config", str(cfg.path), "data", "restore",
                                      "--seed-from", seed])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--seed-from'" in result.output
    assert "give an https URL of a repository with a data branch" in result.output
    assert not list(tmp_path.rglob("PWNED"))
    assert Store(cfg.store_path).is_empty()


@pytest.mark.parametrize("command", [("restore",), ("save",)])
def test_a_remote_spelled_as_an_option_is_a_repository_git_cannot_find(tmp_path, remote,
                                                                       replay, monkeypatch,
                                                                       command):
    """`--remote` names a remote or a URL: git gets it after `--`, so it runs nothing."""
    from click.testing import CliRunner

    from pipeline.cli import cli

    cfg = checkout(tmp_path, "fork", remote, replay.url)
    if command == ("save",):
        run_once(cfg, replay, DAYS[0], save=False)
    monkeypatch.chdir(cfg.root)
    result = CliRunner().invoke(cli, ["--config", str(cfg.path), "data", *command,
                                      "--remote", PWNED])
    assert result.exit_code == 1, result.output
    assert "PWNED" in result.output and "--heads --" in result.output
    assert not list(tmp_path.rglob("PWNED"))


def test_an_https_seed_is_read_through_git(tmp_path, remote, replay):
    """An https URL is taken; git reads it (here, through url.<path>.insteadOf, from the
    upstream's local repository)."""
    from click.testing import CliRunner

    from pipeline.cli import cli

    run_once(checkout(tmp_path, "upstream", remote, replay.url), replay, DAYS[0])
    fork_remote = tmp_path / "fork.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(fork_remote)], check=True)
    fork = checkout(tmp_path, "fork", fork_remote, replay.url)
    url, alias = https_alias(remote)
    result = CliRunner().invoke(cli, ["--config", str(fork.path), "data", "restore",
                                      "--seed-from", url], env=git_config_env(alias))
    assert result.exit_code == 0, result.output
    tip = git(remote, "rev-parse", "data")
    assert result.output == f"data restore: {len(Store(fork.store_path).files())} files " \
                            f"from data @ {tip[:12]}\n"
