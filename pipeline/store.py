"""The Parquet store under `data/`: tables, immutable snapshots, the run ledger, the lock.

One commit point. `manifest.json` names every live file: each table's file (with its
row count) and every snapshot. A writer holds `lock()`; each table or snapshot it
writes goes to a file no manifest names yet, and leaving the lock (or `commit()`)
fsyncs those files and their folders, then atomically replaces the manifest. A crash
or a full disk before that leaves the last manifest, which names only files nobody
changed; the next writer deletes what the crash left (`*.tmp`, files no manifest
names). A file that cannot be read is reported with its path; it is never treated as
empty (that would silently drop the library).

A store written before the manifest existed (`papers.parquet` … at the top, snapshots
found by their folders) is read as it is and gets a manifest on its first write.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import functools
import json
import logging
import os
import secrets
import shutil
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline._schemas import SCHEMA_VERSION, SNAPSHOTS, TABLES

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
_FORMAT = 2  # 1: no manifest (files at fixed names)
_META_VERSION = b"papertrail.schema_version"
_META_TABLE = b"papertrail.table"
# A month file (see `write_month`) lists the runs it holds, each in row groups of its own:
# [[run_id, day, first row group, row groups], …].
_META_RUNS = b"papertrail.runs"
MONTH_PREFIX = "month-"
RESTORING = ".restore.tmp"  # where `replace_with` gathers another store's files
_ROW_GROUP = 20_000
# Writes one new file at the path it is given; returns the rows it holds.
_Writer = Callable[[Path], int]
_T = TypeVar("_T")
_DICTIONARY = {"version", "categories", "primary_category", "source", "status", "language",
               "model", "prompt_hash", "topics", "hf_keywords"}


class StoreError(Exception):
    """A table is unreadable, has the wrong schema, or the store is locked."""


class StoreLocked(StoreError):
    pass


def empty(schema: pa.Schema) -> pa.Table:
    return schema.empty_table()


def to_table(df: pd.DataFrame | pa.Table, schema: pa.Schema) -> pa.Table:
    """Conform a frame to a schema: columns in order, missing ones null, types cast."""
    table = df if isinstance(df, pa.Table) else pa.Table.from_pandas(df, preserve_index=False)
    columns = []
    for fld in schema:
        if fld.name in table.column_names:
            columns.append(table[fld.name].cast(fld.type))
        else:
            columns.append(pa.nulls(table.num_rows, fld.type))
    return pa.Table.from_arrays(columns, schema=schema)


@dataclass(frozen=True)
class Snapshot:
    source: str
    day: str
    run_id: str
    path: Path
    row_groups: tuple[int, int] | None = None  # (first, count) inside a compacted month file


@dataclass
class _Manifest:
    """What the store holds: paths relative to the store's folder."""

    tables: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int | None] = field(default_factory=dict)  # None: not known (format 1)
    snapshots: list[str] = field(default_factory=list)
    generation: int = 0

    def files(self) -> set[str]:
        return {*self.tables.values(), *self.snapshots}

    def copy(self) -> _Manifest:
        return replace(self, tables=dict(self.tables), rows=dict(self.rows),
                       snapshots=list(self.snapshots))

    def same_files(self, other: _Manifest) -> bool:
        return (self.tables, self.rows, sorted(self.snapshots)) == (
            other.tables, other.rows, sorted(other.snapshots))

    def to_json(self) -> str:
        tables = {n: {"path": p, "rows": self.rows.get(n)} for n, p in sorted(self.tables.items())}
        return json.dumps({"format": _FORMAT, "generation": self.generation, "tables": tables,
                           "snapshots": sorted(self.snapshots)}, indent=1) + "\n"


def _committing(method: Callable[..., _T]) -> Callable[..., _T]:
    """A write outside `lock()` takes the lock and commits on its own."""

    @functools.wraps(method)
    def write(self: Store, *args: Any, **kwargs: Any) -> _T:
        if self._depth:
            return method(self, *args, **kwargs)
        with self.lock():
            return method(self, *args, **kwargs)

    return write


