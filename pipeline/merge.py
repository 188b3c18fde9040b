"""Folding a batch of fetched arXiv entries into the papers and versions tables.

Pure functions of (tables, batch): no clock, no I/O, so `rebuild` replaying the
snapshots yields exactly the tables the incremental runs produced. Vectorised:
the big tables are only indexed and sliced in Arrow; Python touches the batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.tables import ARXIV_SNAPSHOT, PAPER_METADATA, PAPERS, VERSIONS, to_table

_LISTS = ("authors", "categories")


@dataclass(frozen=True)
class ArxivMerge:
    papers: pa.Table
    new_versions: pa.Table  # rows to append to versions (the table is append-only)
    changed: pa.Table  # the batch rows that changed something: what a snapshot keeps
    fetched: int
    new: int
    revised: int
    unchanged: int
    cross_listed: int

    @property
    def counts(self) -> dict[str, int]:
        return {"fetched": self.fetched, "new": self.new, "revised": self.revised,
                "unchanged": self.unchanged, "cross_listed": self.cross_listed}


def _keys(ids: pa.ChunkedArray[Any] | pa.Array[Any],
          versions: pa.ChunkedArray[Any] | pa.Array[Any]) -> pa.ChunkedArray[Any]:
    """'2606.19617v2': one string per (paper, version), hashed by Arrow's is_in."""
    # stubs: binary_join_element_wise takes any string columns
    return pc.binary_join_element_wise(ids, pc.cast(versions, pa.string()), "v")  # type: ignore[call-overload, no-any-return]


def _comparable(table: pa.Table) -> pd.DataFrame:
    """Metadata columns as plain strings/scalars, so rows compare with ==."""
    cols = {}
    for name in PAPER_METADATA:
        col = table[name]
        if name in _LISTS:
            # stubs: the result type of an array's function includes scalars
            col = pc.binary_join(col, "\x1f")  # type: ignore[assignment]
        cols[name] = col.to_pandas().fillna("\x00").astype(str).to_numpy()
    return pd.DataFrame(cols)


def merge_arxiv(papers: pa.Table, version_keys: pa.Table, batch: pa.Table,
                categories: Iterable[str]) -> ArxivMerge:
    """Merge one run's entries into papers; say which versions are new.

    `version_keys` needs only the arxiv_id and version columns of the versions table, so
    an ingest never loads every version's abstract. `categories` are the configured ones
    (for cross-list detection).
    """
    batch = to_table(batch, ARXIV_SNAPSHOT)
    fetched = batch.num_rows
    if fetched == 0:
        return ArxivMerge(papers, VERSIONS.empty_table(), batch, 0, 0, 0, 0, 0)
    batch = _one_row_per_version(batch)
    new_version, new_versions = _new_versions(batch, version_keys)

    # -- papers: the newest version of each id in the batch ------------------------------------
    ids = batch["arxiv_id"].to_numpy(zero_copy_only=False)
    latest_mask = np.append(ids[1:] != ids[:-1], True)  # sorted: last row of each id
    latest = batch.filter(pa.array(latest_mask))
    found = _Against(papers, latest)
    wanted = set(categories)
    primary = latest["primary_category"].to_numpy(zero_copy_only=False)
    cross = np.array([p not in wanted for p in primary], dtype=bool)
    papers = _replace_rows(papers, found.updated_rows(latest, cross), found)

    changed_mask = new_version.copy()
    changed_mask[np.flatnonzero(latest_mask)[found.is_refreshed]] = True
    return ArxivMerge(
        papers=papers, new_versions=new_versions, changed=batch.filter(pa.array(changed_mask)),
        fetched=fetched, new=int(found.is_new.sum()), revised=int(found.is_revised.sum()),
        unchanged=int(found.same.sum() + found.is_stale.sum()), cross_listed=int(cross.sum()),
    )


def _one_row_per_version(batch: pa.Table) -> pa.Table:
    """One row per (id, version), sorted: the first fetch stamps when we saw it, the last
    one wins for metadata (arXiv can fix a journal_ref without a new version)."""
    order = pc.sort_indices(batch, [("arxiv_id", "ascending"), ("version", "ascending"),
                                    ("fetched_at", "ascending")])
    batch = batch.take(order)
    keys = pd.Index(_keys(batch["arxiv_id"], batch["version"]).to_numpy(zero_copy_only=False))
    last = ~keys.duplicated(keep="last")
    seen_first = batch["fetched_at"].to_pandas().groupby(keys).transform("min").to_numpy()
    batch = batch.filter(pa.array(last))
    return batch.set_column(batch.schema.get_field_index("fetched_at"), "fetched_at",
                            pa.array(seen_first[last], ARXIV_SNAPSHOT.field("fetched_at").type))


