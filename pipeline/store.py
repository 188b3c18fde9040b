"""The Parquet store under `data/`: tables, immutable snapshots, the run ledger, the lock.

Every write goes to a temp file in the same folder, is read back and checked,
then `os.replace`d over the old file, so a crash or a full disk never leaves a
half-written table. A file that cannot be read is reported with its path; it
is never treated as empty (that would silently drop the library).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline._schemas import SCHEMA_VERSION, SNAPSHOTS, TABLES

_META_VERSION = b"papertrail.schema_version"
_META_TABLE = b"papertrail.table"


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


class Store:
    """One folder of Parquet files. Readers need no lock; writers hold `lock()`."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    # -- tables ---------------------------------------------------------------------------------

    def table_path(self, name: str) -> Path:
        return self.root / f"{name}.parquet"

    def read(self, name: str) -> pa.Table:
        """The whole table, or an empty one with the right schema when it does not exist yet."""
        path = self.table_path(name)
        if not path.exists():
            return empty(TABLES[name])
        return _read_checked(path, TABLES[name], name)

    def write(self, name: str, table: pa.Table) -> None:
        _write_atomic(self.table_path(name), to_table(table, TABLES[name]), name)

    # -- snapshots ------------------------------------------------------------------------------

    def write_snapshot(self, source: str, run_id: str, fetched_at: dt.datetime,
                       table: pa.Table) -> Path:
        day = fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%d")
        path = self.root / "snapshots" / source / day / f"{run_id}.parquet"
        if path.exists():
            raise StoreError(f"{path}: snapshots are immutable and this one exists already")
        _write_atomic(path, to_table(table, SNAPSHOTS[source]), f"snapshot:{source}")
        return path

    def snapshots(self, source: str | None = None) -> list[Snapshot]:
        """All snapshots in the order they were taken (run ids start with a UTC timestamp)."""
        base = self.root / "snapshots"
        found = []
        for path in base.glob("*/*/*.parquet"):
            src, day = path.parent.parent.name, path.parent.name
            if source is None or src == source:
                found.append(Snapshot(src, day, path.stem, path))
        return sorted(found, key=lambda s: (s.run_id, s.source))

    def read_snapshot(self, snap: Snapshot) -> pa.Table:
        return _read_checked(snap.path, SNAPSHOTS[snap.source], f"snapshot:{snap.source}")

    # -- the run ledger -------------------------------------------------------------------------

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

    # -- one writer at a time -------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """An exclusive lock on the store (flock: the kernel frees it if we die).

        The file also records who holds it, for the message a second writer sees; a
        file left by a process that died is detected as stale and taken over.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
                raise StoreLocked(
                    f"{path}: the store is locked by another papertrail process ({holder}); "
                    "wait for it to finish"
                ) from None
            os.ftruncate(fd, 0)
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
            os.pwrite(fd, json.dumps(info).encode(), 0)
            try:
                yield
            finally:
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def stale_lock(self) -> str | None:
        """Who left a lock file behind without holding the lock (a crashed run), if anyone."""
        path = self.root / ".lock"
        if not path.exists():
            return None
        text = path.read_text(errors="replace").strip()
        if not text:
            return None
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # held: not stale
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return text


def _read_checked(path: Path, schema: pa.Schema, name: str) -> pa.Table:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(
            f"{path}: cannot read this Parquet file ({exc}). It was not replaced; restore it "
            "(e.g. from the data branch) or run `papertrail rebuild`"
        ) from None
    meta = table.schema.metadata or {}
    version = meta.get(_META_VERSION, b"?").decode()
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version}, this papertrail reads "
                         f"{SCHEMA_VERSION}; run `papertrail rebuild`")
    if not table.schema.remove_metadata().equals(schema):
        raise StoreError(f"{path}: columns do not match the {name} schema; run "
                         "`papertrail rebuild`")
    return table.replace_schema_metadata(None)


def _write_atomic(path: Path, table: pa.Table, name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {_META_VERSION: SCHEMA_VERSION.encode(), _META_TABLE: name.encode()}
    table = table.replace_schema_metadata(meta)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            pq.write_table(table, fh, compression="zstd")
            fh.flush()
            os.fsync(fh.fileno())
        written = pq.read_metadata(tmp)
        if written.num_rows != table.num_rows:
            raise StoreError(f"{tmp}: wrote {written.num_rows} rows, expected {table.num_rows}")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
