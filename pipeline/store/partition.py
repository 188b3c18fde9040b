"""How a table's rows are split into partitions, and what changed in one.

Papers, versions, digests and signals are partitioned by the arXiv id's month and the
first digit of its number (`2601.0` holds 2601.00001–2601.09999: at most 10,000 ids of
all of arXiv, ~4,500 of cs.*), old-style ids by year (`old-98`); the run ledger by the
month its runs started (`202612`). So a partition's size does not grow with the corpus,
new papers touch the newest partitions only, and a revision touches its paper's.

Inside a partition rows are kept in key order (`Table.key`), one row per key: of rows with
the same key, the last one wins. A table without a key (the run ledger) is appended to:
its rows stay in the order written.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.tables import Table

# What a partition key may look like: it names files, and the manifest checks it.
KEY_PATTERN = r"[0-9a-z][0-9a-z.\-]{0,11}"


def keys_of(spec: Table, table: pa.Table) -> pa.Array[Any]:
    """The partition each row belongs to."""
    column = table[spec.partition_by]
    if pa.types.is_timestamp(column.type) or pa.types.is_date(column.type):
        key = pc.strftime(column, format="%Y%m")
    else:
        ids = column
        old = pc.struct_field(pc.extract_regex(ids, r"/(?P<yy>\d\d)"), 0)
        key = pc.if_else(pc.match_substring_regex(ids, r"^\d{4}\.\d"),
                         pc.utf8_slice_codeunits(ids, 0, 6),
                         pc.binary_join_element_wise("old-", old, ""))
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    key = pc.fill_null(key, "other")  # type: ignore[assignment, type-var]
    safe = pc.match_substring_regex(key, f"^{KEY_PATTERN}$")
    # stubs: if_else with a Python value is untyped
    return pc.if_else(safe, key, "other").combine_chunks()  # type: ignore[no-any-return]


def split(spec: Table, table: pa.Table) -> dict[str, pa.Table]:
    """The rows of each partition, in key order, one per key."""
    if table.num_rows == 0:
        return {}
    keys = keys_of(spec, table)
    groups = pd.Series(np.arange(table.num_rows)).groupby(
        keys.to_numpy(zero_copy_only=False), sort=True)
    return {str(key): newest(spec, table.take(pa.array(rows.to_numpy())))
            for key, rows in groups}


def newest(spec: Table, table: pa.Table) -> pa.Table:
    """The rows in key order, the last of each key only."""
    if table.num_rows == 0 or not spec.key:
        return table
    table = table.take(pc.sort_indices(table, [(k, "ascending") for k in spec.key]))
    ids = _row_keys(spec.key, table).to_numpy(zero_copy_only=False)
    last = np.append(ids[1:] != ids[:-1], True)  # sorting is stable: the last is newest
    return table if last.all() else table.filter(pa.array(last))


def changed(spec: Table, old: pa.Table, new: pa.Table) -> pa.Table | None:
    """The rows of `new` that `old` lacks or holds otherwise; None when `old` holds a key
    `new` lacks (a row removed: a delta cannot say that). Both as `newest` gives them;
    without a key, `new` must start with `old`."""
    if not spec.key:
        return new.slice(old.num_rows) if new.slice(0, old.num_rows).equals(old) else None
    position = pd.Index(_row_keys(spec.key, old).to_numpy(zero_copy_only=False)).get_indexer(
        _row_keys(spec.key, new).to_numpy(zero_copy_only=False))
    found = position >= 0
    if int(found.sum()) != old.num_rows:
        return None
    before = old.take(pa.array(position[found]))
    after = new.filter(pa.array(found))
    same = np.ones(after.num_rows, dtype=bool)
    for column in new.column_names:
        same &= _same(before[column], after[column])
    differs = np.ones(new.num_rows, dtype=bool)
    differs[found] = ~same
    return new.filter(pa.array(differs))


def _row_keys(columns: tuple[str, ...], table: pa.Table) -> pa.ChunkedArray[Any] | pa.Array[Any]:
    if len(columns) == 1:
        return table[columns[0]]
    # stubs: binary_join_element_wise takes any string columns
    return pc.binary_join_element_wise(  # type: ignore[call-overload, no-any-return]
        *(pc.cast(table[c], pa.string()) for c in columns), "\x1f",
        null_handling="replace", null_replacement="\x00")


def _same(a: pa.ChunkedArray[Any], b: pa.ChunkedArray[Any]) -> np.ndarray:
    """Row by row, whether two columns hold the same value (two nulls are the same)."""
    if pa.types.is_list(a.type):
        # stubs: the result type of an array's function includes scalars
        a, b = (pc.binary_join(pc.cast(x, pa.list_(pa.string())), "\x1f") for x in (a, b))  # type: ignore[assignment]
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    equal: pa.ChunkedArray[Any] | pa.Array[Any] = pc.fill_null(  # type: ignore[assignment, type-var]
        pc.equal(a, b), False)
    return np.asarray(pc.or_(both_null, equal).to_numpy(zero_copy_only=False), dtype=bool)