def _new_versions(batch: pa.Table, version_keys: pa.Table) -> tuple[np.ndarray, pa.Table]:
    """Which rows are (id, version) pairs never seen, and their versions rows."""
    stored_keys = _keys(version_keys["arxiv_id"], version_keys["version"])
    known = pc.is_in(_keys(batch["arxiv_id"], batch["version"]),
                     value_set=pa.concat_arrays(stored_keys.chunks) if stored_keys.num_chunks
                     else pa.array([], pa.string()))
    new_version = ~np.asarray(known.to_numpy(zero_copy_only=False), dtype=bool)
    added = batch.filter(pa.array(new_version))
    version_rows = pa.Table.from_pydict({
        "arxiv_id": added["arxiv_id"], "version": added["version"], "updated": added["updated"],
        "first_seen": added["fetched_at"], "title": added["title"],
        "abstract": added["abstract"],
    })
    # Append-only, in the order versions were first seen: deterministic (rebuild replays the
    # same merges in the same order) and cheap, where re-sorting 200k rows costs ~1 s.
    return new_version, to_table(version_rows, VERSIONS)


class _Against:
    """The batch's newest rows held against the stored papers: which are new, revised,
    stale (an older version than stored), the same version, or refreshed (the same
    version with other metadata)."""

    def __init__(self, papers: pa.Table, latest: pa.Table) -> None:
        stored_ids = pd.Index(papers["arxiv_id"].to_numpy(zero_copy_only=False))
        self.pos = stored_ids.get_indexer(latest["arxiv_id"].to_numpy(zero_copy_only=False))
        self.is_new = self.pos < 0
        self.stored = (papers.take(np.where(self.is_new, 0, self.pos))
                       if papers.num_rows else None)
        stored_version = (self.stored["version"].to_numpy() if self.stored is not None
                          else np.zeros(latest.num_rows, dtype=np.int32))
        batch_version = latest["version"].to_numpy()
        self.is_revised = ~self.is_new & (batch_version > stored_version)
        self.is_stale = ~self.is_new & (batch_version < stored_version)
        self.same = ~self.is_new & (batch_version == stored_version)
        if self.stored is not None and self.same.any():
            differs = (_comparable(latest) != _comparable(self.stored)).any(axis=1).to_numpy()
        else:
            differs = np.zeros(latest.num_rows, dtype=bool)
        self.is_refreshed = self.same & differs
        self.touched = self.is_new | self.is_revised | self.is_refreshed

    def updated_rows(self, latest: pa.Table, cross: np.ndarray) -> pa.Table:
        """The papers rows of the touched ids, as they are to be stored."""
        touched = self.touched
        rows = latest.filter(pa.array(touched))
        t_new, t_rev = self.is_new[touched], self.is_revised[touched]
        fetched_at = rows["fetched_at"].to_numpy()
        ts = PAPERS.field("first_seen").type
        if self.stored is not None:
            kept = self.stored.filter(pa.array(touched))
            first_seen = np.where(t_new, fetched_at, kept["first_seen"].to_numpy())
            seen_at = np.where(t_new | t_rev, fetched_at, kept["version_seen_at"].to_numpy())
        else:
            kept, first_seen, seen_at = None, fetched_at, fetched_at
        update = {name: rows[name] for name in ["arxiv_id", *PAPER_METADATA]}
        update["first_seen"] = pa.array(first_seen, ts)
        update["version_seen_at"] = pa.array(seen_at, ts)
        update["cross_list"] = pa.array(cross[touched])
        updated = to_table(pa.Table.from_pydict(update), PAPERS)
        if kept is not None:
            # Derived columns (AI flag, topics, HF signals) stay until enrich recomputes them.
            for name in (f.name for f in PAPERS if f.name not in update):
                col = pc.if_else(pa.array(t_new),
                                 pa.nulls(len(t_new), PAPERS.field(name).type), kept[name])
                updated = updated.set_column(PAPERS.get_field_index(name), name, col)
        return updated


def _replace_rows(papers: pa.Table, updated: pa.Table, found: _Against) -> pa.Table:
    """Drop the replaced rows, add the new ones and sort by id in a single `take`: one copy
    of the big table instead of three (filter, concat, sort)."""
    t_new, t_pos = found.is_new[found.touched], found.pos[found.touched]
    combined = pa.concat_tables([papers, updated])
    keep = np.ones(combined.num_rows, dtype=bool)
    keep[t_pos[~t_new]] = False
    rows_kept = np.flatnonzero(keep)
    order = pc.sort_indices(combined["arxiv_id"].take(rows_kept)).to_numpy()
    return combined.take(pa.array(rows_kept[order]))
