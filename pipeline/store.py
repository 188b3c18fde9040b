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
import logging
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline._schemas import SCHEMA_VERSION, SNAPSHOTS, TABLES

log = logging.getLogger(__name__)

_META_VERSION = b"papertrail.schema_version"
_META_TABLE = b"papertrail.table"
# A month file (see `write_month`) lists the runs it holds, each in row groups of its own:
# [[run_id, day, first row group, row groups], …].
_META_RUNS = b"papertrail.runs"
MONTH_PREFIX = "month-"
_ROW_GROUP = 20_000
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


class Store:
    """One folder of Parquet files. Readers need no lock; writers hold `lock()`."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.stale_lock: str | None = None  # who left a lock behind, seen at the last lock()

    # -- tables ---------------------------------------------------------------------------------

    def table_path(self, name: str) -> Path:
        return self.root / f"{name}.parquet"

    def read(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """The table (or some columns), or an empty one when it does not exist yet."""
        path = self.table_path(name)
        schema = TABLES[name]
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        if not path.exists():
            return empty(schema)
        return _read_checked(path, name, columns)

    def write(self, name: str, table: pa.Table) -> None:
        _write_atomic(self.table_path(name), to_table(table, TABLES[name]), name)

    def append(self, name: str, rows: pa.Table) -> None:
        """Add rows at the end, streaming the old file through row group by row group, so
        appending to a large table costs memory for the new rows only."""
        path = self.table_path(name)
        rows = to_table(rows, TABLES[name])
        if not path.exists():
            self.write(name, rows)
            return
        self.read(name, columns=[])  # checks the file's schema and version
        old = pq.ParquetFile(path)
        _write_atomic(path, rows, name, before=old)

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
        """All snapshots in the order they were taken (run ids start with a UTC timestamp).

        A compacted month file stands for the runs it holds, one Snapshot each, so
        `rebuild` replays exactly the same batches before and after compaction."""
        base = self.root / "snapshots"
        found = []
        for path in base.glob("*/*/*.parquet"):
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

    def read_snapshot(self, snap: Snapshot) -> pa.Table:
        groups = None if snap.row_groups is None else range(snap.row_groups[0],
                                                              sum(snap.row_groups))
        return _read_checked(snap.path, f"snapshot:{snap.source}", row_groups=groups)

    def write_month(self, source: str, month: str, snaps: list[Snapshot]) -> Path:
        """Merge `snaps` (in run order) into `snapshots/<source>/<month>/month-<month>.parquet`,
        then delete the files they came from. Re-compacting a month folds the old month
        file's runs in again, so the result is the same as compacting once."""
        path = self.root / "snapshots" / source / month / f"{MONTH_PREFIX}{month}.parquet"
        parts, runs, first = [], [], 0
        for snap in snaps:
            table = to_table(self.read_snapshot(snap), SNAPSHOTS[source])
            count = -(-table.num_rows // _ROW_GROUP)  # write_table splits at _ROW_GROUP rows
            parts.append(table)
            runs.append([snap.run_id, snap.day, first, count])
            first += count
        _write_atomic(path, pa.concat_tables(parts), f"snapshot:{source}",
                      extra_meta={_META_RUNS: json.dumps(runs).encode()}, parts=parts)
        for old in {s.path for s in snaps} - {path}:
            old.unlink()
            with contextlib.suppress(OSError):  # a day folder that still holds files stays
                old.parent.rmdir()
        return path

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
        record left by a process that died (the lock is free but the file is not empty)
        is reported as stale and taken over.
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
            left = os.pread(fd, 4096, 0).decode(errors="replace").strip()
            if left:
                # We got the lock, so whoever wrote this is gone without cleaning up.
                log.warning("%s: stale lock left by %s; taking it over", path, left)
            self.stale_lock = left or None
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
        raise StoreError(
            f"{path}: cannot read this Parquet file ({exc}). It was not replaced; restore it "
            "(e.g. from the data branch) or run `papertrail rebuild`"
        ) from None
    version = (found.metadata or {}).get(_META_VERSION, b"?").decode()
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version}, this papertrail reads "
                         f"{SCHEMA_VERSION}; run `papertrail rebuild`")
    full = TABLES.get(name) or SNAPSHOTS[name.removeprefix("snapshot:")]
    if not found.remove_metadata().equals(full):
        raise StoreError(f"{path}: columns do not match the {name} schema; run "
                         "`papertrail rebuild`")
    return table.replace_schema_metadata(None)


def _write_atomic(path: Path, table: pa.Table, name: str,
                  before: pq.ParquetFile | None = None,
                  extra_meta: dict[bytes, bytes] | None = None,
                  parts: list[pa.Table] | None = None) -> None:
    """Write `table` (after the row groups of `before`, if given) to a temp file, check it,
    then move it over `path`. With `parts` (whose concatenation is `table`), each part
    starts a row group of its own, and the file must have one per _ROW_GROUP rows of each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {_META_VERSION: SCHEMA_VERSION.encode(), _META_TABLE: name.encode(),
            **(extra_meta or {})}
    table = table.replace_schema_metadata(meta)
    expected = table.num_rows + (before.metadata.num_rows if before else 0)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # Dictionary-encode only low-cardinality columns: encoding titles and abstracts costs
    # time and saves nothing. Bounded row groups keep reads and appends lean.
    low = [f.name for f in table.schema if f.name in _DICTIONARY]
    try:
        with open(tmp, "wb") as fh, pq.ParquetWriter(fh, table.schema, compression="zstd",
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
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        written = pq.read_metadata(tmp)
        if written.num_rows != expected:
            raise StoreError(f"{tmp}: wrote {written.num_rows} rows, expected {expected}")
        groups = sum(-(-p.num_rows // _ROW_GROUP) for p in parts or [])
        if parts is not None and written.num_row_groups != groups:
            raise StoreError(f"{tmp}: wrote {written.num_row_groups} row groups, expected "
                             f"{groups}")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
