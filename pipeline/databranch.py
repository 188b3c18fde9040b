"""The `data` branch: where the scheduled workflow keeps the store between runs.

Plain git plumbing on the repository that holds papertrail.toml, so it works the
same on a laptop and in Actions (where the workflow gives the token to the restore
and save steps only, through git's environment): `fetch` the branch into a private
ref, stream the files its manifest names into the store (restore), or stage the store
with a temporary index, `write-tree` and `commit-tree` (save). Nothing is ever checked
out, so the developer's work tree and index are never touched.

Every push carries `--force-with-lease` on the tip we started from, so a push
fails exactly when someone else moved the branch meanwhile. Then we fetch their
tip, fold their data into the store (snapshots are immutable and named by run, so
the union is exact; papers and versions are rebuilt from it) and try again.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import ingest
from pipeline.config import Config
from pipeline.derive import scope
from pipeline.sources import store_tables
from pipeline.store import MANIFEST, RESTORING, Store
from pipeline.store.durable import write_text_atomic
from pipeline.store.manifest import held_files, parse
from pipeline.tables import Table

DEFAULT_BRANCH = "data"
DEFAULT_RETRIES = 3
# Squash once the branch has more commits than this (a day of hourly runs): git keeps
# every replaced partition and folded delta for as long as history does.
DEFAULT_SQUASH_AFTER = 24
BASE_FILE = ".branch-tip"  # in the store: the branch commit the store was restored from
_PREFIX = "data"  # the store's folder inside the branch
_IDENTITY = ["-c", "user.name=papertrail", "-c", "user.email=papertrail@users.noreply.github.com"]
# What a branch may hold, checked before anything is read or written: no file over GitHub's
# limit (a store's files stay under 40 MB), no store over GitHub's strong advice for a
# whole repository (a year of all cs.* is ~250 MB).
MAX_FILE_BYTES = 100 * 2**20
MAX_STORE_BYTES = 5 * 2**30
_CHUNK = 2**20  # what a file is copied by
# Rows of these tables are merged by key; papers and versions are rebuilt from snapshots.
# (A similar list made for a text the papers no longer hold is made again by the next run.)
_BRANCH_README = """# PaperTrail data

