"""The store's one commit point: `manifest.json`, naming every live file, replaced
atomically; and a writer's transaction, which writes new files only and makes them
current by that replace (see docs/DATA.md, "The commit point").
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from pipeline.store.durable import fsync, fsync_dir, replace_atomically
from pipeline.store.parquet import StoreError, footer_problem
from pipeline.store.partition import KEY_PATTERN
from pipeline.tables import (
    LEGACY_VERSION,
    PAPERS_WITH_HF,
    RETIRED,
    SCHEMA_VERSION,
    SNAPSHOT_VERSIONS,
    TABLES,
    Catalog,
)

MANIFEST = "manifest.json"
FORMAT = 3  # 1: no manifest (files at fixed names); 2: one file per table
RESTORING = ".restore.tmp"  # where `Store.replace_with` gathers another store's files
READERS = ".readers"  # readers hold it shared while they read (`reading`)
# The one partition of a table written before partitions (formats 1 and 2): its file has
# the schema version LEGACY_VERSION (papers with every HF column).
LEGACY = "*"
# What a format 3 manifest that lists no migrations had: the release that wrote it.
_FORMAT_3_MIGRATIONS = ("tables-in-partitions",)
# Writes one new file at the path it is given; returns the rows it holds.
Writer = Callable[[Path], int]
_KEY = re.compile(rf"{KEY_PATTERN}|{re.escape(LEGACY)}")


@dataclass(frozen=True)
class Part:
    """One file of a partition."""

    path: str
    rows: int | None  # None: not known (a format 1 store)


@dataclass(frozen=True)
class Partition:
    """A partition's base files, and the delta files written since, newest last; `rows`
    counts them merged (a key once)."""

    base: tuple[Part, ...]
    deltas: tuple[Part, ...] = ()
    rows: int | None = None

    @property
    def files(self) -> tuple[Part, ...]:
        return (*self.base, *self.deltas)


@dataclass
class Manifest:
    """What the store holds: each table's partitions and every snapshot, by paths relative
    to the store's folder."""

    tables: dict[str, dict[str, Partition]] = field(default_factory=dict)
    snapshots: list[str] = field(default_factory=list)
    generation: int = 0
    migrations: list[str] = field(default_factory=list)  # those done (`migrations`)

    def files(self) -> set[str]:
        return {part.path for partitions in self.tables.values()
                for partition in partitions.values() for part in partition.files
                } | set(self.snapshots)

    def copy(self) -> Manifest:
        return replace(self, tables={n: dict(p) for n, p in self.tables.items()},
                       snapshots=list(self.snapshots), migrations=list(self.migrations))

    def same_files(self, other: Manifest) -> bool:
        return (self.tables, sorted(self.snapshots)) == (other.tables, sorted(other.snapshots))

    def rows(self, name: str) -> int | None:
        """The rows of a stored table; None when a format 1 store does not say."""
        counts = [p.rows for p in self.tables.get(name, {}).values()]
        return None if None in counts else sum(c for c in counts if c is not None)

    def to_json(self) -> str:
        tables = {name: {key: {"rows": p.rows, "base": [[f.path, f.rows] for f in p.base],
                               "deltas": [[f.path, f.rows] for f in p.deltas]}
                         for key, p in sorted(partitions.items())}
                  for name, partitions in sorted(self.tables.items())}
        return json.dumps({"format": FORMAT, "generation": self.generation,
                           "migrations": self.migrations, "tables": tables,
                           "snapshots": sorted(self.snapshots)}, indent=1) + "\n"


def _legacy(path: str, rows: int | None) -> dict[str, Partition]:
    return {LEGACY: Partition((Part(path, rows),), (), rows)}


