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
files written new and read checked, `partition` how a table's rows are split, `writing`
a table's rows into a transaction, `snapshots` the snapshot files, `lock` the writers'
lock, `durable` fsync and atomic replace, `migrations` the named upgrades of a store an
earlier release wrote. What tables and snapshots a store holds it is handed, as a
`pipeline.tables.Catalog` (the sources registry makes it): the store imports no source.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.store import migrations as _migrations
from pipeline.store import snapshots as _snapshots
from pipeline.store.access import Access, committing, reading_one
from pipeline.store.lock import StoreLocked
from pipeline.store.manifest import (
    MANIFEST,
    RESTORING,
    Manifest,
    Part,
    copy_file,
    load,
    problems,
    same_files,
    unknown_tables,
)
from pipeline.store.parquet import SNAPSHOT_DICTIONARY, StoreError, read_checked, write_new
from pipeline.store.partition import newest
from pipeline.store.snapshots import MONTH_PREFIX, Snapshot
from pipeline.store.writing import PartitionWriter, read_parts
from pipeline.tables import MOVES_WATERMARK, TABLES, to_table

__all__ = ["MANIFEST", "MONTH_PREFIX", "RESTORING", "Snapshot", "Store", "StoreError",
           "StoreLocked"]



class Store(Access):
    """One folder of Parquet files: its tables and snapshots, read one commit whole and
    written under the lock (`Access`)."""

    @reading_one
    def is_empty(self) -> bool:
        return not self._manifest().files()

    @reading_one
    def holds(self, manifest: str) -> bool:
        """Whether the store names the same files as this manifest text (another copy's)."""
        return same_files(manifest, self._manifest(), self.root / MANIFEST)

    @reading_one
    def files(self) -> list[Path]:
        """Every live data file (not the manifest itself)."""
        return [self.root / rel for rel in sorted(self._manifest().files())]

    @reading_one
    def rows(self, name: str) -> int:
        """The row count of a table, without reading it."""
        known = self._manifest().rows(name)
        if known is not None:
            return known
        return sum(pq.read_metadata(p).num_rows for p in self.table_files(name))

    @reading_one
    def check(self) -> list[str]:
        """What is wrong with the live files (missing, unreadable, other schema, row counts
        other than the manifest says), read from their footers only."""
        return problems(self.root, self._manifest(), self.catalog)

    @reading_one
    def table_files(self, name: str) -> list[Path]:
        """The files that hold a table now."""
        partitions = self._manifest().tables.get(name, {})
        return [self.root / f.path for key in sorted(partitions)
                for f in partitions[key].files]

    @reading_one
    def read(self, name: str, columns: list[str] | None = None, *,
             schema: pa.Schema | None = None) -> pa.Table:
        """The table (or some columns), or an empty one when it does not exist yet: its
        partitions in key order, each merged (`partition.newest`). `schema`: as an
        earlier release wrote it (for a migration)."""
        spec = self.catalog.spec(name)
        partitions = self._manifest().tables.get(name, {})
        wanted = columns if columns is None else list(dict.fromkeys([*spec.key, *columns]))
        tables: list[pa.Table] = []
        plain: list[Part] = []
        for key in sorted(partitions):
            partition = partitions[key]
            if not partition.deltas:
                plain += partition.base  # read together with the next ones
                continue
            tables.append(read_parts(self.root, spec, plain, wanted, schema))
            plain = []
            tables.append(newest(spec, read_parts(self.root, spec, list(partition.files),
                                                  wanted, schema)))
        tables.append(read_parts(self.root, spec, plain, wanted, schema))
        table = pa.concat_tables(tables)
        return table if columns is None else table.select(columns)

    @reading_one
    def library(self, columns: list[str] | None = None) -> pa.Table:
        """Papers with the columns every source's own tables add (`Catalog.join`)."""
        own = TABLES["papers"].schema.names
        papers = self.read("papers", None if columns is None else [
            c for c in dict.fromkeys(["arxiv_id", *columns]) if c in own])
        view = self.catalog.join(papers, self.source_tables())
        return view if columns is None else view.select(columns)

    @reading_one
    def source_tables(self) -> dict[str, pa.Table]:
        """Every source's own tables, by name."""
        return {t.name: self.read(t.name) for t in self.catalog.joined}

    @committing
    def write(self, name: str, table: pa.Table) -> None:
        """Make the table hold exactly these rows. Only partitions whose rows changed are
        written (`writing`; see docs/DATA.md)."""
        spec = self.catalog.tables[name]
        PartitionWriter(self._tx_(), spec).put(to_table(table, spec.schema), replace=True)

    @committing
    def append(self, name: str, rows: pa.Table) -> None:
        """Add rows (a row whose key the table holds replaces it), written as deltas of the
        partitions they fall in: nothing else is read or rewritten."""
        spec = self.catalog.tables[name]
        PartitionWriter(self._tx_(), spec).put(to_table(rows, spec.schema), replace=False)

    def drop(self, name: str) -> None:
        """Stop naming a table's files (a migration retires it); they go at the commit."""
        self._tx_().pending.tables.pop(name, None)

    @committing
    def write_snapshot(self, source: str, run_id: str, fetched_at: dt.datetime,
                       table: pa.Table) -> Path:
        day = fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%d")
        rel = f"snapshots/{source}/{day}/{run_id}.parquet"
        staging = self._tx_().pending
        if rel in staging.snapshots:
            raise StoreError(f"{self.root / rel}: snapshots are immutable and this one exists "
                             "already")
        table = to_table(table, self.catalog.snapshots[source])
        self._tx_().new_file(rel, lambda path: write_new(path, table, f"snapshot:{source}",
                                                         SNAPSHOT_DICTIONARY))
        staging.snapshots.append(rel)
        return self.root / rel

    def add_snapshot(self, path: Path, rel: str) -> None:
        """Take another store's snapshot file (copied) at the same relative path."""
        self._tx_().new_file(rel, lambda dest: copy_file(path, dest))
        self._tx_().pending.snapshots.append(rel)

    @reading_one
    def snapshots(self, source: str | None = None) -> list[Snapshot]:
        """All snapshots in the order they were taken (run ids start with a UTC timestamp).

        A compacted month file stands for the runs it holds, one Snapshot each, so
        `rebuild` replays exactly the same batches before and after compaction."""
        found = [snap for rel in self._manifest().snapshots
                 for snap in _snapshots.snapshots_in(self.root / rel)
                 if source is None or snap.source == source]
        return sorted(found, key=lambda s: (s.run_id, s.source))

    @reading_one
    def read_snapshots(self, source: str, columns: list[str]) -> pa.Table:
        """`columns` of every snapshot of `source`, each file read once (a compacted month
        file holds many runs), not in any order."""
        schema = self.catalog.snapshots[source]
        paths = dict.fromkeys(s.path for s in self.snapshots(source))
        tables = [read_checked(p, f"snapshot:{source}", schema, columns=columns)
                  for p in paths]
        return pa.concat_tables(tables) if tables else pa.schema(
            [schema.field(c) for c in columns]).empty_table()

    def forget_missing_snapshots(self) -> None:
        """Stop naming snapshot files that are gone (`rebuild --force` goes on without them)."""
        staging = self._tx_().pending
        staging.snapshots = [s for s in staging.snapshots if (self.root / s).is_file()]

    @reading_one
    def read_snapshot(self, snap: Snapshot) -> pa.Table:
        return _snapshots.read(snap, self.catalog.snapshots[snap.source])

    @committing
    def write_month(self, source: str, month: str, snaps: list[Snapshot]) -> Path:
        """Merge `snaps` (in run order) into one file of `snapshots/<source>/<month>/`, which
        then stands for them. Re-compacting a month folds the old month file's runs in
        again, so the result is the same as compacting once."""
        schema = self.catalog.snapshots[source]
        rel = _snapshots.write_month(self._tx_(), source, month, [
            (snap, to_table(self.read_snapshot(snap), schema)) for snap in snaps])
        folded = {str(s.path.relative_to(self.root)) for s in snaps}
        staging = self._tx_().pending
        staging.snapshots = [s for s in staging.snapshots if s not in folded] + [rel]
        return self.root / rel

    @committing
    def append_run(self, record: dict[str, object]) -> None:
        self.append("runs", pa.Table.from_pylist([record]))

    @reading_one
    def runs(self, source: str | None = None) -> pd.DataFrame:
        df = self.read("runs").to_pandas()
        return df if source is None else df[df["source"] == source].reset_index(drop=True)

    @reading_one
    def watermark(self, source: str) -> dt.datetime | None:
        """How far the source's runs have read everything; None before the first one. A
        partial run's mark is never past what it read whole (often where it started)."""
        runs = self.runs(source)
        marks = runs.loc[runs["status"].isin(MOVES_WATERMARK), "watermark_after"].dropna()
        return None if marks.empty else marks.max().to_pydatetime()

    @committing
    def replace_with(self, other: Path) -> int:
        """Make the store hold exactly what the store folder `other` holds (see
        Transaction.take_all); returns the number of files taken."""
        unknown_tables(load(other), self.catalog, other / MANIFEST)
        return self._tx_().take_all(other)

    def _upgrade(self, pending: Manifest) -> None:
        _migrations.run(self, pending)
