"""Briefs: what came in the last 24 hours and on each day, by kind (new, AI, revised,
digested), and the archive of days."""

from __future__ import annotations

import datetime as dt

from pipeline.site._views import Paper
from pipeline.site.data import BRIEF_KINDS as KINDS
from pipeline.site.data import SiteData, by_day
from pipeline.site.output import Output

# What each kind's list is sorted by (data.by_day and _last_24h), as its page says.
ORDER = {"new": "first_seen", "ai": "first_seen", "revised": "revision", "digests": "digest"}


def render(site: SiteData, out: Output) -> list[str]:
    s = site.strings
    days = by_day(site)
    written = []
    for kind, papers in _last_24h(site).items():
        title = s["brief_24h"].format(kind=s[f"brief_{kind}"])
        written += out.listing(f"brief/24h/{kind}/", title, papers, order=ORDER[kind],
                               nav="briefs")
    for date, kinds in days.items():
        for kind in KINDS:
            title = s["brief_title"].format(date=date, kind=s[f"brief_{kind}"])
            written += out.listing(f"brief/{date}/{kind}/", title, kinds.get(kind, []),
                                   order=ORDER[kind], nav="briefs")
    archive = [(d, {k: len(days[d].get(k, [])) for k in KINDS})
               for d in sorted(days, reverse=True)]
    written.append(out.page("brief/", "briefs.html", title=s["briefs"], archive=archive,
                            kinds=KINDS, nav="briefs"))
    return written


def _last_24h(site: SiteData) -> dict[str, list[Paper]]:
    start, end = site.home.window_start, site.home.now

    def inside(t: dt.datetime | None) -> bool:
        return t is not None and start < t <= end

    new = [p for p in site.newest["first_seen"] if inside(p.first_seen)]
    return {"new": new, "ai": [p for p in new if p.ai_related],
            "revised": list({p.arxiv_id: p for p, _, w in site.revisions
                             if inside(w)}.values()),
            "digests": [p for p in site.digested if inside(p.digest_created)]}
