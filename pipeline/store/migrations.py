"""Named, ordered upgrades of a store an earlier release wrote.

The first writer of such a store runs those its manifest does not list yet, inside its own
transaction (`Store.lock`): they commit with its changes, or not at all, and a crash
anywhere leaves the store as it was, to be upgraded by the next writer. A reader that finds
one pending takes the lock once to upgrade it first (`Store.snapshot`). A column added as
nullable needs none (older files read it as null); anything else that changes what a file
holds is one more `Migration` at the end of MIGRATIONS, never an edit of an earlier one.
A migration sees the store as `Upgrading` (no import of the store's API: no cycle) and the
writer's pending manifest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.store.manifest import LEGACY, Manifest
from pipeline.store.parquet import StoreError, read_files
from pipeline.tables import (
    HF_COLUMNS,
    LEGACY_VERSION,
    PAPERS,
    PAPERS_WITH_HF,
    SIGNALS,
    Catalog,
    to_table,
)


class Upgrading(Protocol):
    """What a migration may do with the store whose writer runs it."""

    root: Path

    @property
    def catalog(self) -> Catalog: ...

    def read(self, name: str, columns: list[str] | None = None, *,
             schema: pa.Schema | None = None) -> pa.Table: ...

    def write(self, name: str, table: pa.Table) -> None: ...

    def drop(self, name: str) -> None: ...


@dataclass(frozen=True)
class Migration:
    name: str  # recorded in manifest.json once done
    apply: Callable[[Upgrading, Manifest], None]  # inside the writer's transaction


def _tables_in_partitions(store: Upgrading, pending: Manifest) -> None:
    """Format 1 and 2 (one file per table, papers with every Hugging Face column in it):
    each table written again in partitions."""
    for name, partitions in list(pending.tables.items()):
        if LEGACY in partitions:
            spec = store.catalog.tables[name]
            table = read_files([store.root / f.path for f in partitions[LEGACY].files], spec,
                               schema=PAPERS_WITH_HF if name == "papers" else spec.schema,
                               version=LEGACY_VERSION)
            del pending.tables[name]  # written again whole
            store.write(name, table)  # papers without HF's columns: they go to hf
            if name == "papers":
                store.write("hf", _picks(store, table, None))


def _hf_in_its_own_table(store: Upgrading, pending: Manifest) -> None:
    """Hugging Face's columns leave papers for the source's own table, `hf` (format 3 kept
    its counts apart, in `signals`)."""
    if "papers" in pending.tables and "hf" not in pending.tables:
        papers = store.read("papers", schema=PAPERS_WITH_HF)
        signals = store.read("signals", schema=SIGNALS) if "signals" in pending.tables \
            else None
        store.write("hf", _picks(store, papers, signals))
        store.write("papers", papers.select(PAPERS.names))
    store.drop("signals")


def _picks(store: Upgrading, papers: pa.Table, signals: pa.Table | None) -> pa.Table:
    """The hf table's rows from papers with their HF columns (and, when kept apart, the
    counts): every paper the community picked has its first day."""
    picked = papers.filter(pc.is_valid(papers["hf_day"]))
    if signals is not None:
        at = pc.index_in(picked["arxiv_id"], value_set=signals["arxiv_id"].combine_chunks())
        for column in SIGNALS.names[1:]:
            picked = picked.set_column(picked.schema.get_field_index(column),
                                       SIGNALS.field(column), signals[column].take(at))
    return to_table(picked.select(["arxiv_id", *HF_COLUMNS]), store.catalog.tables["hf"].schema)


MIGRATIONS = (
    Migration("tables-in-partitions", _tables_in_partitions),
    Migration("hf-in-its-own-table", _hf_in_its_own_table),
)


def pending(manifest: Manifest) -> list[str]:
    """The migrations a store with files still needs (an empty one needs none)."""
    newer = set(manifest.migrations) - {m.name for m in MIGRATIONS}
    if newer:
        raise StoreError(f"the store was upgraded by a newer papertrail "
                         f"({', '.join(sorted(newer))}); upgrade papertrail")
    if not manifest.files():
        return []
    return [m.name for m in MIGRATIONS if m.name not in manifest.migrations]


def run(store: Upgrading, manifest: Manifest) -> None:
    """Apply the pending migrations in order, each recorded in the writer's manifest."""
    todo = set(pending(manifest))
    for migration in MIGRATIONS:
        if migration.name in todo:
            migration.apply(store, manifest)
        if migration.name not in manifest.migrations:
            manifest.migrations.append(migration.name)
