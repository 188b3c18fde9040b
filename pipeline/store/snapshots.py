"""Snapshot files: one per source run (`snapshots/<source>/<day>/<run id>.parquet`),
immutable, or a compacted month file that stands for the runs it holds."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.store.manifest import Transaction
from pipeline.store.parquet import (
    META_RUNS,
    ROW_GROUP,
    SNAPSHOT_DICTIONARY,
    StoreError,
    read_checked,
    write_new,
)

MONTH_PREFIX = "month-"


@dataclass(frozen=True)
class Snapshot:
    source: str
    day: str
    run_id: str
    path: Path
    row_groups: tuple[int, int] | None = None  # (first, count) inside a compacted month file


def read(snap: Snapshot, schema: pa.Schema) -> pa.Table:
    groups = None if snap.row_groups is None else range(snap.row_groups[0],
                                                          sum(snap.row_groups))
    return read_checked(snap.path, f"snapshot:{snap.source}", schema, row_groups=groups)


def write_month(tx: Transaction, source: str, month: str, parts: list[tuple[Snapshot, pa.Table]]
                ) -> str:
    """One file of `snapshots/<source>/<month>/` holding `parts` (in run order), each run
    in row groups of its own, which it lists; returns its path in the store."""
    rel = f"snapshots/{source}/{month}/{MONTH_PREFIX}{month}-{secrets.token_hex(4)}.parquet"
    runs, first = [], 0
    for snap, part in parts:
        count = -(-part.num_rows // ROW_GROUP)  # write_table splits at ROW_GROUP rows
        runs.append([snap.run_id, snap.day, first, count])
        first += count
    tables = [part for _, part in parts]
    tx.new_file(rel, lambda path: write_new(
        path, pa.concat_tables(tables), f"snapshot:{source}", SNAPSHOT_DICTIONARY,
        extra_meta={META_RUNS: json.dumps(runs).encode()}, parts=tables))
    return rel


def snapshots_in(path: Path) -> list[Snapshot]:
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
