"""Crash consistency of every command that writes: a child process dies (os._exit) or gets
ENOSPC just before its Nth write boundary (os.replace, os.rename, os.fsync, a git command),
for every N the command reaches; then the same command runs again, and the store (and the
data branch) must equal what one uninterrupted run gives."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline import config as config_mod
from pipeline import databranch, ingest
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.replay.notify import NotifyReplay
from pipeline.replay.openai import OpenAIReplay
from pipeline.sources import SOURCES
from pipeline.store import MANIFEST, Store
from pipeline.store.manifest import READERS
from tests.crashing import CRASHED, Outcome, run_cli
from tests.support.replays import ingest_arxiv_paths
from tests.support.stores import (
    PARTITIONED_STORE,
    git,
    git_config_env,
    https_alias,
    same_state,
    store_state,
)

pytestmark = pytest.mark.crash  # every case kills a process: `make test-fast` skips them

DAY1, DAY2, DAY3 = sample.days()[:3]
T1 = sample.run_at(DAY1)
T2 = sample.run_at(DAY2)
T3 = sample.run_at(DAY3)  # the first revisions
NEXT_MONTH = dt.datetime(2026, 7, 2, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Servers:
    arxiv: ArxivReplay
    hf: HFReplay
    llm: OpenAIReplay
    chat: NotifyReplay


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with ArxivReplay(sample.entries()) as arxiv, HFReplay() as hf, OpenAIReplay() as llm, \
            NotifyReplay() as chat:
        arxiv.as_of = T2
        yield Servers(arxiv, hf, llm, chat)


def _config_text(s: Servers, topic: str = "") -> str:
    fast = "delay_seconds = 0\nbackoff_seconds = 0.01\nmax_backoff_seconds = 0.05\n"
    return (f'[store]\npath = "data"\n\n[sources.arxiv]\napi_url = "{s.arxiv.url}"\n{fast}'
            f'oai_url = "{s.arxiv.base}/oai"\nfeed_url = "{s.arxiv.base}/rss/"\n'
            'categories = ["cs.CL", "cs.LG"]\n'
            f'\n[sources.hf]\nendpoint = "{s.hf.endpoint}"\n{fast}'
            f'\n[digest]\nbase_url = "{s.llm.url}"\nconcurrency = 1\nselection = "topics"\n'
            # 29 papers to digest: a checkpoint at 20, and all done in one run
            '\n[[topics]]\nslug = "rl"\nname = { zh = "强化学习", en = "RL" }\n'
            'keywords = ["reinforcement", "agent", "reward", "planning", "policy", "robot", '
            '"game", "control"]\n'
            f"{topic}")


def _project(folder: Path, s: Servers) -> config_mod.Config:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "papertrail.toml").write_text(_config_text(s), encoding="utf-8")
    return config_mod.load(folder / "papertrail.toml")


def _clone(folder: Path, s: Servers) -> config_mod.Config:
    """A checkout of the project whose origin is the bare repository beside it."""
    cfg = _project(folder, s)
    git(folder, "init", "--quiet")
    git(folder, "remote", "add", "origin", "../github.git")
    return cfg


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory, servers: Servers) -> dict[str, Path]:
    """Folders each case starts from (copied, never changed)."""
    root = tmp_path_factory.mktemp("templates")
    servers.arxiv.as_of = T1
    day1 = _project(root / "day1", servers)
    ingest.ingest_arxiv(day1, Store(day1.store_path), now=T1)
    servers.arxiv.as_of = T2
    shutil.copytree(root / "day1", root / "day2")
    day2 = config_mod.load(root / "day2" / "papertrail.toml")
    ingest_arxiv_paths(day2, Store(day2.store_path), T2)
    servers.arxiv.as_of = T3
    shutil.copytree(root / "day2", root / "day3")
    day3 = config_mod.load(root / "day3" / "papertrail.toml")
    ingest_arxiv_paths(day3, Store(day3.store_path), T3)
    # A store that first met day 1's revised papers at v2 (OAI-PMH alone, at day 3): the
    # texts of their v1 are what the `versions` source fetches.
    first_at_v2 = _project(root / "first-at-v2", servers)
    ingest.ingest(first_at_v2, Store(first_at_v2.store_path), "oai", now=T3)
    servers.arxiv.as_of = T2

    # The data branch: another run saved day 1, ours restored it and ingested day 2, then
    # the other run saved HF picks first, so our save has to fold theirs in.
    branch = root / "branch"
    branch.mkdir()
    subprocess.run(["git", "init", "--quiet", "--bare", str(branch / "github.git")], check=True)
    other = _clone(branch / "other", servers)
    shutil.copytree(root / "day1" / "data", other.store_path)
    databranch.save(other, other.root, now=T1)
    ours = _clone(branch / "ours", servers)
    databranch.restore(ours.root, ours.store_path)
    ingest.ingest_arxiv(ours, Store(ours.store_path), now=T2)
    ingest.ingest_hf(other, Store(other.store_path), now=T2)
    databranch.save(other, other.root, now=T2)
    shutil.rmtree(branch / "other")
    # A clone with nothing restored yet, a fork's whose own remote has no data branch yet
    # (it seeds from the project's, cut to its scope), and one holding an older store.
    _clone(branch / "fresh", servers)
    subprocess.run(["git", "init", "--quiet", "--bare", str(branch / "fork.git")], check=True)
    _clone(branch / "seeded", servers)
    git(branch / "seeded", "remote", "set-url", "origin", "../fork.git")
    shutil.copytree(root / "day1" / "data", branch / "stale" / "data")
    _clone(branch / "stale", servers)
    # A store that holds nothing yet (but its manifest), for the announcement's first run
    # to fetch all it lists.
    empty = _project(root / "empty", servers)
    with Store(empty.store_path).lock():
        pass
    # A fork's first run: a store folder nothing has been written to yet.
    _project(root / "new", servers)
    # The store the last release wrote, which the first command to open it upgrades.
    shutil.copytree(PARTITIONED_STORE, root / "release" / "data")
    _project(root / "release", servers)
    return {"day1": root / "day1", "day2": root / "day2", "day3": root / "day3",
            "branch": branch, "release": root / "release", "empty": root / "empty",
            "new": root / "new", "first-at-v2": root / "first-at-v2"}


@dataclass(frozen=True)
class Case:
    template: str
    project: str  # the folder inside the copy that holds papertrail.toml
    args: tuple[str, ...]
    now: dt.datetime
    topic: str = ""  # config added for this case
    # A run that commits checkpoints: after a crash past one, the rerun finds that work
    # done, and its ledger row counts it as cached (what it spent is on the digest rows).
    checkpoints: bool = False
    # Papers edited by hand before the run (a row dropped): what `rebuild` repairs.
    papers_edited: bool = False


# The project's branch, which the fork seeds from, by an https URL (the only kind accepted)
SEED_URL, SEED_ALIAS = https_alias("../github.git")

# Where a source's ingest starts, when not from day 1's store at day 2's run
START = {
    # The feed at T2 lists day 1: fetched by id, stored, and the completeness ledger written.
    "announce": ("empty", T2),
    # The texts of earlier versions, by versioned id: versions rows, their snapshot, the run.
    "versions": ("first-at-v2", T3),
}



def _ingest(name: str) -> Case:
    template, now = START.get(name, ("day1", T2))
    return Case(template, ".", ("ingest", "--source", name), now)


CASES = {
    **{f"ingest {name}": _ingest(name) for name in SOURCES},  # every registered source
    "ingest into a new store": Case("new", ".", ("ingest", "--source", "arxiv"), T1),
    "enrich": Case("day1", ".", ("enrich",), T1,
                   '\n[[topics]]\nslug = "agents"\nname = { zh = "智能体", en = "Agents" }\n'
                   'keywords = ["agent"]\n'),
    "digest": Case("day1", ".", ("digest",), T1, checkpoints=True),
    "notes": Case("day3", ".", ("notes",), T3),
    "similar": Case("day2", ".", ("similar",), T2),
    "similar by embeddings": Case("day2", ".", ("similar",), T2,
                                  '\n[similar]\nembeddings_model = "replay-embed"\n'),
    "rebuild": Case("day2", ".", ("rebuild",), T2, papers_edited=True),
    # Two channels, each committed on its own, then the run's row.
    "notify": Case("day2", ".", ("notify",), T2,
                   '\n[[follows]]\ncategories = ["cs.CL"]\n'
                   '\n[[notify]]\nkind = "slack"\nmax_items = 10\n'
                   '\n[[notify]]\nkind = "webhook"\nurl_env = "NOTIFY_WEBHOOK_URL"\n'
                   'format = "immediate"\nmax_items = 5\n', checkpoints=True),
    "data compact": Case("day2", ".", ("data", "compact"), NEXT_MONTH),
    "data save": Case("branch", "ours", ("data", "save"), T2),
    "data restore": Case("branch", "fresh", ("data", "restore"), T2),
    "data restore --seed-from": Case("branch", "seeded",
                                     ("data", "restore", "--seed-from", SEED_URL), T2),
    "data restore --force": Case("branch", "stale", ("data", "restore", "--force"), T2),
    "status of a store to upgrade": Case("release", ".", ("status",), T2),
}


def _prepare(case: Case, templates: dict[str, Path], servers: Servers, into: Path) -> Path:
    shutil.copytree(templates[case.template], into)
    project = into / case.project
    (project / "papertrail.toml").write_text(_config_text(servers, case.topic),
                                             encoding="utf-8")
    if case.papers_edited:
        store = Store(project / "data")
        store.write("papers", store.read("papers").slice(1))
    return project


_RUN_COUNTS = ["new", "unchanged", "requests", "tokens_in", "tokens_out", "details"]


def _state(project: Path, case: Case | None = None) -> dict[str, object]:
    """Everything a run leaves that must not depend on a crash: every table (run ids and
    run durations aside, which differ between any two runs), every snapshot's rows in
    order; with a data branch, the same of the store it holds, and whether the store
    knows the branch's tip."""
    state = store_state(project / "data")
    if case is not None and case.checkpoints:
        state["runs"] = state["runs"].drop_columns(_RUN_COUNTS)  # type: ignore[attr-defined]
    remote = project.parent / "github.git"
    if remote.exists():
        held = project.parent / "branch-state"
        shutil.rmtree(held, ignore_errors=True)
        databranch._extract(remote, "data", held)
        state["branch"] = store_state(held)
        shutil.rmtree(held)
        tip = project / "data" / databranch.BASE_FILE
        state["tip known"] = tip.exists() and tip.read_text().strip() == git(
            remote, "rev-parse", "data")
    return state


