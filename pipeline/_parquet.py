"""The store's Parquet files: each written once to a new name, fsynced and read back
checked; read only after their schema version and columns are checked."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline._durable import fsync
from pipeline._schemas import SCHEMA_VERSION, TABLES
from pipeline.sources import snapshot_schemas

META_VERSION = b"papertrail.schema_version"
META_TABLE = b"papertrail.table"
# A month file (see `Store.write_month`) lists the runs it holds, each in row groups of its
# own: [[run_id, day, first row group, row groups], …].
META_RUNS = b"papertrail.runs"
ROW_GROUP = 20_000
_DICTIONARY = {"version", "categories", "primary_category", "source", "status", "language",
               "model", "prompt_hash", "topics", "hf_keywords"}


class StoreError(Exception):
    """A table is unreadable, has the wrong schema, or the store is locked."""


def footer_problem(path: Path, schema: pa.Schema, rows: int | None) -> str | None:
    try:
        meta = pq.read_metadata(path)
        found = pq.read_schema(path)
    except FileNotFoundError:
        return "missing"
    except (OSError, pa.ArrowException) as exc:
        return f"unreadable ({exc})"
    version = (found.metadata or {}).get(META_VERSION, b"?").decode()
    if version != SCHEMA_VERSION:
        return f"schema version {version}, expected {SCHEMA_VERSION}"
    if not found.remove_metadata().equals(schema):
        return "columns do not match its schema"
    if rows is not None and meta.num_rows != rows:
        return f"{meta.num_rows} rows, the manifest says {rows}"
    return None


def read_checked(path: Path, name: str, columns: list[str] | None = None,
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
    version = (found.metadata or {}).get(META_VERSION, b"?").decode()
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version}, this papertrail reads "
                         f"{SCHEMA_VERSION}. {_remedy(name)}")
    full = TABLES.get(name) or snapshot_schemas()[name.removeprefix("snapshot:")]
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


def write_new(path: Path, table: pa.Table, name: str,
                   before: pq.ParquetFile | None = None,
                   extra_meta: dict[bytes, bytes] | None = None,
                   parts: list[pa.Table] | None = None) -> int:
    """Write `table` (after the row groups of `before`, if given) to a new file, fsync and
    check it; returns its row count. With `parts` (whose concatenation is `table`), each
    part starts a row group of its own, and the file must have one per ROW_GROUP rows
    of each."""
    meta = {META_VERSION: SCHEMA_VERSION.encode(), META_TABLE: name.encode(),
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
            batches = list(before.iter_batches(batch_size=ROW_GROUP)) or []
            for batch in batches[:-1]:  # full row groups; the last one joins the new rows
                writer.write_table(pa.Table.from_batches([batch], writer.schema))
            if batches:
                last = pa.Table.from_batches(batches[-1:]).replace_schema_metadata(meta)
                tail = pa.concat_tables([last, table])
        for part in parts if parts is not None else [tail]:
            if parts is None or part.num_rows:  # an empty run owns no row group
                writer.write_table(part.replace_schema_metadata(meta),
                                   row_group_size=ROW_GROUP)
    fsync(path)
    written = pq.read_metadata(path)
    if written.num_rows != expected:
        raise StoreError(f"{path}: wrote {written.num_rows} rows, expected {expected}")
    groups = sum(-(-p.num_rows // ROW_GROUP) for p in parts or [])
    if parts is not None and written.num_row_groups != groups:
        raise StoreError(f"{path}: wrote {written.num_row_groups} row groups, expected "
                         f"{groups}")
    return expected



