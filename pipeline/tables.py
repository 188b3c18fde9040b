"""Every core table of the store, declared once as a `Table` (see docs/DATA.md): its
schema, key, partitions, how `data save` folds another copy's rows in, what repairs a
damaged file. A source declares its own tables the same way (`Source.tables`).

A table evolves without a rewrite when a nullable column is added (older files read it
as null); any other change is a named migration (`pipeline/store/migrations.py`). The files'
SCHEMA_VERSION is their layout, not their columns: those of LEGACY_VERSION, written
before the store was partitioned, are read once, to migrate them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

SCHEMA_VERSION = "2"
LEGACY_VERSION = "1"  # one file per table, papers with the HF counts in it
# Snapshots are immutable, and version 2 changed none of their schemas.
SNAPSHOT_VERSIONS = (LEGACY_VERSION, SCHEMA_VERSION)

_TS = pa.timestamp("us", tz="UTC")
_STRS = pa.list_(pa.string())

# An arXiv entry as arXiv describes it: what a snapshot keeps and a paper row starts with.
_ENTRY: list[tuple[str, pa.DataType]] = [
    ("arxiv_id", pa.string()),
    ("version", pa.int32()),
    ("title", pa.string()),
    ("abstract", pa.string()),
    ("authors", _STRS),
    ("categories", _STRS),
    ("primary_category", pa.string()),
    ("comment", pa.string()),
    ("journal_ref", pa.string()),
    ("doi", pa.string()),
    ("published", _TS),  # arXiv: v1 submitted (the "first publication" clock)
    ("updated", _TS),  # arXiv: current version submitted (the "version update" clock)
]

# What a source run fetched, normalised: one row per (paper, version) entry.
ARXIV_SNAPSHOT = pa.schema([*_ENTRY, ("fetched_at", _TS)])

# Columns owned by the arXiv merge; the rest of PAPERS is derived by enrich.
PAPER_METADATA = ["version", "title", "abstract", "authors", "categories", "primary_category",
                  "comment", "journal_ref", "doi", "published", "updated"]

PAPERS = pa.schema([
    *_ENTRY,
    ("first_seen", _TS),  # when we first stored the paper (the "site ingestion" clock)
    ("version_seen_at", _TS),  # when we first stored the current version
    ("cross_list", pa.bool_()),  # primary category outside the configured ones
    # derived (pipeline.derive.classify / pipeline.derive.topics)
    ("ai_related", pa.bool_()),
    ("ai_reason", pa.string()),
    ("topics", _STRS),
    ("topic_reasons", _STRS),  # parallel to topics
])

VERSIONS = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("arxiv_id", pa.string()),
    ("version", pa.int32()),
    ("updated", _TS),  # arXiv's time of this version
    ("first_seen", _TS),  # when we first saw this version
    ("title", pa.string()),
    ("abstract", pa.string()),
])

# What a row of the model's work keeps of its attempts: the last error, how many, all they
# cost, when it was written, and when a failed one may be tried again.
_ATTEMPTS = [
    ("error", pa.string()),
    ("attempts", pa.int32()),
    ("tokens_in", pa.int64()),
    ("tokens_out", pa.int64()),
    ("created", _TS),
    ("next_attempt_after", _TS),
]

DIGESTS = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("arxiv_id", pa.string()),
    ("version", pa.int32()),
    ("language", pa.string()),
    ("model", pa.string()),
    ("prompt_hash", pa.string()),
    ("status", pa.string()),  # ok | failed
    ("superseded", pa.bool_()),
    ("tldr", pa.string()),
    ("motivation", pa.string()),
    ("method", pa.string()),
    ("results", pa.string()),
    ("conclusion", pa.string()),
    *_ATTEMPTS,
])

# A change note (修订说明) by the model: what changed from one stored version of a paper
# to the next, and why it matters. Retried like digests. Only a model's notes are kept
# (`model` names it; the demo and `try` ask their replay for none): the site labels these
# as machine-written and makes the rest by rule at build time, labelled as such.
NOTES = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("arxiv_id", pa.string()),
    ("from_version", pa.int32()),
    ("version", pa.int32()),
    ("language", pa.string()),
    ("model", pa.string()),
    ("prompt_hash", pa.string()),
    ("status", pa.string()),  # ok | failed
    ("note", pa.string()),
    *_ATTEMPTS,
])

# Each paper's most similar papers in the library (pipeline.derive.similar), derived from the
# title and abstract whose hash it keeps: a paper is looked at again when that changes.
SIMILAR = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("arxiv_id", pa.string()),
    ("text_hash", pa.string()),
    ("method", pa.string()),  # how the list was made: another method remakes every list
    ("library", pa.int32()),  # papers in the library when it was made (weights drift)
    ("neighbours", _STRS),  # arXiv ids, the most similar first
    ("scores", pa.list_(pa.float32())),  # their cosine, parallel to neighbours
])

# A paper's embedding from `[similar] embeddings_model`, for the title and abstract whose
# hash it keeps: made again only when that text or the model changes.
EMBEDDINGS = pa.schema([
    ("arxiv_id", pa.string()),
    ("text_hash", pa.string()),
    ("model", pa.string()),
    ("vector", pa.list_(pa.float32())),
])

# What `papertrail notify` sent: one row per (channel, item), so each item goes to each
# channel once. A failed row is tried again on the next run; skipped: over max_items.
NOTIFIED = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("channel", pa.string()),  # the [[notify]] table's name
    # paper/<id>, or watch/<id>/<event> (the me feed's entry keys); week/<year>-W<nn>: a
    # weekly channel's week sent
    ("item", pa.string()),
    ("arxiv_id", pa.string()),
    ("status", pa.string()),  # sent | failed | skipped
    ("attempts", pa.int32()),
    ("error", pa.string()),  # the last failure, secrets removed
    ("first_tried", _TS),
    ("sent", _TS),  # the start of the run that sent it
])

RUNS = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("run_id", pa.string()),
    ("source", pa.string()),  # a name of pipeline.sources.SOURCES, or digest
    ("started", _TS),
    ("finished", _TS),
    ("status", pa.string()),  # ok | partial | failed | skipped
    ("fetched", pa.int64()),
    ("new", pa.int64()),
    ("revised", pa.int64()),
    ("unchanged", pa.int64()),
    ("cross_listed", pa.int64()),
    ("requests", pa.int64()),
    ("retries", pa.int64()),
    ("error", pa.string()),
    ("watermark_before", _TS),
    ("watermark_after", _TS),
    ("tokens_in", pa.int64()),
    ("tokens_out", pa.int64()),
    ("details", pa.string()),  # JSON: per-category counts, digest counts, …
])
# The completeness ledger: per announcement day (arXiv's listing date, US-Eastern) and
# category, what the announcement feed listed (versioned ids, by how it was announced
# there) and what the store held of it when last checked.
ANNOUNCEMENTS = pa.schema([  # type: ignore[arg-type]  # stubs join mixed DataTypes to object
    ("day", pa.date32()),
    ("category", pa.string()),
    ("new", _STRS),  # papers whose primary category it is, v1
    ("cross", _STRS),  # new papers cross-listed to it
    ("replace", _STRS),  # new versions (replace and replace-cross)
    ("capped", pa.bool_()),  # the feed held arXiv's 2,000 items: it may have listed more
    ("missing", _STRS),  # of all listed, the versions the store lacked
    ("checked", _TS),  # when `missing` was last worked out
])

# The runs whose watermark_after counts: a partial run's never passes what it read whole.
MOVES_WATERMARK = ("ok", "partial")

RESTORE = "restore the store from the data branch (`papertrail data restore --force`)"
REBUILD = f"run `papertrail rebuild`, or {RESTORE}"


@dataclass(frozen=True)
class Table:
    """What the store knows of one table."""

    name: str
    schema: pa.Schema
    # What identifies a row: a later row with the same key replaces an earlier one, and rows
    # are kept in key order. () for a ledger, appended to in the order written.
    key: tuple[str, ...]
    # Which column splits rows into partitions: an arXiv id by its month (`2601.0`), a
    # timestamp by its month (`202612`); see `store/partition.py`.
    partition_by: str = "arxiv_id"
    # `data save` with another copy of the store: "rebuild" makes the table again from the
    # union of both copies' snapshots; "union" keeps both copies' rows, ours on a tie of
    # `identity` (the key, unless the table has none).
    on_save: Literal["rebuild", "union"] = "union"
    identity: tuple[str, ...] = ()
    # What repairs a damaged file, after "It was not replaced; ".
    remedy: str = RESTORE
    # Low-cardinality columns, dictionary-encoded in files (titles and abstracts would cost
    # time and save nothing).
    dictionary: frozenset[str] = frozenset()

    @property
    def row_identity(self) -> tuple[str, ...]:
        return self.identity or self.key


_MODEL_WORK = frozenset({"version", "status", "language", "model", "prompt_hash"})

# The core's tables, as the code reads and writes them; `pipeline.sources.catalog()` adds
# each source's own.
TABLES: dict[str, Table] = {t.name: t for t in (
    Table("papers", PAPERS, ("arxiv_id",), on_save="rebuild", remedy=REBUILD,
          dictionary=frozenset({"version", "categories", "primary_category", "topics"})),
    Table("versions", VERSIONS, ("arxiv_id", "version"), on_save="rebuild", remedy=REBUILD,
          dictionary=frozenset({"version"})),
    Table("digests", DIGESTS, ("arxiv_id", "version", "language", "model", "prompt_hash"),
          dictionary=_MODEL_WORK),
    Table("notes", NOTES, ("arxiv_id", "from_version", "version", "language", "model",
                           "prompt_hash"), dictionary=_MODEL_WORK),
    Table("similar", SIMILAR, ("arxiv_id",),
          remedy=f"run `papertrail similar --full`, or {RESTORE}"),
    Table("embeddings", EMBEDDINGS, ("arxiv_id",), dictionary=frozenset({"model"})),
    Table("notified", NOTIFIED, ("channel", "item"),
          dictionary=frozenset({"channel", "status"})),
    Table("runs", RUNS, (), partition_by="started", identity=("run_id",),
          remedy=f"{RESTORE}, or run `papertrail rebuild --force`, which starts a new, empty "
                 "run ledger (sources then backfill again)",
          dictionary=frozenset({"source", "status"})),
    Table("announcements", ANNOUNCEMENTS, ("day", "category"), partition_by="day",
          dictionary=frozenset({"category"})),
)}


@dataclass(frozen=True)
class Catalog:
    """What a store holds: every table by name (the core's, then each source's own), each
    source's snapshot columns, and the tables whose columns join a paper (`joined`: the
    sources'). The store is handed one and imports no source: `pipeline.sources.catalog`
    makes it from the registry."""

    tables: Mapping[str, Table]
    snapshots: Mapping[str, pa.Schema] = field(default_factory=dict)
    joined: tuple[Table, ...] = ()

    def spec(self, name: str) -> Table:
        """A table this store holds, or one a migration is about to retire."""
        return self.tables.get(name) or RETIRED[name]

    def join(self, papers: pa.Table, held: Mapping[str, pa.Table]) -> pa.Table:
        """Papers with the columns of every joined table (null where it holds nothing of a
        paper): what topics, the site and the numbers read as a paper."""
        ids = papers["arxiv_id"]
        for spec in self.joined:
            own = held.get(spec.name, spec.schema.empty_table())
            at = pc.index_in(ids, value_set=own["arxiv_id"].combine_chunks())
            for fld in spec.schema:
                if fld.name != "arxiv_id":
                    papers = papers.append_column(fld, own[fld.name].take(at))
        return papers


# The catalog `Store(root)` reads when it is handed none: the one the sources registry
# installs when it is imported (every command imports it), read when asked, so a source
# registered later counts too.
_installed: list[Callable[[], Catalog]] = []


def install_catalog(provider: Callable[[], Catalog]) -> None:
    _installed[:] = [provider]


def installed_catalog() -> Catalog:
    if not _installed:
        raise RuntimeError("no catalog of tables is installed: import pipeline.sources, or "
                           "hand the store a Catalog")
    return _installed[0]()


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


# -- what earlier releases wrote, read only to migrate it (pipeline/store/migrations.py) ---------

# Papers with Hugging Face's columns, as every release before `hf` was a table of its own
# stored them (format 3 kept the three counts in a table of their own, `signals`).
HF_COLUMNS = ["hf_day", "hf_upvotes", "hf_repo", "hf_stars", "hf_project_page", "hf_keywords",
              "hf_summary", "hf_organization", "hf_comments"]
PAPERS_WITH_HF = pa.schema([
    *PAPERS,
    ("hf_day", pa.date32()),
    ("hf_upvotes", pa.int32()),
    ("hf_repo", pa.string()),
    ("hf_stars", pa.int32()),
    ("hf_project_page", pa.string()),
    ("hf_keywords", _STRS),
    ("hf_summary", pa.string()),
    ("hf_organization", pa.string()),
    ("hf_comments", pa.int32()),
])
SIGNALS = pa.schema([PAPERS_WITH_HF.field(c) for c in
                     ("arxiv_id", "hf_upvotes", "hf_stars", "hf_comments")])
# Tables a migration removes: a manifest may name them until it has run.
RETIRED: dict[str, Table] = {"signals": Table("signals", SIGNALS, ("arxiv_id",),
                                              on_save="rebuild", remedy=REBUILD)}
