"""Sources fetch and normalise; they never render and never write the store themselves.

SOURCES is the registry, in run order: ingest, rebuild, status, the site's numbers and
`ingest --source` all go through it. A new source is a module with an object that follows
`Source` (pipeline/sources/_source.py) and one line here.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from pipeline.sources import announce, arxiv, hf, oai, versions
from pipeline.sources._source import Fact, Picks, Signal, Source
from pipeline.tables import TABLES, Catalog, Table, install_catalog

__all__ = ["SOURCES", "Picks", "Signal", "Source", "catalog", "facts", "library_view",
           "links", "picks", "signal", "signals", "snapshot_schemas", "source_columns",
           "store_tables"]

SOURCES: dict[str, Source] = {source.name: source for source in (
    arxiv.SOURCE,
    oai.SOURCE,
    announce.SOURCE,
    versions.SOURCE,
    hf.SOURCE,
)}


def snapshot_schemas() -> dict[str, pa.Schema]:
    """What each source's snapshots hold (the store checks every snapshot file against it),
    read from the registry when asked, so a source registered later counts too."""
    return {name: source.schema for name, source in SOURCES.items()}


def store_tables() -> dict[str, Table]:
    """Every table of the store: the core's, then each source's own (read from the registry
    when asked, like `snapshot_schemas`)."""
    return {**TABLES, **{t.name: t for source in SOURCES.values() for t in source.tables}}


def catalog() -> Catalog:
    """What the store holds, from the registry as it is now: the store is handed this and
    imports no source."""
    return Catalog(store_tables(), snapshot_schemas(),
                   tuple(t for source in SOURCES.values() for t in source.tables))


install_catalog(catalog)


def library_view(papers: pa.Table, tables: Mapping[str, pa.Table]) -> pa.Table:
    """Papers with the columns of every source's own tables (null where a source holds
    nothing of a paper): what topics, the site and the numbers read as a paper."""
    return catalog().join(papers, tables)


def source_columns() -> list[str]:
    """The columns every source's own tables join to papers (`library_view`), in registry
    order."""
    return [f.name for source in SOURCES.values() for t in source.tables for f in t.schema
            if f.name != "arxiv_id"]


def facts() -> list[Fact]:
    """What every source's own tables add to a paper's page, in registry order."""
    return [fact for source in SOURCES.values() for fact in source.facts]


def signals() -> list[Signal]:
    """Every source's numbers the core weighs (`Source.signals`), in registry order."""
    return [signal for source in SOURCES.values() for signal in source.signals]


def signal(name: str) -> Signal | None:
    """The signal of that name (a topic's `min_<name>` reads it), if a source has one."""
    return next((s for s in signals() if s.name == name), None)


def picks() -> dict[str, Picks]:
    """The sources that pick papers a day at a time, by name."""
    return {name: source.picks for name, source in SOURCES.items() if source.picks}


def links(kind: str) -> list[str]:
    """The columns of the sources' links of a `kind` ("code", "page"), in registry order."""
    return [link.column for source in SOURCES.values() for link in source.links
            if link.kind == kind]