def load(root: Path) -> Manifest:
    """The store's manifest; for a store without one (format 1), what it would say."""
    path = root / MANIFEST
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        tables = {n: _legacy(f"{n}.parquet", None) for n in TABLES
                  if (root / f"{n}.parquet").exists()}
        if not tables:
            # No store from before manifests lacks its tables: this folder is new, or its
            # first commit was cut short, and what files it holds are not the store's (the
            # next writer removes them).
            return Manifest()
        return Manifest(tables=tables,
                        snapshots=sorted(str(p.relative_to(root))
                                         for p in root.glob("snapshots/*/*/*.parquet")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreError(f"{path}: cannot read the store's manifest ({exc}); restore the "
                         "store with `papertrail data restore --force`") from None
    return parse(raw, path)


def same_files(text: str, manifest: Manifest, path: Path) -> bool:
    """Whether a manifest's text (another copy's) names the same files as `manifest`."""
    try:
        return parse(json.loads(text), path).same_files(manifest)
    except (ValueError, StoreError):
        return False


def parse(raw: Any, path: Path) -> Manifest:
    try:
        if raw["format"] not in (2, FORMAT):
            raise StoreError(f"{path}: store format {raw['format']}, this papertrail reads "
                             f"{FORMAT}; upgrade papertrail")
        if raw["format"] == 2:
            tables = {n: _legacy(t["path"], t["rows"]) for n, t in raw["tables"].items()}
        else:
            tables = {n: {str(key): _partition(p) for key, p in partitions.items()}
                      for n, partitions in raw["tables"].items()}
        bad_keys = [k for partitions in tables.values() for k in partitions
                    if not _KEY.fullmatch(k)]
        if bad_keys:
            raise ValueError(f"partition keys {bad_keys[:3]}")
        snapshots = list(raw["snapshots"])
        done = raw.get("migrations", _FORMAT_3_MIGRATIONS if raw["format"] == FORMAT else [])
        if not (isinstance(done, list | tuple) and all(isinstance(m, str) for m in done)):
            raise ValueError("migrations")
        manifest = Manifest(tables, snapshots, int(raw["generation"]), list(done))
        outside = [r for r in manifest.files() if not _inside(r)]
        if outside:  # a manifest may come from another repository's data branch
            raise StoreError(f"{path}: names files outside the store's own folders: "
                             f"{', '.join(map(repr, sorted(outside)[:5]))}; not used")
        return manifest
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StoreError(f"{path}: the store's manifest is malformed ({exc!r}); restore the "
                         "store with `papertrail data restore --force`") from None


def _partition(raw: dict[str, Any]) -> Partition:
    def parts(items: list[list[Any]]) -> tuple[Part, ...]:
        return tuple(Part(str(p), int(n)) for p, n in items)

    return Partition(parts(raw["base"]), parts(raw["deltas"]), int(raw["rows"]))


def held_files(listing: Iterable[str], manifest: Manifest | None) -> set[str]:
    """Of the files in a store's folder (paths relative to it), those the store holds: those
    its manifest names, or, without one (format 1), its tables at their fixed names and the
    snapshots in their folders. A named file the folder lacks is not listed."""
    if manifest is not None:
        return manifest.files() & set(listing)
    return {rel for rel in listing if _inside(rel) and not rel.startswith("tables/")}


def _inside(rel: object) -> bool:
    """A path this store writes: tables/<file>.parquet, snapshots/<source>/<day or
    month>/<file>.parquet, or a table of a store from before manifests (<name>.parquet)."""
    if not (isinstance(rel, str) and rel.endswith(".parquet") and "\\" not in rel
            and str(PurePosixPath(rel)) == rel):
        return False
    parts = PurePosixPath(rel).parts
    if any(part in (".", "..") or part.startswith(".") for part in parts):
        return False
    if len(parts) == 1:
        return parts[0].removesuffix(".parquet") in TABLES
    return (len(parts), parts[0]) in {(2, "tables"), (4, "snapshots")}


def unknown_tables(manifest: Manifest, catalog: Catalog, path: Path) -> None:
    """Refuse a manifest naming tables the catalog lacks: a newer release wrote it."""
    unknown = set(manifest.tables) - set(catalog.tables) - set(RETIRED)
    if unknown:
        raise StoreError(f"{path}: names tables this papertrail does not know: "
                         f"{', '.join(sorted(unknown))}; upgrade papertrail")


def problems(root: Path, manifest: Manifest, catalog: Catalog) -> list[str]:
    """What is wrong with the files a manifest names, from their footers only."""
    found = []
    for name, partitions in sorted(manifest.tables.items()):
        for key, partition in sorted(partitions.items()):
            legacy = key == LEGACY
            spec = catalog.spec(name)
            schema = PAPERS_WITH_HF if legacy and name == "papers" else spec.schema
            versions = (LEGACY_VERSION,) if legacy else (SCHEMA_VERSION,)
            for part in partition.files:
                found.append((part.path, footer_problem(root / part.path, schema, part.rows,
                                                        versions)))
    schemas = catalog.snapshots
    for rel in manifest.snapshots:
        source = Path(rel).parts[1] if len(Path(rel).parts) > 2 else "?"
        found.append((rel, footer_problem(root / rel, schemas[source], None, SNAPSHOT_VERSIONS)
                      if source in schemas else "not a snapshot of a known source"))
    return [f"{rel}: {why}" for rel, why in found if why]


class Transaction:
    """One writer's changes since its last commit: the files it wrote (none of them named
    by the manifest on disk yet) and the manifest that will make them current."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.committed = load(root)
        remove_leftovers(root, self.committed)
        self.pending = self.committed.copy()
        self.written: set[str] = set()

    def new_file(self, rel: str, write: Writer) -> int:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self.written.add(rel)
        return write(path)

    def commit(self) -> None:
        """Make everything written so far current: fsync the new files' folders, then
        replace the manifest; only then delete what the old one named and this one does
        not."""
        staging, committed = self.pending, self.committed
        for rel in self.written - staging.files():  # superseded inside this transaction
            remove(self.root, rel)
        self.written &= staging.files()
        if (staging.same_files(committed) and staging.migrations == committed.migrations
                and (self.root / MANIFEST).exists()):
            return
        for folder in sorted({(self.root / rel).parent for rel in self.written}):
            fsync_dir(folder)
        staging.generation = max(staging.generation, committed.generation) + 1
        replace_atomically(self.root / MANIFEST, staging.to_json().encode("utf-8"))
        self.committed, self.written = staging.copy(), set()  # done, whatever follows
        fsync_dir(self.root)
        remove_unnamed(self.root, staging)

    def take_all(self, other: Path) -> int:
        """Hold exactly what the store folder `other` (on the same file system, e.g. under
        RESTORING) holds; returns the number of files taken.

        First an empty manifest is committed, so no live file is overwritten; then the
        other store's files are moved in and its manifest committed. A crash in between
        leaves an empty store, and running the same command again finishes the job."""
        theirs = load(other)
        missing = sorted(rel for rel in theirs.files() if not (other / rel).is_file())
        if missing:
            raise StoreError(f"{other}: its manifest names files it lacks: {', '.join(missing)}")
        self.pending = Manifest(generation=self.pending.generation)
        self.commit()
        for rel in sorted(theirs.files()):
            self.new_file(rel, functools.partial(move_file, other / rel))
        theirs.generation = max(theirs.generation, self.pending.generation) + 1
        self.pending = theirs
        self.commit()
        return len(theirs.files())

    def discard(self) -> None:
        for rel in self.written - self.committed.files():
            remove(self.root, rel)
        self.written = set()


@contextlib.contextmanager
def reading(root: Path) -> Iterator[Manifest]:
    """The store's manifest, with a reader's lease on the files it names until the block
    ends: a shared flock on READERS, which a writer must get exclusively, without waiting,
    before it deletes a file (`remove_unnamed`). The kernel frees a lease when its process
    dies. A folder this user cannot write gets no lease (nor a writer of this user)."""
    fd, missing = -1, False
    try:
        fd = os.open(root / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError)
    if fd < 0:  # no store yet (one created meanwhile is not read half of), or read-only
        yield Manifest() if missing else load(root)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while a writer deletes files
        yield load(root)
    finally:
        os.close(fd)


def remove_leftovers(root: Path, manifest: Manifest) -> None:
    """Delete what a crashed writer left: temp files, a half-done restore, and table or
    snapshot files that no manifest names (written, never committed)."""
    shutil.rmtree(root / RESTORING, ignore_errors=True)
    for path in root.rglob("*.tmp"):
        path.unlink(missing_ok=True)
    remove_unnamed(root, manifest)


def remove_unnamed(root: Path, manifest: Manifest) -> None:
    """Delete the table and snapshot files `manifest` (the one on disk) does not name:
    those an older one named, and those a crashed writer left. Not while a reader holds a
    lease (`reading`): it may be reading an older manifest's files, which a later commit
    or the next writer deletes."""
    if not (root / MANIFEST).exists():
        return  # format 1: every file found is live
    fd = os.open(root / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        live = manifest.files()
        for folder in ("tables", "snapshots"):
            for path in sorted((root / folder).rglob("*.parquet")):
                if str(path.relative_to(root)) not in live:
                    remove(root, str(path.relative_to(root)))
        for name in TABLES:  # a format 1 store's tables
            if f"{name}.parquet" not in live:
                (root / f"{name}.parquet").unlink(missing_ok=True)
    finally:
        os.close(fd)


def copy_file(src: Path, dest: Path) -> int:
    shutil.copyfile(src, dest)
    fsync(dest)
    return 1


def move_file(src: Path, dest: Path) -> int:
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, dest)
    fsync(dest)  # extracted by git, never synced
    return 1


def remove(root: Path, rel: str) -> None:
    """Delete a file of the store, and its folder when that is left empty."""
    path = root / rel
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # a folder that still holds files stays
        if path.parent != root:
            path.parent.rmdir()

