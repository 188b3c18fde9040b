"""`papertrail run`: what the scheduled workflow does, and all it does.

sources → store (ingest, which also classifies what it stores) → enrich (after a
config change) → similar papers → change notes → digest → site. Each step reports one
line; a failing source or model server is recorded and the next steps still run on what
is stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from pipeline import build as build_mod
from pipeline import ingest, runs
from pipeline.config import Config
from pipeline.derive import enrich as enrich_mod
from pipeline.derive import similar
from pipeline.digest import run_digest, run_notes
from pipeline.sources import SOURCES
from pipeline.store import Store

Echo = Callable[[str], None]


def update(cfg: Config, store: Store, echo: Echo, *, now: dt.datetime | None = None) -> None:
    """Ingest every source, re-derive, find similar papers, write change notes and digests:
    everything but the site."""
    now = now or runs.utcnow()
    for source in SOURCES:
        echo(ingest.ingest(cfg, store, source, now=now).line())
    result = enrich_mod.enrich(cfg, store)
    echo(f"enrich: {result['papers']} papers, {result['ai_related']} AI-related"
         + ("" if result["written"] else " · nothing changed"))
    echo(similar.similar(cfg, store).line())
    notes = run_notes(cfg, store, now=now)
    echo(notes.line())
    echo(run_digest(cfg, store, now=now, spent=notes.spent).line())


def run(cfg: Config, echo: Echo, *, publish: bool = False) -> None:
    if publish:
        build_mod.check_publish(cfg)  # before an hour of ingesting, not after
    update(cfg, Store(cfg.store_path), echo)
    echo(build_mod.build(cfg, publish=publish).line())
