"""The library: every paper by each clock, over the last 24 h, 7 days and all time."""

from __future__ import annotations

import datetime as dt

from pipeline.site.model.data import SiteData
from pipeline.site.model.views import CLOCKS
from pipeline.site.output import Output

RANGES = {"24h": dt.timedelta(hours=24), "7d": dt.timedelta(days=7), "all": None}


def render(site: SiteData, out: Output) -> list[str]:
    now = site.lib.now
    written = []
    for clock in CLOCKS:
        ordered = site.newest[clock]
        for key, span in RANGES.items():
            # Up to now, not past it: a paper dated 2099 is in no "last 24 h".
            chosen = ordered if span is None else [
                p for p in ordered if now - span < getattr(p, clock) <= now]
            written += out.listing(f"library/{clock}/{key}/", site.strings["library"], chosen,
                                   clock=clock, range_key=key, nav="library")
    return written
