"""Derived columns: the AI flag and topics, recomputed from papertrail.toml.

`derive` is a pure function of (config, papers, sources' tables), applied after every merge and at
the end of `rebuild`, so the stored derived columns always follow the stored
metadata; `enrich` reapplies it to the store after a config change. Only
ai_related, ai_reason, topics and topic_reasons are touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.config import Config
from pipeline.derive import classify, topics
from pipeline.sources import library_view
from pipeline.store import Store
from pipeline.tables import PAPERS

DERIVED = ("ai_related", "ai_reason", "topics", "topic_reasons")


def derive(cfg: Config, papers: pa.Table, sources: Mapping[str, pa.Table]) -> pa.Table:
    """Papers with their derived columns made from the config, and from what the sources'
    own tables say of them (a topic's `min_upvotes`)."""
    view = library_view(papers, sources)
    flag = classify.classify(view, cfg.classify)
    matched = topics.match(view, cfg.topics)
    for name, column in zip(DERIVED, (flag.ai_related, flag.ai_reason, matched.topics,
                                      matched.reasons), strict=True):
        papers = papers.set_column(PAPERS.get_field_index(name), PAPERS.field(name),
                                   column.cast(PAPERS.field(name).type))
    return papers


class Enriched(TypedDict):
    papers: int
    ai_related: int
    topics: dict[str, int]  # papers per topic slug
    written: bool  # False: every derived column was as stored


def enrich(cfg: Config, store: Store) -> Enriched:
    """Recompute the derived columns of every paper; writes only when something changed."""
    with store.lock():
        papers = store.read("papers")
        derived = derive(cfg, papers, store.source_tables())
        changed = not derived.select(DERIVED).equals(papers.select(DERIVED))
        if changed:
            store.write("papers", derived)
    per_topic = {t.slug: 0 for t in cfg.topics}
    for slug in cast(list[str], pc.list_flatten(derived["topics"]).to_pylist()):
        per_topic[slug] += 1
    return {"papers": derived.num_rows,
            "ai_related": int(pc.sum(derived["ai_related"]).as_py() or 0),
            "topics": per_topic, "written": changed}
