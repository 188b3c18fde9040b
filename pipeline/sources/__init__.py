"""Sources fetch and normalise; they never render and never write the store themselves.

SOURCES is the registry, in run order: ingest, rebuild, status, the site's numbers and
`ingest --source` all go through it. A new source is a module with an object that follows
`Source` (pipeline/sources/_source.py) and one line here.
"""

from __future__ import annotations

import pyarrow as pa

from pipeline.sources import arxiv, hf
from pipeline.sources._source import Source

SOURCES: dict[str, Source] = {source.name: source for source in (
    arxiv.SOURCE,
    hf.SOURCE,
)}


def snapshot_schemas() -> dict[str, pa.Schema]:
    """What each source's snapshots hold (the store checks every snapshot file against it),
    read from the registry when asked, so a source registered later counts too."""
    return {name: source.schema for name, source in SOURCES.items()}
