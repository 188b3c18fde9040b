"""The store's Parquet files: each written once to a new name, fsynced and read back
checked; read only after their schema version and columns are checked. A file may lack
columns its table gained since it was written: they read as null."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from pipeline.store.durable import fsync
from pipeline.tables import RESTORE, SCHEMA_VERSION, SNAPSHOT_VERSIONS, Table

META_VERSION = b"papertrail.schema_version"
META_TABLE = b"papertrail.table"
# A month file (see `Store.write_month`) lists the runs it holds, each in row groups of its
# own: [[run_id, day, first row group, row groups], …].
META_RUNS = b"papertrail.runs"
ROW_GROUP = 20_000
# A snapshot's low-cardinality columns (a table's are in its `Table`).
SNAPSHOT_DICTIONARY = frozenset({"version", "categories", "primary_category"})


class StoreError(Exception):
    """A table is unreadable, has the wrong schema, or the store is locked."""


def footer_problem(path: Path, schema: pa.Schema, rows: int | None,
                   versions: tuple[str, ...]) -> str | None:
    try:
        meta = pq.read_metadata(path)
        found = pq.read_schema(path)
    except FileNotFoundError:
        return "missing"
    except (OSError, pa.ArrowException) as exc:
        return f"unreadable ({exc})"
    version = (found.metadata or {}).get(META_VERSION, b"?").decode()
    if version not in versions:
        return f"schema version {version}, expected {' or '.join(versions)}"
    if not fits(found, schema):
        return "columns do not match its schema"
    if rows is not None and meta.num_rows != rows:
        return f"{meta.num_rows} rows, the manifest says {rows}"
    return None


def read_checked(path: Path, name: str, schema: pa.Schema, columns: list[str] | None = None,
                 row_groups: range | None = None) -> pa.Table:
    """Read a snapshot file (or some of its row groups), after checking the file's schema
    version and its full schema."""
    try:
        found = pq.read_schema(path)
        if row_groups is None:
            table = pq.read_table(path, columns=columns)
        else:
            table = pq.ParquetFile(path).read_row_groups(list(row_groups), columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"{path}: cannot read this Parquet file ({exc}). It was not "
                         f"replaced; {RESTORE}") from None
    _check(path, name, found, schema, SNAPSHOT_VERSIONS, RESTORE)
    return table.replace_schema_metadata(None)


def read_files(paths: list[Path], spec: Table, columns: list[str] | None = None, *,
               schema: pa.Schema | None = None, version: str = SCHEMA_VERSION) -> pa.Table:
    """The rows of a table's files, in the order given, through one `pyarrow.dataset`
    (its fragments are read in parallel, in order); each file's footer is checked first.
    `schema` and `version`: what an earlier release wrote, read to migrate it."""
    name, remedy = spec.name, spec.remedy
    schema = spec.schema if schema is None else schema
    if not paths:
        return (schema if columns is None else pa.schema([schema.field(c) for c in columns])
                ).empty_table()
    dataset = ds.dataset([str(p) for p in paths], format="parquet", schema=schema)
    for path, fragment in zip(paths, dataset.get_fragments(), strict=True):
        try:
            found = fragment.physical_schema
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: cannot read this Parquet file ({exc}). It was not "
                             f"replaced; {remedy}") from None
        _check(path, name, found, schema, (version,), remedy)
    try:
        table = dataset.to_table(columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"cannot read the {name} table's files ({exc}). It was not "
                         f"replaced; {remedy}") from None
    return table.replace_schema_metadata(None)


def fits(found: pa.Schema, schema: pa.Schema) -> bool:
    """Whether a file's columns are the schema's, or some of them (a nullable column added
    to the table since reads as null), each of the same type."""
    for fld in found:
        index = schema.get_field_index(fld.name)
        if index < 0 or not schema.field(index).type.equals(fld.type):
            return False
    return all(fld.nullable for fld in schema if fld.name not in found.names)


def _check(path: Path, name: str, found: pa.Schema, schema: pa.Schema,
           versions: tuple[str, ...], remedy: str) -> None:
    version = (found.metadata or {}).get(META_VERSION, b"?").decode()
    if version not in versions:
        raise StoreError(f"{path}: schema version {version}, this papertrail reads "
                         f"{' or '.join(versions)}. It was not replaced; {remedy}")
    if not fits(found, schema):
        raise StoreError(f"{path}: columns do not match the {name} schema. It was not "
                         f"replaced; {remedy}")


def write_new(path: Path, table: pa.Table, name: str, dictionary: frozenset[str],
              extra_meta: dict[bytes, bytes] | None = None,
              parts: list[pa.Table] | None = None) -> int:
    """Write `table` to a new file, fsync and check it; returns its row count. With
    `parts` (whose concatenation is `table`), each part starts a row group of its own,
    and the file must have one per ROW_GROUP rows of each."""
    meta = {META_VERSION: SCHEMA_VERSION.encode(), META_TABLE: name.encode(),
            **(extra_meta or {})}
    table = table.replace_schema_metadata(meta)
    # Dictionary-encode only low-cardinality columns: encoding titles and abstracts costs
    # time and saves nothing. Bounded row groups keep reads lean.
    low = [f.name for f in table.schema if f.name in dictionary]
    with open(path, "wb") as fh, pq.ParquetWriter(fh, table.schema, compression="zstd",
                                                  # stubs: use_dictionary also takes column names
                                                  use_dictionary=low) as writer:  # type: ignore[arg-type]
        for part in parts if parts is not None else [table]:
            if parts is None or part.num_rows:  # an empty run owns no row group
                writer.write_table(part.replace_schema_metadata(meta),
                                   row_group_size=ROW_GROUP)
    fsync(path)
    written = pq.read_metadata(path)
    if written.num_rows != table.num_rows:
        raise StoreError(f"{path}: wrote {written.num_rows} rows, expected {table.num_rows}")
    groups = sum(-(-p.num_rows // ROW_GROUP) for p in parts or [])
    if parts is not None and written.num_row_groups != groups:
        raise StoreError(f"{path}: wrote {written.num_row_groups} row groups, expected "
                         f"{groups}")
    return table.num_rows
