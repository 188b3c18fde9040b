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

The package holds the store whole, and only it writes under `data/`: this module is its
API (`__all__`); `manifest` the commit point and a writer's transaction, `parquet` the
files written new and read checked, `partition` how a table's rows are split, `durable`
fsync and atomic replace, `migrations` the named upgrades of a store an earlier release
wrote. The tables themselves are declared in `pipeline.tables`, below the sources.
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
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.sources import library_view, snapshot_schemas, store_tables
from pipeline.store import migrations as _migrations
from pipeline.store.manifest import (
    MANIFEST,
    RESTORING,
    Manifest,
    Part,
    Partition,
    Transaction,
    copy_file,
    load,
    problems,
    reading,
    same_files,
)
from pipeline.store.parquet import (
    META_RUNS,
    ROW_GROUP,
    SNAPSHOT_DICTIONARY,
    StoreError,
    read_checked,
    read_files,
    write_new,
)
from pipeline.store.partition import changed, newest, split
from pipeline.tables import MOVES_WATERMARK, RETIRED, TABLES, Table, to_table

__all__ = ["MANIFEST", "RESTORING", "Snapshot", "Store", "StoreError", "StoreLocked"]

log = logging.getLogger(__name__)

MONTH_PREFIX = "month-"
# A partition's base is written in files of at most PIECE_ROWS rows (~15 MB of digests,
# the widest rows), so no file nears GitHub's limits whatever a partition holds; and its
# delta files are merged into one when there are more than MAX_DELTAS.
PIECE_ROWS = 10_000
MAX_DELTAS = 8
_T = TypeVar("_T")


class StoreLocked(StoreError):
    pass


@dataclass(frozen=True)
class Snapshot:
    source: str
    day: str
    run_id: str
    path: Path
    row_groups: tuple[int, int] | None = None  # (first, count) inside a compacted month file


def _reading(method: Callable[..., _T]) -> Callable[..., _T]:
    """A read outside `snapshot()` reads one commit whole: it takes a snapshot of its own."""

    @functools.wraps(method)
    def read_one(self: Store, *args: Any, **kwargs: Any) -> _T:
        with self.snapshot():
            return method(self, *args, **kwargs)

    return read_one


def _committing(method: Callable[..., _T]) -> Callable[..., _T]:
    """A write outside `lock()` takes the lock and commits on its own."""

    @functools.wraps(method)
    def write(self: Store, *args: Any, **kwargs: Any) -> _T:
        if self._tx is not None:
            return method(self, *args, **kwargs)
        with self.lock():
            return method(self, *args, **kwargs)

    return write