def _leftovers(project: Path) -> list[str]:
    """Files in the store that its manifest does not name (after one more writer's lock)."""
    store = Store(project / "data")
    with store.lock():
        pass
    named = {str(p) for p in store.files()} | {str(project / "data" / MANIFEST)}
    return sorted(str(p) for p in (project / "data").rglob("*")
                  if p.is_file() and p.name not in (".lock", READERS, databranch.BASE_FILE)
                  and str(p) not in named)


def _matrix(name: str, how: str, tmp_path: Path, templates: dict[str, Path],
            servers: Servers) -> list[tuple[int, bool]]:
    """For each boundary N of the command: (N, whether the store right after the fault is
    sound and the rerun gives what one run gives — or, when the fault came after the
    command's last commit, what two runs give)."""
    case = CASES[name]
    env = {"OPENAI_API_KEY": "test-key", "SLACK_WEBHOOK_URL": servers.chat.slack_url,
           "NOTIFY_WEBHOOK_URL": servers.chat.hook_url, **git_config_env(SEED_ALIAS)}

    def run(project: Path, **fault: int) -> Outcome:
        return run_cli(["--config", str(project / "papertrail.toml"), *case.args],
                       now=case.now, env=env, **fault)

    reference = _prepare(case, templates, servers, tmp_path / "reference")
    clean = run(reference)
    assert clean.status == 0 and clean.commits, clean
    once = _state(reference, case)
    assert run(reference).status == 0
    twice = _state(reference, case)
    rows = []
    for n in range(1, clean.boundaries + 1):
        project = _prepare(case, templates, servers, tmp_path / f"{how}-{n}")
        hit = run(project, **({"crash_at": n} if how == "crash" else {"enospc_at": n}))
        assert hit.status == (CRASHED if how == "crash" else 1), (name, how, n, hit)
        sound = not Store(project / "data").check()
        assert run(project).status == 0, (name, how, n)
        expected = once if n <= clean.commits[-1] else twice
        rows.append((n, sound and same_state(_state(project, case), expected)
                     and not _leftovers(project)))
        shutil.rmtree(tmp_path / f"{how}-{n}")
    return rows


@pytest.mark.parametrize("how", ["crash", "enospc"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_rerun_after_a_crash_at_any_write_boundary_equals_an_uninterrupted_run(
        name, how, tmp_path, templates, servers):
    rows = _matrix(name, how, tmp_path, templates, servers)
    print(f"{name} × {how}: " + " ".join(f"{n}{'=' if ok else '≠'}" for n, ok in rows))
    assert all(ok for _, ok in rows), rows
