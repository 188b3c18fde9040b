"""Briefs: what came in the last 24 hours and on each day, by kind (new, AI, revised,
digested), and the archive of days."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from pipeline.site._views import Paper
from pipeline.site.data import SiteData
from pipeline.site.output import Output

KINDS = ("new", "ai", "revised", "digests")


def render(site: SiteData, out: Output) -> list[str]:
    s = site.strings
    days = _days(site)
    written = []
    for kind, papers in _last_24h(site).items():
        title = s["brief_24h"].format(kind=s[f"brief_{kind}"])
        written += out.listing(f"brief/24h/{kind}/", title, papers, nav="briefs")
    for date, kinds in days.items():
        for kind in KINDS:
            title = s["brief_title"].format(date=date, kind=s[f"brief_{kind}"])
            written += out.listing(f"brief/{date}/{kind}/", title, kinds.get(kind, []),
                                   nav="briefs")
    archive = [(d, {k: len(days[d].get(k, [])) for k in KINDS})
               for d in sorted(days, reverse=True)]
    written.append(out.page("brief/", "briefs.html", title=s["briefs"], archive=archive,
                            kinds=KINDS, nav="briefs"))
    return written


def _days(site: SiteData) -> dict[str, dict[str, list[Paper]]]:
    tz = site.lib.tz
    days: dict[str, dict[str, list[Paper]]] = defaultdict(lambda: defaultdict(list))

    def day(t: dt.datetime) -> str:
        return t.astimezone(tz).strftime("%Y-%m-%d")

    for p in site.newest["first_seen"]:
        days[day(p.first_seen)]["new"].append(p)
        if p.ai_related:
            days[day(p.first_seen)]["ai"].append(p)
    for p, _, when in site.revisions:
        days[day(when)]["revised"].append(p)
    for p in site.digested:
        days[day(p.digest_created)]["digests"].append(p)  # type: ignore[arg-type]
    return days


def _last_24h(site: SiteData) -> dict[str, list[Paper]]:
    start, end = site.home.window_start, site.home.now

    def inside(t: dt.datetime | None) -> bool:
        return t is not None and start < t <= end

    new = [p for p in site.newest["first_seen"] if inside(p.first_seen)]
    return {"new": new, "ai": [p for p in new if p.ai_related],
            "revised": list({p.arxiv_id: p for p, _, w in site.revisions
                             if inside(w)}.values()),
            "digests": [p for p in site.newest["updated"] if inside(p.digest_created)]}