class Store:
    """One folder of Parquet files. Readers need no lock (each read, or `snapshot()`, reads
    one commit whole); writers hold `lock()`."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.stale_lock: str | None = None  # who left a lock behind, seen at the last lock()
        self._tx: Transaction | None = None  # while the lock is held
        self._depth = 0  # lock() nesting: only the outermost takes the lock and commits
        self._pinned: Manifest | None = None  # inside snapshot()

    def _manifest(self) -> Manifest:
        """What the store holds: a writer's own pending state, the commit a reader's
        snapshot holds, or else the newest commit."""
        if self._tx is not None:
            return self._tx.pending
        if self._pinned is None:
            with self.snapshot():
                return self._manifest()
        return self._pinned

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read the store as one commit left it, whatever writers commit meanwhile: the
        manifest is read once, and a reader's lease keeps the files it names until the
        block ends (`manifest.reading`; writers delete them after). A store an earlier
        release wrote is upgraded first (`migrations`: one writer's commit, the only write
        a reader may cause). Inside `lock()`, reads see the writer's own changes."""
        if self._tx is not None or self._pinned is not None:
            yield
            return
        if _migrations.pending(load(self.root)):
            with self.lock():  # before the lease, so the old files go at its commit
                pass
        with reading(self.root) as manifest:
            self._pinned = manifest
            try:
                yield
            finally:
                self._pinned = None

    def _tx_(self) -> Transaction:
        if self._tx is None:
            raise RuntimeError("store writes need the lock: use `with store.lock():`")
        return self._tx

    @_reading
    def is_empty(self) -> bool:
        return not self._manifest().files()

    @_reading
    def holds(self, manifest: str) -> bool:
        """Whether the store names the same files as this manifest text (another copy's)."""
        return same_files(manifest, self._manifest(), self.root / MANIFEST)

    @_reading
    def files(self) -> list[Path]:
        """Every live data file (not the manifest itself)."""
        return [self.root / rel for rel in sorted(self._manifest().files())]

    @_reading
    def rows(self, name: str) -> int:
        """The row count of a table, without reading it."""
        manifest = self._manifest()
        known = manifest.rows(name)
        if known is not None:
            return known
        return sum(pq.read_metadata(p).num_rows for p in self.table_files(name))

    @_reading
    def check(self) -> list[str]:
        """What is wrong with the live files (missing, unreadable, other schema, row counts
        other than the manifest says), read from their footers only."""
        return problems(self.root, self._manifest())

    @_reading
    def table_files(self, name: str) -> list[Path]:
        """The files that hold a table now."""
        partitions = self._manifest().tables.get(name, {})
        return [self.root / f.path for key in sorted(partitions)
                for f in partitions[key].files]

    @_reading
    def read(self, name: str, columns: list[str] | None = None, *,
             schema: pa.Schema | None = None) -> pa.Table:
        """The table (or some columns), or an empty one when it does not exist yet: its
        partitions in key order, each merged (`partition.newest`). `schema`: as an
        earlier release wrote it (for a migration)."""
        spec = store_tables().get(name) or RETIRED[name]
        partitions = self._manifest().tables.get(name, {})
        wanted = columns if columns is None else list(dict.fromkeys([*spec.key, *columns]))
        tables: list[pa.Table] = []
        plain: list[Part] = []
        for key in sorted(partitions):
            partition = partitions[key]
            if not partition.deltas:
                plain += partition.base  # read together with the next ones
                continue
            tables.append(self._read_parts(spec, plain, wanted, schema))
            plain = []
            tables.append(newest(spec, self._read_parts(spec, list(partition.files), wanted,
                                                        schema)))
        tables.append(self._read_parts(spec, plain, wanted, schema))
        table = pa.concat_tables(tables)
        return table if columns is None else table.select(columns)

    @_reading
    def library(self, columns: list[str] | None = None) -> pa.Table:
        """Papers with the columns every source's own tables add (`library_view`)."""
        own = TABLES["papers"].schema.names
        papers = self.read("papers", None if columns is None else [
            c for c in dict.fromkeys(["arxiv_id", *columns]) if c in own])
        view = library_view(papers, self.source_tables())
        return view if columns is None else view.select(columns)

    @_reading
    def source_tables(self) -> dict[str, pa.Table]:
        """Every source's own tables, by name."""
        return {name: self.read(name) for name in store_tables() if name not in TABLES}

    def _read_parts(self, spec: Table, parts: list[Part], columns: list[str] | None,
                    schema: pa.Schema | None = None) -> pa.Table:
        return read_files([self.root / f.path for f in parts], spec, columns, schema=schema)

    @_committing
    def write(self, name: str, table: pa.Table) -> None:
        """Make the table hold exactly these rows. Only partitions whose rows changed are
        written: their changed rows as a delta file, or the whole partition again when
        its deltas have grown to half its base (see docs/DATA.md)."""
        self._put(store_tables()[name], to_table(table, store_tables()[name].schema),
                  replace=True)

    @_committing
    def append(self, name: str, rows: pa.Table) -> None:
        """Add rows (a row whose key the table holds replaces it), written as deltas of the
        partitions they fall in: nothing else is read or rewritten."""
        self._put(store_tables()[name], to_table(rows, store_tables()[name].schema),
                  replace=False)

    def drop(self, name: str) -> None:
        """Stop naming a table's files (a migration retires it); they go at the commit."""
        self._tx_().pending.tables.pop(name, None)

    def _put(self, spec: Table, table: pa.Table, *, replace: bool) -> None:
        staging = self._tx_().pending
        stored = staging.tables.get(spec.name, {})
        result = {} if replace else dict(stored)
        for key, rows in split(spec, table).items():
            old_partition = stored.get(key)
            if old_partition is None:
                result[key] = self._write_base(spec, key, rows)
            elif replace:
                result[key] = self._replace_partition(spec, key, old_partition, rows)
            else:
                result[key] = self._append_partition(spec, key, old_partition, rows)
        staging.tables[spec.name] = result

    def _replace_partition(self, spec: Table, key: str, old: Partition, rows: pa.Table
                           ) -> Partition:
        try:
            current = newest(spec, self._read_parts(spec, list(old.files), None))
        except StoreError:  # damaged: replaced whole (`rebuild` repairs papers so)
            return self._write_base(spec, key, rows)
        if rows.equals(current):
            return old
        delta = changed(spec, current, rows)
        if delta is None:  # rows were removed
            return self._write_base(spec, key, rows)
        return self._add_delta(spec, key, old, delta, rows.num_rows, lambda: rows)

    def _append_partition(self, spec: Table, key: str, old: Partition, rows: pa.Table
                          ) -> Partition:
        if spec.key:
            held = self._read_parts(spec, list(old.files), list(spec.key))
            count = newest(spec, pa.concat_tables([held, rows.select(list(spec.key))])
                           ).num_rows
        else:
            count = (old.rows or 0) + rows.num_rows
        return self._add_delta(spec, key, old, rows, count, lambda: newest(
            spec, pa.concat_tables([self._read_parts(spec, list(old.files), None), rows])))

    def _add_delta(self, spec: Table, key: str, old: Partition, delta: pa.Table, count: int,
                   merged: Callable[[], pa.Table]) -> Partition:
        """A partition with `delta` (its new and changed rows) on top of `old`; `merged`
        gives all its rows, for when the deltas are folded into a new base."""
        base_rows = sum(f.rows or 0 for f in old.base)
        delta_rows = sum(f.rows or 0 for f in old.deltas) + delta.num_rows
        if 2 * delta_rows >= base_rows:
            return self._write_base(spec, key, merged())
        if len(old.deltas) >= MAX_DELTAS:
            delta = newest(spec, pa.concat_tables(
                [self._read_parts(spec, list(old.deltas), None), delta]))
            return Partition(old.base, (self._write_part(spec, key, delta),), count)
        return Partition(old.base, (*old.deltas, self._write_part(spec, key, delta)), count)

    def _write_base(self, spec: Table, key: str, rows: pa.Table) -> Partition:
        pieces = [rows.slice(start, PIECE_ROWS) for start in range(0, rows.num_rows,
                                                                   PIECE_ROWS)]
        return Partition(tuple(self._write_part(spec, key, piece) for piece in pieces), (),
                         rows.num_rows)

    def _write_part(self, spec: Table, key: str, rows: pa.Table) -> Part:
        tx = self._tx_()
        rel = (f"tables/{spec.name}-{key}-{tx.pending.generation + 1:06d}-"
               f"{secrets.token_hex(4)}.parquet")
        return Part(rel, tx.new_file(rel, lambda path: write_new(path, rows, spec.name,
                                                                 spec.dictionary)))

    @_committing
    def write_snapshot(self, source: str, run_id: str, fetched_at: dt.datetime,
                       table: pa.Table) -> Path:
        day = fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%d")
        rel = f"snapshots/{source}/{day}/{run_id}.parquet"
        staging = self._tx_().pending
        if rel in staging.snapshots:
            raise StoreError(f"{self.root / rel}: snapshots are immutable and this one exists "
                             "already")
        table = to_table(table, snapshot_schemas()[source])
        self._tx_().new_file(rel, lambda path: write_new(path, table, f"snapshot:{source}",
                                                         SNAPSHOT_DICTIONARY))
        staging.snapshots.append(rel)
        return self.root / rel

    def add_snapshot(self, path: Path, rel: str) -> None:
        """Take another store's snapshot file (copied) at the same relative path."""
        staging = self._tx_().pending
        self._tx_().new_file(rel, lambda dest: copy_file(path, dest))
        staging.snapshots.append(rel)

    @_reading
    def snapshots(self, source: str | None = None) -> list[Snapshot]:
        """All snapshots in the order they were taken (run ids start with a UTC timestamp).

        A compacted month file stands for the runs it holds, one Snapshot each, so
        `rebuild` replays exactly the same batches before and after compaction."""
        found = [snap for rel in self._manifest().snapshots
                 for snap in _snapshots_in(self.root / rel)
                 if source is None or snap.source == source]
        return sorted(found, key=lambda s: (s.run_id, s.source))

    @_reading
    def read_snapshots(self, source: str, columns: list[str]) -> pa.Table:
        """`columns` of every snapshot of `source`, each file read once (a compacted month
        file holds many runs), not in any order."""
        paths = dict.fromkeys(s.path for s in self.snapshots(source))
        tables = [read_checked(p, f"snapshot:{source}", columns=columns) for p in paths]
        schema = snapshot_schemas()[source]
        return pa.concat_tables(tables) if tables else pa.schema(
            [schema.field(c) for c in columns]).empty_table()

    def forget_missing_snapshots(self) -> None:
        """Stop naming snapshot files that are gone (`rebuild --force` goes on without them)."""
        staging = self._tx_().pending
        staging.snapshots = [s for s in staging.snapshots if (self.root / s).is_file()]

    @_reading
    def read_snapshot(self, snap: Snapshot) -> pa.Table:
        groups = None if snap.row_groups is None else range(snap.row_groups[0],
                                                              sum(snap.row_groups))
        return read_checked(snap.path, f"snapshot:{snap.source}", row_groups=groups)

    @_committing
    def write_month(self, source: str, month: str, snaps: list[Snapshot]) -> Path:
        """Merge `snaps` (in run order) into one file of `snapshots/<source>/<month>/`, which
        then stands for them. Re-compacting a month folds the old month file's runs in
        again, so the result is the same as compacting once."""
        staging = self._tx_().pending
        rel = f"snapshots/{source}/{month}/{MONTH_PREFIX}{month}-{secrets.token_hex(4)}.parquet"
        schema = snapshot_schemas()[source]
        parts = [to_table(self.read_snapshot(snap), schema) for snap in snaps]
        runs, first = [], 0
        for snap, part in zip(snaps, parts, strict=True):
            count = -(-part.num_rows // ROW_GROUP)  # write_table splits at ROW_GROUP rows
            runs.append([snap.run_id, snap.day, first, count])
            first += count
        self._tx_().new_file(rel, lambda path: write_new(
            path, pa.concat_tables(parts), f"snapshot:{source}", SNAPSHOT_DICTIONARY,
            extra_meta={META_RUNS: json.dumps(runs).encode()}, parts=parts))
        folded = {str(s.path.relative_to(self.root)) for s in snaps}
        staging.snapshots = [s for s in staging.snapshots if s not in folded] + [rel]
        return self.root / rel

    @_committing
    def append_run(self, record: dict[str, object]) -> None:
        self.append("runs", pa.Table.from_pylist([record]))

    @_reading
    def runs(self, source: str | None = None) -> pd.DataFrame:
        df = self.read("runs").to_pandas()
        return df if source is None else df[df["source"] == source].reset_index(drop=True)

    @_reading
    def watermark(self, source: str) -> dt.datetime | None:
        """How far the source's runs have read everything; None before the first one. A
        partial run's mark is never past what it read whole (often where it started)."""
        runs = self.runs(source)
        marks = runs.loc[runs["status"].isin(MOVES_WATERMARK), "watermark_after"].dropna()
        return None if marks.empty else marks.max().to_pydatetime()

    @_committing
    def replace_with(self, other: Path) -> int:
        """Make the store hold exactly what the store folder `other` holds (see
        Transaction.take_all); returns the number of files taken."""
        return self._tx_().take_all(other)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store for writing: an exclusive lock (flock: the kernel frees it if we
        die), leftovers of an earlier crash removed, and what is written inside committed
        when the block ends without an exception (nothing of it otherwise). Nested blocks
        share the outer one."""
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
            self.stale_lock = _acquire(fd, path)
            self._depth = 1
            try:
                self._tx = Transaction(self.root)
                _migrations.run(self, self._tx.pending)
                yield
                self._tx.commit()
            except BaseException:
                if self._tx is not None:
                    self._tx.discard()
                raise
            finally:
                self._depth, self._tx = 0, None
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def commit(self) -> None:
        """Make everything written so far current (a checkpoint inside `lock()`)."""
        self._tx_().commit()


def _acquire(fd: int, path: Path) -> str | None:
    """Take the lock or say who holds it. The file records the holder, for the message a
    second writer sees; a record left by a process that died (the lock is free but the
    file is not empty) is returned as stale and taken over."""
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
    os.ftruncate(fd, 0)
    info = {"pid": os.getpid(), "host": socket.gethostname(),
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    os.pwrite(fd, json.dumps(info).encode(), 0)
    return left or None


def _snapshots_in(path: Path) -> list[Snapshot]:
    """The runs a snapshot file holds: one, or those a compacted month file lists."""
    source, day = path.parent.parent.name, path.parent.name
    if not path.stem.startswith(MONTH_PREFIX):
        return [Snapshot(source, day, path.stem, path)]
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"{path}: cannot read this month file ({exc}); restore it from the "
                         "data branch") from None
    return [Snapshot(source, run_day, run_id, path, (first, count))
            for run_id, run_day, first, count in json.loads(meta.get(META_RUNS, b"[]"))]
