"""Configs pointed at the local replays (pipeline/replay/), and the recorded responses."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from pipeline import ingest
from pipeline.config import Config
from pipeline.report import RunReport
from pipeline.store import Store

# Recorded real responses, copied verbatim into the repository (tests/data/README.md): a
# fork's own CI has nothing outside its checkout.
FIXTURES = Path(__file__).resolve().parent.parent / "data"


def fast_arxiv(cfg: Config, api_url: str, **changes: object) -> Config:
    """The config pointed at a local server, without arXiv's 3 s politeness delay."""
    fast: dict[str, object] = {"delay_seconds": 0.0, "backoff_seconds": 0.01,
                               "max_backoff_seconds": 0.05, "timeout_seconds": 2.0}
    base = api_url.removesuffix("/api/query")  # the replay serves all three
    arxiv = dataclasses.replace(cfg.sources.arxiv, api_url=api_url, oai_url=f"{base}/oai",
                                feed_url=f"{base}/rss/", **{**fast, **changes})
    return dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources, arxiv=arxiv))


def ingest_arxiv_paths(cfg: Config, store: Store, now: dt.datetime) -> RunReport:
    """What a scheduled run reads of arXiv: the export API (new papers), then OAI-PMH
    (revisions and metadata changes); the API's report."""
    report = ingest.ingest_arxiv(cfg, store, now=now)
    ingest.ingest(cfg, store, "oai", now=now)
    return report


def fast_hf(cfg: Config, endpoint: str, **changes: object) -> Config:
    """The config pointed at a local HF replay, without delays and with quick backoff."""
    fast = {"delay_seconds": 0.0, "backoff_seconds": 0.01, "max_backoff_seconds": 0.05,
            "timeout_seconds": 2.0}
    hf = dataclasses.replace(cfg.sources.hf, endpoint=endpoint, **{**fast, **changes})
    return dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources, hf=hf))
