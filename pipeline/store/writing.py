"""A table's rows written into a writer's transaction: only the partitions whose rows
changed, each as a delta file on its base, or as a new base once its deltas have grown to
half of it (docs/DATA.md)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from pipeline.store.manifest import Part, Partition, Transaction
from pipeline.store.parquet import StoreError, read_files, write_new
from pipeline.store.partition import changed, newest, split
from pipeline.tables import Table

# A partition's base is written in files of at most PIECE_ROWS rows (~15 MB of digests,
# the widest rows), so no file nears GitHub's limits whatever a partition holds; and its
# delta files are merged into one when there are more than MAX_DELTAS.
PIECE_ROWS = 10_000
MAX_DELTAS = 8


def read_parts(root: Path, spec: Table, parts: list[Part], columns: list[str] | None,
               schema: pa.Schema | None = None) -> pa.Table:
    return read_files([root / f.path for f in parts], spec, columns, schema=schema)


class PartitionWriter:
    """Puts one table's rows into a transaction's pending manifest."""

    def __init__(self, tx: Transaction, spec: Table) -> None:
        self.tx, self.spec = tx, spec

    def put(self, table: pa.Table, *, replace: bool) -> None:
        """`replace`: the table holds exactly these rows; else they are added (a row whose
        key the table holds replaces it)."""
        staging = self.tx.pending
        stored = staging.tables.get(self.spec.name, {})
        result = {} if replace else dict(stored)
        for key, rows in split(self.spec, table).items():
            old_partition = stored.get(key)
            if old_partition is None:
                result[key] = self._write_base(key, rows)
            elif replace:
                result[key] = self._replace(key, old_partition, rows)
            else:
                result[key] = self._append(key, old_partition, rows)
        staging.tables[self.spec.name] = result

    def _read(self, parts: list[Part] | tuple[Part, ...],
              columns: list[str] | None = None) -> pa.Table:
        return read_parts(self.tx.root, self.spec, list(parts), columns)

    def _replace(self, key: str, old: Partition, rows: pa.Table) -> Partition:
        try:
            current = newest(self.spec, self._read(old.files))
        except StoreError:  # damaged: replaced whole (`rebuild` repairs papers so)
            return self._write_base(key, rows)
        if rows.equals(current):
            return old
        delta = changed(self.spec, current, rows)
        if delta is None:  # rows were removed
            return self._write_base(key, rows)
        return self._add_delta(key, old, delta, rows.num_rows, lambda: rows)

    def _append(self, key: str, old: Partition, rows: pa.Table) -> Partition:
        spec = self.spec
        if spec.key:
            held = self._read(old.files, list(spec.key))
            count = newest(spec, pa.concat_tables([held, rows.select(list(spec.key))])
                           ).num_rows
        else:
            count = (old.rows or 0) + rows.num_rows
        return self._add_delta(key, old, rows, count, lambda: newest(
            spec, pa.concat_tables([self._read(old.files), rows])))

    def _add_delta(self, key: str, old: Partition, delta: pa.Table, count: int,
                   merged: Callable[[], pa.Table]) -> Partition:
        """A partition with `delta` (its new and changed rows) on top of `old`; `merged`
        gives all its rows, for when the deltas are folded into a new base."""
        base_rows = sum(f.rows or 0 for f in old.base)
        delta_rows = sum(f.rows or 0 for f in old.deltas) + delta.num_rows
        if 2 * delta_rows >= base_rows:
            return self._write_base(key, merged())
        if len(old.deltas) >= MAX_DELTAS:
            delta = newest(self.spec, pa.concat_tables([self._read(old.deltas), delta]))
            return Partition(old.base, (self._write_part(key, delta),), count)
        return Partition(old.base, (*old.deltas, self._write_part(key, delta)), count)

    def _write_base(self, key: str, rows: pa.Table) -> Partition:
        pieces = [rows.slice(start, PIECE_ROWS) for start in range(0, rows.num_rows,
                                                                   PIECE_ROWS)]
        return Partition(tuple(self._write_part(key, piece) for piece in pieces), (),
                         rows.num_rows)

    def _write_part(self, key: str, rows: pa.Table) -> Part:
        spec = self.spec
        rel = (f"tables/{spec.name}-{key}-{self.tx.pending.generation + 1:06d}-"
               f"{secrets.token_hex(4)}.parquet")
        return Part(rel, self.tx.new_file(rel, lambda path: write_new(path, rows, spec.name,
                                                                      spec.dictionary)))
