"""Explicit pyarrow schemas of every table in the store (see docs/DATA.md).

Bump SCHEMA_VERSION whenever a schema changes; files with another version are
refused with a clear error instead of being misread (those of LEGACY_VERSION, written
before the store was partitioned, are read once, to migrate them).
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

SCHEMA_VERSION = "2"
LEGACY_VERSION = "1"  # one file per table, papers with the HF counts in it
# Snapshots are immutable, and version 2 changed none of their schemas.
SNAPSHOT_VERSIONS = (LEGACY_VERSION, SCHEMA_VERSION)

_TS = pa.timestamp("us", tz="UTC")
_STRS = pa.list_(pa.string())

# An arXiv entry as arXiv describes it: what a snapshot keeps and a paper row starts with.
_ENTRY = [
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

HF_SNAPSHOT = pa.schema([
    ("arxiv_id", pa.string()),
    ("hf_day", pa.date32()),  # the daily list the pick appeared in
    ("upvotes", pa.int32()),
    ("github_repo", pa.string()),
    ("github_stars", pa.int32()),
    ("project_page", pa.string()),
    ("ai_keywords", _STRS),
    ("ai_summary", pa.string()),
    ("submitted_on_daily_at", _TS),
    ("organization", pa.string()),
    ("num_comments", pa.int32()),
    ("title", pa.string()),
    ("fetched_at", _TS),
])

# Columns owned by the arXiv merge; the rest of PAPERS is derived by enrich or HF.
PAPER_METADATA = ["version", "title", "abstract", "authors", "categories", "primary_category",
                  "comment", "journal_ref", "doi", "published", "updated"]

PAPERS = pa.schema([
    *_ENTRY,
    ("first_seen", _TS),  # when we first stored the paper (the "site ingestion" clock)
    ("version_seen_at", _TS),  # when we first stored the current version
    ("cross_list", pa.bool_()),  # primary category outside the configured ones
    # derived (pipeline.classify / pipeline.topics)
    ("ai_related", pa.bool_()),
    ("ai_reason", pa.string()),
    ("topics", _STRS),
    ("topic_reasons", _STRS),  # parallel to topics
    # Hugging Face community signals (pipeline.sources.hf)
    ("hf_day", pa.date32()),  # first day the community picked it
    ("hf_upvotes", pa.int32()),
    ("hf_repo", pa.string()),
    ("hf_stars", pa.int32()),
    ("hf_project_page", pa.string()),
    ("hf_keywords", _STRS),
    ("hf_summary", pa.string()),
    ("hf_organization", pa.string()),
    ("hf_comments", pa.int32()),
])

VERSIONS = pa.schema([
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

DIGESTS = pa.schema([
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
# to the next, and why it matters. Retried like digests.
NOTES = pa.schema([
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

# Each paper's most similar papers in the library (pipeline.similar), derived from the
# title and abstract whose hash it keeps: a paper is looked at again when that changes.
SIMILAR = pa.schema([
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

RUNS = pa.schema([
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
# The runs whose watermark_after counts: a partial run's never passes what it read whole.
MOVES_WATERMARK = ("ok", "partial")

# The tables as the code reads and writes them.
TABLES: dict[str, pa.Schema] = {
    "papers": PAPERS,
    "versions": VERSIONS,
    "digests": DIGESTS,
    "notes": NOTES,
    "similar": SIMILAR,
    "embeddings": EMBEDDINGS,
    "runs": RUNS,
}

# Hugging Face's counts change every hour; they are stored in a small table of their own
# (one row per paper that has any) so that an hourly run never rewrites papers.
SIGNAL_COLUMNS = ["hf_upvotes", "hf_stars", "hf_comments"]
SIGNALS = pa.schema([PAPERS.field("arxiv_id"), *(PAPERS.field(c) for c in SIGNAL_COLUMNS)])

# The tables as their files hold them: papers without the signals, and the signals.
STORED: dict[str, pa.Schema] = {
    "papers": pa.schema([f for f in PAPERS if f.name not in SIGNAL_COLUMNS]),
    "signals": SIGNALS,
    "versions": VERSIONS,
    "digests": DIGESTS,
    "notes": NOTES,
    "similar": SIMILAR,
    "embeddings": EMBEDDINGS,
    "runs": RUNS,
}

# What identifies a row: a later row with the same key replaces an earlier one, and rows
# are kept in key order. The run ledger has none: it is appended to, in the order runs end.
KEYS: dict[str, list[str]] = {
    "papers": ["arxiv_id"],
    "signals": ["arxiv_id"],
    "versions": ["arxiv_id", "version"],
    "digests": ["arxiv_id", "version", "language", "model", "prompt_hash"],
    "notes": ["arxiv_id", "from_version", "version", "language", "model", "prompt_hash"],
    "similar": ["arxiv_id"],
    "embeddings": ["arxiv_id"],
    "runs": [],
}


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