Written by the update workflow (`papertrail data save`); do not edit by hand.
`data/` is the Parquet store. This branch is squashed to one commit regularly
(see docs/DATA.md on the main branch), so its history is not an archive.
"""


class DataBranchError(Exception):
    """A git command failed, or two stores cannot be merged without losing data."""


@overload
def git(repo: Path, *args: str, env: dict[str, str] | None = None,
        binary: Literal[False] = False) -> str: ...
@overload
def git(repo: Path, *args: str, env: dict[str, str] | None = None,
        binary: Literal[True]) -> bytes: ...
def git(repo: Path, *args: str, env: dict[str, str] | None = None,
        binary: bool = False) -> str | bytes:
    cmd = ["git", "-C", str(repo), *args]
    try:
        done: subprocess.CompletedProcess[str | bytes] = subprocess.run(
            cmd, check=True, capture_output=True, text=not binary,
            env={**os.environ, **(env or {})})
    except FileNotFoundError:
        raise DataBranchError("git is not installed (needed for the data branch)") from None
    except subprocess.CalledProcessError as exc:
        err = exc.stderr if isinstance(exc.stderr, str) else exc.stderr.decode(errors="replace")
        raise DataBranchError(f"`{' '.join(cmd)}` failed (exit {exc.returncode}): "
                              f"{err.strip()}") from None
    return done.stdout if binary else done.stdout.strip()


def _private_ref(branch: str) -> str:
    return f"refs/papertrail/{branch}"


def fetch(repo: Path, remote: str, branch: str, depth: int) -> str | None:
    """The branch's tip, fetched (at most `depth` commits deep) into a private ref; None
    when the remote has no such branch yet."""
    # `--` before the remote and refs, in every call: a remote named "--upload-pack=..."
    # is then a repository git cannot find, never an option that runs a command.
    if not git(repo, "ls-remote", "--heads", "--", remote, f"refs/heads/{branch}"):
        return None
    git(repo, "fetch", "--quiet", "--no-tags", f"--depth={depth}", "--", remote,
        f"+refs/heads/{branch}:{_private_ref(branch)}")
    return str(git(repo, "rev-parse", "--verify", "--end-of-options", _private_ref(branch)))


@dataclass(frozen=True)
class _Blob:
    path: str  # under data/
    oid: str
    size: int


def _extract(repo: Path, commit: str, into: Path) -> None:
    """The store in the commit's data/ (its manifest and the files it names, nothing else),
    written into `into` (which must not exist), each file streamed from git. A branch may
    be anyone's (`--seed-from`): one holding anything but files and folders (a store has
    no links), or whose store has a file over MAX_FILE_BYTES or more than MAX_STORE_BYTES
    in all, is refused whole, before anything is written."""
    files = _tree(repo, commit)
    manifest = None
    if MANIFEST in files:
        text = _blob(repo, commit, files[MANIFEST])
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise DataBranchError(f"'{_PREFIX}/{MANIFEST}' at {commit[:12]} is not JSON "
                                  f"({exc}): refused") from None
        manifest = parse(raw, Path(f"{commit[:12]}:{_PREFIX}/{MANIFEST}"))
    wanted = [_checked(files[path], commit) for path in sorted(held_files(files, manifest))]
    total = sum(blob.size for blob in wanted)
    if total > MAX_STORE_BYTES:
        raise DataBranchError(f"the store at {commit[:12]} is {total / 2**30:.1f} GiB; "
                              f"papertrail takes at most {MAX_STORE_BYTES / 2**30:.0f} GiB "
                              "(GitHub's advice for a whole repository): refused")
    into.mkdir(parents=True)
    if manifest is not None:
        (into / MANIFEST).write_bytes(text)
    _copy_blobs(repo, wanted, into)


def _tree(repo: Path, commit: str) -> dict[str, _Blob]:
    """The files of the commit's data/ (sizes, not contents), by their path in it;
    anything but a file refuses the branch."""
    listing = git(repo, "ls-tree", "-r", "-l", "-z", "--end-of-options", f"{commit}:{_PREFIX}",
                  binary=True)
    files = {}
    for entry in listing.decode("utf-8", "replace").split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, _, oid, size = meta.split()
        if mode not in ("100644", "100755"):
            what = "a link" if mode == "120000" else "not a file"
            raise DataBranchError(f"{f'{_PREFIX}/{path}'!r} at {commit[:12]} is {what}; a "
                                  "store holds only files and folders: refused")
        files[path] = _Blob(path, oid, int(size))
    return files


def _checked(blob: _Blob, commit: str) -> _Blob:
    if blob.size > MAX_FILE_BYTES:
        raise DataBranchError(f"{f'{_PREFIX}/{blob.path}'!r} at {commit[:12]} is "
                              f"{blob.size / 2**20:,.0f} MiB; a store's file is at most "
                              f"{MAX_FILE_BYTES / 2**20:.0f} MiB (GitHub's limit): refused")
    return blob


def _blob(repo: Path, commit: str, blob: _Blob) -> bytes:
    """A small file of the branch (a manifest), read whole once its size is checked."""
    return git(repo, "cat-file", "blob", _checked(blob, commit).oid, binary=True)


def _copy_blobs(repo: Path, blobs: list[_Blob], into: Path) -> None:
    """Each file into `into`, streamed through one `git cat-file --batch` a chunk at a
    time (git holds one file at most, and checks its size first: `_checked`)."""
    cmd = ["git", "-C", str(repo), "cat-file", "--batch"]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as batch:
        assert batch.stdin is not None and batch.stdout is not None
        for blob in blobs:
            batch.stdin.write(f"{blob.oid}\n".encode())
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if header != [blob.oid.encode(), b"blob", str(blob.size).encode()]:
                raise DataBranchError(f"`{' '.join(cmd)}` answered {header!r} for "
                                      f"{_PREFIX}/{blob.path}")
            dest = into / blob.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            with open(dest, "wb") as fh:
                left = blob.size
                while left:
                    chunk = batch.stdout.read(min(left, _CHUNK))
                    if not chunk:
                        raise DataBranchError(f"`{' '.join(cmd)}` stopped in "
                                              f"{_PREFIX}/{blob.path}")
                    fh.write(chunk)
                    left -= len(chunk)
            batch.stdout.read(1)  # the newline after each file
        batch.stdin.close()


@dataclass(frozen=True)
class RestoreResult:
    commit: str | None
    files: int

    def line(self, branch: str) -> str:
        if self.commit is None:
            return f"data restore: no {branch} branch yet; starting with an empty store"
        return f"data restore: {self.files} files from {branch} @ {self.commit[:12]}"


def restore(repo: Path, store: Path, *, remote: str = "origin", branch: str = DEFAULT_BRANCH,
            force: bool = False, seed: str | None = None,
            scope_of: Config | None = None) -> RestoreResult:
    """Replace the store with the branch's data/ (first run: leave it empty, or start from
    the `seed` remote's branch, e.g. upstream's, when one is given). A seed is another
    site's store: only what `scope_of`'s config selects is kept of it."""
    target = Store(store)
    base_file = store / BASE_FILE
    seeded = False
    with target.lock():
        tip = fetch(repo, remote, branch, depth=1)
        if tip is None and seed:
            tip = fetch(repo, seed, branch, depth=1)
            seeded = tip is not None
        if not target.is_empty() and not force:
            # Restored already: by a run that stopped before it noted the tip, or (a seed)
            # before or while it cut the store to the scope.
            noted = base_file.exists() and base_file.read_text(encoding="utf-8").strip()
            if tip is None or not (target.holds(_branch_file(repo, tip, MANIFEST))
                                   or (seeded and noted == tip)):
                raise DataBranchError(f"{store} is not empty; pass --force to replace it with "
                                      f"the {branch} branch")
            write_text_atomic(base_file, tip + "\n")
        elif tip is not None:
            fresh = store / RESTORING  # inside the store: same file system, removed by lock()
            shutil.rmtree(fresh, ignore_errors=True)
            _extract(repo, tip, fresh)
            target.replace_with(fresh)
            shutil.rmtree(fresh, ignore_errors=True)
            write_text_atomic(base_file, tip + "\n")
    if seeded and scope_of is not None:
        keep_scope(scope_of, target)
    return RestoreResult(tip, len(target.files()) if tip else 0)


def keep_scope(cfg: Config, store: Store) -> dict[str, int]:
    """Drop from every table keyed by paper the papers `cfg` does not select (`scope`), in
    one commit; rows dropped per table. The snapshots stay: they are the seed's history,
    and what `rebuild` brings back of them the scope still leaves out."""
    dropped = {}
    with store.lock():
        keep = scope.within(cfg, store.library(scope.columns()))["arxiv_id"]
        for name, spec in store_tables().items():
            if "arxiv_id" not in spec.schema.names:
                continue
            table = store.read(name)
            kept = table.filter(pc.is_in(table["arxiv_id"], keep))
            if kept.num_rows < table.num_rows:
                store.write(name, kept)
                dropped[name] = table.num_rows - kept.num_rows
    return dropped


@dataclass(frozen=True)
class SaveResult:
    commit: str | None  # None: nothing changed, nothing pushed
    squashed: bool = False
    attempts: int = 1
    merged: bool = False  # someone else's data was folded in first

    def line(self, branch: str) -> str:
        if self.commit is None:
            return f"data save: no change; {branch} left as it was"
        how = "squashed to one commit" if self.squashed else "committed"
        extra = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        merged = " (merged a concurrent push)" if self.merged else ""
        return f"data save: {how} {self.commit[:12]} to {branch}{extra}{merged}"


def save(cfg: Config, repo: Path, *, remote: str = "origin", branch: str = DEFAULT_BRANCH,
         message: str = "data: update", retries: int = DEFAULT_RETRIES,
         squash_after: int | None = DEFAULT_SQUASH_AFTER,
         now: dt.datetime | None = None, force: bool = False) -> SaveResult:
    """Commit the store to the branch when it changed and push; on a concurrent push, fold
    the other data in and retry (up to `retries` times). Squashes the branch to one
    commit when it has `squash_after` commits already or the tip is from an earlier
    month (squash_after None: never; for comparisons).

    Refuses (unless `force`) a store whose files fail their check, or that holds fewer
    papers than the branch: pushing it would replace good data with damaged data."""
    now = now or dt.datetime.now(dt.UTC)
    store = Store(cfg.store_path)
    if store.is_empty():
        raise DataBranchError(f"no store at {store.root} (or an empty one); nothing to save")
    base_file = store.root / BASE_FILE
    merged = False
    with store.lock():  # no other writer changes the store while it is checked and copied
        problems = store.check()
        if problems and not force:
            raise DataBranchError(f"{store.root} fails its check, so it was not saved: "
                                  f"{'; '.join(problems[:5])}. Repair it (`papertrail "
                                  "rebuild`, or `data restore --force`), or pass --force")
        for attempt in range(1, retries + 2):
            tip = fetch(repo, remote, branch, depth=(squash_after or 0) + 1)
            base = base_file.read_text(encoding="utf-8").strip() if base_file.exists() else None
            if tip is not None and tip != base:
                _fold_in(cfg, repo, tip, store)
                store.commit()
                merged = True
            if tip is not None and not force:
                _refuse_fewer_papers(repo, tip, store)
            tree = _stage_tree(repo, store)
            if tip is not None and tree == git(repo, "rev-parse", "--verify",
                                               "--end-of-options", f"{tip}^{{tree}}"):
                write_text_atomic(base_file, tip + "\n")
                return SaveResult(None, attempts=attempt, merged=merged)
            squash = (tip is not None and squash_after is not None
                      and _needs_squash(repo, tip, squash_after, now))
            parents = [] if tip is None or squash else ["-p", tip]
            stamp = now.astimezone(dt.UTC).isoformat()
            commit = str(git(repo, *_IDENTITY, "commit-tree", tree, *parents, "-m", message,
                             env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}))
            lease = f"--force-with-lease=refs/heads/{branch}:{tip or ''}"
            try:
                git(repo, "push", "--quiet", lease, "--", remote, f"{commit}:refs/heads/{branch}")
            except DataBranchError:
                if fetch(repo, remote, branch, depth=1) == tip:
                    raise  # the branch did not move: not a conflict, a real failure
                continue
            write_text_atomic(base_file, commit + "\n")
            return SaveResult(commit, squash, attempt, merged)
    raise DataBranchError(f"pushing to {remote} {branch} lost the race {retries + 1} times; "
                          "run `papertrail data save` again")


def _refuse_fewer_papers(repo: Path, tip: str, store: Store) -> None:
    theirs, ours = _branch_papers(repo, tip), store.rows("papers")
    if ours < theirs:
        raise DataBranchError(f"{store.root} holds {ours:,} papers, the branch at {tip[:12]} "
                              f"{theirs:,}: not saved, it would drop papers. Restore the store "
                              "(`papertrail data restore --force`), or pass --force")


def _branch_papers(repo: Path, tip: str) -> int:
    """How many papers the branch's store holds, from its manifest (or, for a store written
    before manifests, the footer of its papers.parquet)."""
    manifest = _branch_file(repo, tip, MANIFEST)
    if manifest:
        return parse(json.loads(manifest), Path(f"{tip[:12]}:{_PREFIX}/{MANIFEST}")
                     ).rows("papers") or 0
    papers = _branch_file(repo, tip, "papers.parquet", binary=True)
    return pq.read_metadata(pa.BufferReader(papers)).num_rows if papers else 0


@overload
def _branch_file(repo: Path, tip: str, name: str, *, binary: Literal[False] = False) -> str: ...
@overload
def _branch_file(repo: Path, tip: str, name: str, *, binary: Literal[True]) -> bytes: ...
def _branch_file(repo: Path, tip: str, name: str, *, binary: bool = False) -> str | bytes:
    """A file of the branch's store at `tip` (within MAX_FILE_BYTES); empty when it has
    none."""
    try:
        found = _tree(repo, tip).get(name)
    except DataBranchError:  # no data/ there
        found = None
    raw = b"" if found is None else _blob(repo, tip, found)
    return raw if binary else raw.decode("utf-8", "replace")


def _needs_squash(repo: Path, tip: str, squash_after: int, now: dt.datetime) -> bool:
    # With this commit the branch would hold commits + 1. The fetch was squash_after + 1
    # deep, so a longer history counts as squash_after + 1, which is enough to decide.
    commits = int(git(repo, "rev-list", "--count", "--end-of-options", tip))
    stamp = git(repo, "log", "-1", "--format=%cI", "--end-of-options", tip)
    tip_month = dt.datetime.fromisoformat(stamp)
    month = f"{now.astimezone(dt.UTC):%Y-%m}"
    return commits >= squash_after or f"{tip_month.astimezone(dt.UTC):%Y-%m}" != month


def _stage_tree(repo: Path, store: Store) -> str:
    """The git tree of the store as the branch holds it (data/ with the manifest and the
    files it names, + README), built with a temporary index so the repository's own index
    is never touched."""
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "stage"
        for path in [store.root / MANIFEST, *store.files()]:
            if path.exists():
                dest = stage / _PREFIX / path.relative_to(store.root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
        (stage / "README.md").write_text(_BRANCH_README, encoding="utf-8")
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(repo, f"--work-tree={stage}", "add", "--all", "--force", ".", env=env)
        return str(git(repo, "write-tree", env=env))


def _fold_in(cfg: Config, repo: Path, tip: str, store: Store) -> None:
    """Make the store the union of itself and the branch at `tip`, then rebuild papers and
    versions from the union of snapshots. The caller holds the lock and commits."""
    with tempfile.TemporaryDirectory() as tmp:
        theirs_root = Path(tmp) / "theirs"
        _extract(repo, tip, theirs_root)
        theirs = Store(theirs_root)
        ours = {s.run_id for s in store.snapshots()}
        runs_in: dict[Path, set[str]] = defaultdict(set)
        for snap in theirs.snapshots():
            runs_in[snap.path].add(snap.run_id)
        mine = {str(p.relative_to(store.root)) for p in store.files()}
        for path, runs in sorted(runs_in.items()):
            rel = str(path.relative_to(theirs_root))
            if runs <= ours:
                continue  # we hold these runs already (perhaps compacted differently)
            if runs & ours:
                raise DataBranchError(f"{rel} on the branch holds runs the store has and "
                                      "runs it lacks; restore with --force")
            if rel in mine:
                raise DataBranchError(f"{rel} differs between the store and the branch at "
                                      f"{tip[:12]}; cannot merge it without losing data")
            store.add_snapshot(path, rel)
        for spec in store_tables().values():
            if spec.on_save == "union":
                _union_rows(store, spec, theirs.read(spec.name))
        # the rest (papers, versions, sources' own tables): made again from the union of
        # snapshots
        ingest.rebuild(cfg, store)


def _union_rows(store: Store, spec: Table, theirs: pa.Table) -> None:
    ours = store.read(spec.name).to_pandas()
    both = pd.concat([theirs.to_pandas(), ours], ignore_index=True)
    both = both.drop_duplicates(subset=list(spec.row_identity), keep="last")  # ours wins a tie
    if not spec.key:  # a ledger: in the order of its clock
        both = both.sort_values(spec.partition_by, kind="stable")
    store.write(spec.name, pa.Table.from_pandas(both, preserve_index=False))