class Store:
    """One folder of Parquet files. Readers need no lock; writers hold `lock()`."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.stale_lock: str | None = None  # who left a lock behind, seen at the last lock()
        self._depth = 0  # lock() nesting: only the outermost takes the lock and commits
        self._committed: _Manifest | None = None  # as on disk, while the lock is held
        self._pending: _Manifest | None = None  # what commit() will make current
        self._written: set[str] = set()  # files written since the last commit

    # -- the manifest ---------------------------------------------------------------------------

    def _manifest(self) -> _Manifest:
        return self._pending if self._pending is not None else _load(self.root)

    def _staging(self) -> _Manifest:
        if self._pending is None:
            raise RuntimeError("store writes need the lock: use `with store.lock():`")
        return self._pending

    def is_empty(self) -> bool:
        return not self._manifest().files()

    def holds(self, manifest: str) -> bool:
        """Whether the store names the same files as this manifest text (another copy's)."""
        try:
            theirs = _parse(json.loads(manifest), self.root / MANIFEST)
        except (ValueError, StoreError):
            return False
        return theirs.same_files(self._manifest())

    def files(self) -> list[Path]:
        """Every live data file (not the manifest itself)."""
        return [self.root / rel for rel in sorted(self._manifest().files())]

    def rows(self, name: str) -> int:
        """The row count of a table, without reading it."""
        manifest = self._manifest()
        if name not in manifest.tables:
            return 0
        known = manifest.rows.get(name)
        return known if known is not None else pq.read_metadata(self.table_path(name)).num_rows

    def check(self) -> list[str]:
        """What is wrong with the live files (missing, unreadable, other schema, row counts
        other than the manifest says), read from their footers only."""
        manifest, problems = self._manifest(), []
        for name, rel in sorted(manifest.tables.items()):
            found = _footer_problem(self.root / rel, TABLES[name], manifest.rows.get(name))
            problems += [f"{rel}: {found}"] if found else []
        for rel in manifest.snapshots:
            source = Path(rel).parts[1] if len(Path(rel).parts) > 1 else "?"
            if source not in SNAPSHOTS:
                problems.append(f"{rel}: not a snapshot of a known source")
                continue
            found = _footer_problem(self.root / rel, SNAPSHOTS[source], None)
            problems += [f"{rel}: {found}"] if found else []
        return problems

    # -- tables ---------------------------------------------------------------------------------

    def table_path(self, name: str) -> Path:
        """The file that holds the table now (where it would be, if it has none yet)."""
        rel = self._manifest().tables.get(name)
        return self.root / (rel or f"{name}.parquet")

    def read(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """The table (or some columns), or an empty one when it does not exist yet."""
        schema = TABLES[name]
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        if name not in self._manifest().tables:
            return empty(schema)
        return _read_checked(self.table_path(name), name, columns)

    @_committing
    def write(self, name: str, table: pa.Table) -> None:
        table = to_table(table, TABLES[name])
        self._put_table(name, lambda path: _write_parquet(path, table, name))

    @_committing
    def append(self, name: str, rows: pa.Table) -> None:
        """Add rows at the end, streaming the old file through row group by row group, so
        appending to a large table costs memory for the new rows only."""
        if name not in self._manifest().tables:
            self.write(name, rows)
            return
        rows = to_table(rows, TABLES[name])
        self.read(name, columns=[])  # checks the file's schema and version
        old = pq.ParquetFile(self.table_path(name))
        self._put_table(name, lambda path: _write_parquet(path, rows, name, before=old))

    def _put_table(self, name: str, write: _Writer) -> None:
        staging = self._staging()
        rel = f"tables/{name}-{staging.generation + 1:06d}-{secrets.token_hex(4)}.parquet"
        staging.rows[name] = self._write_new(rel, write)
        staging.tables[name] = rel

    def _write_new(self, rel: str, write: _Writer) -> int:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self._written.add(rel)
        return write(path)

    # -- snapshots ------------------------------------------------------------------------------

    @_committing
    def write_snapshot(self, source: str, run_id: str, fetched_at: dt.datetime,
                       table: pa.Table) -> Path:
        day = fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%d")
        rel = f"snapshots/{source}/{day}/{run_id}.parquet"
        staging = self._staging()
        if rel in staging.snapshots:
            raise StoreError(f"{self.root / rel}: snapshots are immutable and this one exists "
                             "already")
        table = to_table(table, SNAPSHOTS[source])
        self._write_new(rel, lambda path: _write_parquet(path, table, f"snapshot:{source}"))
        staging.snapshots.append(rel)
        return self.root / rel

    def add_snapshot(self, path: Path, rel: str) -> None:
        """Take another store's snapshot file (copied) at the same relative path."""
        staging = self._staging()
        self._write_new(rel, lambda dest: _copy_file(path, dest))
        staging.snapshots.append(rel)

    def snapshots(self, source: str | None = None) -> list[Snapshot]:
        """All snapshots in the order they were taken (run ids start with a UTC timestamp).

        A compacted month file stands for the runs it holds, one Snapshot each, so
        `rebuild` replays exactly the same batches before and after compaction."""
        found: list[Snapshot] = []
        for rel in self._manifest().snapshots:
            path = self.root / rel
            src, day = path.parent.parent.name, path.parent.name
            if source is not None and src != source:
                continue
            if path.stem.startswith(MONTH_PREFIX):
                try:
                    meta = pq.read_schema(path).metadata or {}
                except (OSError, pa.ArrowException) as exc:
                    raise StoreError(f"{path}: cannot read this month file ({exc}); restore "
                                     "it from the data branch") from None
                found.extend(Snapshot(src, run_day, run_id, path, (first, count))
                             for run_id, run_day, first, count
                             in json.loads(meta.get(_META_RUNS, b"[]")))
            else:
                found.append(Snapshot(src, day, path.stem, path))
        return sorted(found, key=lambda s: (s.run_id, s.source))

    def forget_missing_snapshots(self) -> None:
        """Stop naming snapshot files that are gone (`rebuild --force` goes on without them)."""
        staging = self._staging()
        staging.snapshots = [s for s in staging.snapshots if (self.root / s).is_file()]

    def read_snapshot(self, snap: Snapshot) -> pa.Table:
        groups = None if snap.row_groups is None else range(snap.row_groups[0],
                                                              sum(snap.row_groups))
        return _read_checked(snap.path, f"snapshot:{snap.source}", row_groups=groups)

    @_committing
    def write_month(self, source: str, month: str, snaps: list[Snapshot]) -> Path:
        """Merge `snaps` (in run order) into one file of `snapshots/<source>/<month>/`, which
        then stands for them. Re-compacting a month folds the old month file's runs in
        again, so the result is the same as compacting once."""
        staging = self._staging()
        rel = f"snapshots/{source}/{month}/{MONTH_PREFIX}{month}-{secrets.token_hex(4)}.parquet"
        parts, runs, first = [], [], 0
        for snap in snaps:
            table = to_table(self.read_snapshot(snap), SNAPSHOTS[source])
            count = -(-table.num_rows // _ROW_GROUP)  # write_table splits at _ROW_GROUP rows
            parts.append(table)
            runs.append([snap.run_id, snap.day, first, count])
            first += count
        self._write_new(rel, lambda path: _write_parquet(
            path, pa.concat_tables(parts), f"snapshot:{source}",
            extra_meta={_META_RUNS: json.dumps(runs).encode()}, parts=parts))
        folded = {str(s.path.relative_to(self.root)) for s in snaps}
        staging.snapshots = [s for s in staging.snapshots if s not in folded] + [rel]
        return self.root / rel

    # -- the run ledger -------------------------------------------------------------------------

    @_committing
    def append_run(self, record: dict) -> None:
        runs = self.read("runs")
        row = to_table(pa.Table.from_pylist([record]), TABLES["runs"])
        self.write("runs", pa.concat_tables([runs, row]))

    def runs(self, source: str | None = None) -> pd.DataFrame:
        df = self.read("runs").to_pandas()
        return df if source is None else df[df["source"] == source].reset_index(drop=True)

    def watermark(self, source: str) -> dt.datetime | None:
        """Where the last run that finished cleanly left off; None before the first one."""
        runs = self.runs(source)
        marks = runs.loc[runs["status"] == "ok", "watermark_after"].dropna()
        return None if marks.empty else marks.max().to_pydatetime()

    # -- replacing the whole store --------------------------------------------------------------

    def replace_with(self, other: Path) -> int:
        """Make the store hold exactly what the store folder `other` (on the same file system,
        e.g. under RESTORING) holds; returns the number of files taken.

        First an empty manifest is committed, so no live file is overwritten; then the
        other store's files are moved in and its manifest committed. A crash in between
        leaves an empty store, and running the same command again finishes the job."""
        theirs = _load(other)
        missing = sorted(rel for rel in theirs.files() if not (other / rel).is_file())
        if missing:
            raise StoreError(f"{other}: its manifest names files it lacks: {', '.join(missing)}")
        staging = self._staging()
        staging.tables, staging.rows, staging.snapshots = {}, {}, []
        self.commit()
        for rel in sorted(theirs.files()):
            self._write_new(rel, functools.partial(_move_file, other / rel))
        theirs.generation = max(theirs.generation, staging.generation) + 1
        self._pending = theirs
        self.commit()
        return len(theirs.files())

    # -- one writer at a time -------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store for writing: an exclusive lock (flock: the kernel frees it if we
        die), leftovers of an earlier crash removed, and what is written inside committed
        when the block ends without an exception (nothing of it otherwise).

        The lock file also records who holds it, for the message a second writer sees; a
        record left by a process that died (the lock is free but the file is not empty)
        is reported as stale and taken over. Nested blocks share the outer one.
        """
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._take(fd, path)
            self._depth = 1
            try:
                self._committed = _load(self.root)
                self._remove_leftovers(self._committed)
                self._pending = self._committed.copy()
                yield
                self.commit()
            except BaseException:
                self._discard()
                raise
            finally:
                self._depth, self._committed, self._pending = 0, None, None
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _take(self, fd: int, path: Path) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
            raise StoreLocked(
                f"{path}: the store is locked by another papertrail process ({holder}); "
                "wait for it to finish"
            ) from None
        left = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        if left:
            # We got the lock, so whoever wrote this is gone without cleaning up.
            log.warning("%s: stale lock left by %s; taking it over", path, left)
        self.stale_lock = left or None
        os.ftruncate(fd, 0)
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        os.pwrite(fd, json.dumps(info).encode(), 0)

    def commit(self) -> None:
        """Make everything written so far current: the one commit point."""
        staging, committed = self._staging(), self._committed
        assert committed is not None
        for rel in self._written - staging.files():  # superseded inside this transaction
            _remove(self.root, rel)
        self._written &= staging.files()
        if staging.same_files(committed):
            return
        for folder in sorted({(self.root / rel).parent for rel in self._written}):
            _fsync_dir(folder)
        staging.generation = max(staging.generation, committed.generation) + 1
        _replace_text(self.root / MANIFEST, staging.to_json())
        self._committed, self._written = staging.copy(), set()  # done, whatever follows
        _fsync_dir(self.root)
        for rel in sorted(committed.files() - staging.files()):
            _remove(self.root, rel)

    def _discard(self) -> None:
        live = (self._committed or _Manifest()).files()
        for rel in self._written - live:
            _remove(self.root, rel)
        self._written = set()

    def _remove_leftovers(self, manifest: _Manifest) -> None:
        """Delete what a crashed writer left: temp files, a half-done restore, and table or
        snapshot files that no manifest names (written, never committed)."""
        live = manifest.files()
        shutil.rmtree(self.root / RESTORING, ignore_errors=True)
        for path in self.root.rglob("*.tmp"):
            path.unlink(missing_ok=True)
        if not (self.root / MANIFEST).exists():
            return  # format 1: every file found is live
        for folder in ("tables", "snapshots"):
            for path in sorted((self.root / folder).rglob("*.parquet")):
                if str(path.relative_to(self.root)) not in live:
                    _remove(self.root, str(path.relative_to(self.root)))
        for name in TABLES:
            if f"{name}.parquet" not in live:
                (self.root / f"{name}.parquet").unlink(missing_ok=True)


def _load(root: Path) -> _Manifest:
    """The store's manifest; for a store without one (format 1), what it would say."""
    path = root / MANIFEST
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _Manifest(
            tables={n: f"{n}.parquet" for n in TABLES if (root / f"{n}.parquet").exists()},
            rows={n: None for n in TABLES if (root / f"{n}.parquet").exists()},
            snapshots=sorted(str(p.relative_to(root))
                             for p in root.glob("snapshots/*/*/*.parquet")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreError(f"{path}: cannot read the store's manifest ({exc}); restore the "
                         "store with `papertrail data restore --force`") from None
    return _parse(raw, path)


def _parse(raw: Any, path: Path) -> _Manifest:
    try:
        if raw["format"] != _FORMAT:
            raise StoreError(f"{path}: store format {raw['format']}, this papertrail reads "
                             f"{_FORMAT}; upgrade papertrail")
        tables = {n: t["path"] for n, t in raw["tables"].items()}
        rows = {n: t["rows"] for n, t in raw["tables"].items()}
        unknown = set(tables) - set(TABLES)
        if unknown:
            raise StoreError(f"{path}: names tables this papertrail does not know: "
                             f"{', '.join(sorted(unknown))}; upgrade papertrail")
        return _Manifest(tables, rows, list(raw["snapshots"]), int(raw["generation"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{path}: the store's manifest is malformed ({exc!r}); restore the "
                         "store with `papertrail data restore --force`") from None


def _footer_problem(path: Path, schema: pa.Schema, rows: int | None) -> str | None:
    try:
        meta = pq.read_metadata(path)
        found = pq.read_schema(path)
    except FileNotFoundError:
        return "missing"
    except (OSError, pa.ArrowException) as exc:
        return f"unreadable ({exc})"
    version = (found.metadata or {}).get(_META_VERSION, b"?").decode()
    if version != SCHEMA_VERSION:
        return f"schema version {version}, expected {SCHEMA_VERSION}"
    if not found.remove_metadata().equals(schema):
        return "columns do not match its schema"
    if rows is not None and meta.num_rows != rows:
        return f"{meta.num_rows} rows, the manifest says {rows}"
    return None


def _read_checked(path: Path, name: str, columns: list[str] | None = None,
                  row_groups: range | None = None) -> pa.Table:
    """Read a table (or some of its row groups), after checking the file's schema version
    and its full schema."""
    try:
        found = pq.read_schema(path)
        if row_groups is None:
            table = pq.read_table(path, columns=columns)
        else:
            table = pq.ParquetFile(path).read_row_groups(list(row_groups), columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"{path}: cannot read this Parquet file ({exc}). {_remedy(name)}"
                         ) from None
    version = (found.metadata or {}).get(_META_VERSION, b"?").decode()
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version}, this papertrail reads "
                         f"{SCHEMA_VERSION}. {_remedy(name)}")
    full = TABLES.get(name) or SNAPSHOTS[name.removeprefix("snapshot:")]
    if not found.remove_metadata().equals(full):
        raise StoreError(f"{path}: columns do not match the {name} schema. {_remedy(name)}")
    return table.replace_schema_metadata(None)


def _remedy(name: str) -> str:
    """What repairs a damaged file of this table: papers and versions are made again from
    the snapshots; the rest exists nowhere else but in the saved copy."""
    restore = "restore the store from the data branch (`papertrail data restore --force`)"
    if name in ("papers", "versions"):
        return f"It was not replaced; run `papertrail rebuild`, or {restore}"
    if name == "runs":
        return (f"It was not replaced; {restore}, or run `papertrail rebuild --force`, which "
                "starts a new, empty run ledger (sources then backfill again)")
    return f"It was not replaced; {restore}"


def _write_parquet(path: Path, table: pa.Table, name: str,
                   before: pq.ParquetFile | None = None,
                   extra_meta: dict[bytes, bytes] | None = None,
                   parts: list[pa.Table] | None = None) -> int:
    """Write `table` (after the row groups of `before`, if given) to a new file, fsync and
    check it; returns its row count. With `parts` (whose concatenation is `table`), each
    part starts a row group of its own, and the file must have one per _ROW_GROUP rows
    of each."""
    meta = {_META_VERSION: SCHEMA_VERSION.encode(), _META_TABLE: name.encode(),
            **(extra_meta or {})}
    table = table.replace_schema_metadata(meta)
    expected = table.num_rows + (before.metadata.num_rows if before else 0)
    # Dictionary-encode only low-cardinality columns: encoding titles and abstracts costs
    # time and saves nothing. Bounded row groups keep reads and appends lean.
    low = [f.name for f in table.schema if f.name in _DICTIONARY]
    with open(path, "wb") as fh, pq.ParquetWriter(fh, table.schema, compression="zstd",
                                                  use_dictionary=low) as writer:
        tail = table
        if before is not None:
            batches = list(before.iter_batches(batch_size=_ROW_GROUP)) or []
            for batch in batches[:-1]:  # full row groups; the last one joins the new rows
                writer.write_table(pa.Table.from_batches([batch], writer.schema))
            if batches:
                last = pa.Table.from_batches(batches[-1:]).replace_schema_metadata(meta)
                tail = pa.concat_tables([last, table])
        for part in parts if parts is not None else [tail]:
            if parts is None or part.num_rows:  # an empty run owns no row group
                writer.write_table(part.replace_schema_metadata(meta),
                                   row_group_size=_ROW_GROUP)
    _fsync(path)
    written = pq.read_metadata(path)
    if written.num_rows != expected:
        raise StoreError(f"{path}: wrote {written.num_rows} rows, expected {expected}")
    groups = sum(-(-p.num_rows // _ROW_GROUP) for p in parts or [])
    if parts is not None and written.num_row_groups != groups:
        raise StoreError(f"{path}: wrote {written.num_row_groups} row groups, expected "
                         f"{groups}")
    return expected


def _copy_file(src: Path, dest: Path) -> int:
    shutil.copyfile(src, dest)
    _fsync(dest)
    return 1


def _move_file(src: Path, dest: Path) -> int:
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, dest)
    _fsync(dest)  # extracted by git, never synced
    return 1


def write_text_atomic(path: Path, text: str) -> None:
    """Replace a small file atomically: temp file, fsync, rename, fsync of the folder."""
    _replace_text(path, text)
    _fsync_dir(path.parent)


def _replace_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        _fsync(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(root: Path, rel: str) -> None:
    """Delete a file of the store, and its folder when that is left empty."""
    path = root / rel
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # a folder that still holds files stays
        if path.parent != root:
            path.parent.rmdir()
