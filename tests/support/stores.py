"""Stores as tests set them up and compare them: stores saved by earlier releases, a fresh
checkout of a fork's repository, and a store's whole state."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from pytest import TempPathFactory

from pipeline import config as config_mod
from pipeline.config import Config
from pipeline.sources import store_tables
from pipeline.store import Store
from tests.support.replays import FIXTURES, fast_arxiv

# The store the release before `hf` was a table wrote (partitions, HF counts in `signals`).
PARTITIONED_STORE = FIXTURES / "store-v3"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def https_alias(repo: Path | str) -> tuple[str, dict[str, str]]:
    """An https URL for a local repository, which `data restore --seed-from` accepts, and the
    git config under which git reads that URL from `repo` (a relative `repo` is taken from
    the directory git runs in)."""
    url = f"https://seed.example/{Path(repo).name}"
    return url, {f"url.{repo}.insteadOf": url}


def git_config_env(config: dict[str, str]) -> dict[str, str]:
    """The env that gives every git run under it these config settings."""
    env = {"GIT_CONFIG_COUNT": str(len(config))}
    for i, (key, value) in enumerate(config.items()):
        env |= {f"GIT_CONFIG_KEY_{i}": key, f"GIT_CONFIG_VALUE_{i}": value}
    return env


def checkout(tmp_path: Path, name: str, remote: Path, api_url: str) -> Config:
    """A fresh 'actions/checkout' of the project: a clone with papertrail.toml, no data/."""
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "--quiet")
    git(repo, "remote", "add", "origin", str(remote))
    (repo / "papertrail.toml").write_text('[store]\npath = "data"\n', encoding="utf-8")
    return fast_arxiv(config_mod.load(repo / "papertrail.toml"), api_url)


def store_state(root: Path) -> dict[str, object]:
    """Every table and snapshot of the store at `root`, runs named by their order (their ids
    and times differ between two equal runs)."""
    store = Store(root)
    runs = store.read("runs")
    order = {run_id: f"#{i}" for i, run_id in enumerate(runs["run_id"].to_pylist())}
    state: dict[str, object] = {name: store.read(name) for name in store_tables()}
    state["runs"] = runs.drop_columns(["run_id", "finished"])
    state["snapshots"] = [(s.source, s.day, order.get(s.run_id, "?"), store.read_snapshot(s))
                          for s in store.snapshots()]
    return state


def same_state(a: object, b: object) -> bool:
    """`a == b`, with tables compared by their contents."""
    if isinstance(a, pa.Table):
        return isinstance(b, pa.Table) and a.equals(b)
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(same_state(a[k], b[k]) for k in a))
    if isinstance(a, list | tuple):
        return (isinstance(b, list | tuple) and len(a) == len(b)
                and all(same_state(x, y) for x, y in zip(a, b, strict=True)))
    return a == b


def made_once(tmp_path_factory: TempPathFactory, name: str, make: Callable[[Path], None]
              ) -> Path:
    """A folder `make` fills once per test session, shared by every xdist worker (each
    would make its own in its session fixture): the first to ask makes it under a lock,
    the others wait and read it. Tests read it or copy it, never change it."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, the workers' folders in it
    folder, made = base / name, base / f"{name}.made"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed left
            folder.mkdir()
            make(folder)
            made.touch()
    return folder
