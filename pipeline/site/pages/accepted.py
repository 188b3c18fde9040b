"""最近录用: the papers a venue took, the newest news of it first, with their feed (and no
daily brief feed: a few a day)."""

from __future__ import annotations

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    s = site.strings
    feed = next(f for f in site.feeds if f.slug == "accepted")
    return out.listing("accepted/", s["accepted_title"], site.accepted, order="venue",
                       intro=s["accepted_intro"], feeds=[feed], feed=feed, nav="accepted")
