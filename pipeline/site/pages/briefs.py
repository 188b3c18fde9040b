"""Briefs: what came in the last 24 hours and on each day, by kind (new, AI, revised,
digested), and the archive of days."""

from __future__ import annotations

from pipeline.site.model.data import BRIEF_KINDS as KINDS
from pipeline.site.model.data import SiteData, Top, by_day, last_announcement, rest, top_of_days
from pipeline.site.model.views import Paper
from pipeline.site.output import Output
from pipeline.site.render.safe import clean

# Days with a picks page (their briefs link to it): the brief feeds' two weeks. A day of all
# cs.* lists ~1,500 titles by group there, ~400 KB a day: a year of them would not fit.
TOP_DAYS = 14

# What each kind's list is sorted by (data.by_day and _last_24h), as its page says.
ORDER = {"new": "first_seen", "ai": "first_seen", "revised": "revision", "digests": "digest"}


def render(site: SiteData, out: Output) -> list[str]:
    s = site.strings
    days = by_day(site)
    tops = top_of_days(site, {d: days[d] for d in sorted(days, reverse=True)[:TOP_DAYS]})
    written = [_picks(site, out, "brief/top/", s["top_last"], site.top,
                      last_announcement(site.cfg, site.lib.papers))]
    for date, top in tops.items():
        written.append(_picks(site, out, f"brief/{date}/top/", s["top_of"].format(date=date),
                              top, [*days[date].get("new", []),
                                    *days[date].get("revised", [])]))
    for kind, papers in _last_24h(site).items():
        title = s["brief_24h"].format(kind=s[f"brief_{kind}"])
        written += out.listing(f"brief/24h/{kind}/", title, papers, order=ORDER[kind],
                               nav="briefs", picks=(s["top_last"], "brief/top/", len(site.top)))
    for date, kinds in days.items():
        picks = ((s["top_of"].format(date=date), f"brief/{date}/top/", len(tops[date]))
                 if date in tops else None)
        for kind in KINDS:
            title = s["brief_title"].format(date=date, kind=s[f"brief_{kind}"])
            written += out.listing(f"brief/{date}/{kind}/", title, kinds.get(kind, []),
                                   order=ORDER[kind], nav="briefs", picks=picks)
    archive = [(d, {k: len(days[d].get(k, [])) for k in KINDS}, len(tops.get(d, [])))
               for d in sorted(days, reverse=True)]
    written.append(out.page("brief/", "briefs.html", title=s["briefs"], archive=archive,
                            kinds=KINDS, picked=set(tops), nav="briefs"))
    return written


def _picks(site: SiteData, out: Output, path: str, title: str, top: Top,
           papers: list[Paper]) -> str:
    """A day's picks page: 今日精选 whole, then the rest of the day by topic and category."""
    root = "../" * path.count("/")
    groups = rest(site, papers, top)
    # the ids with a page, not the pass's Pages: the page's key changes only with its links
    paged = sorted(p.arxiv_id for _, _, shown in groups for p in shown if site.pages.has(p))
    return out.page(path, "top.html", title=title, top_cards=out.ranked_html(top, root),
                    groups=groups, paged=frozenset(paged), nav="briefs")


def _last_24h(site: SiteData) -> dict[str, list[Paper]]:
    """The papers behind the home page's four numbers (stats.Window), listed by kind."""
    w = site.home.window

    def of(ids: frozenset[str], papers: list[Paper]) -> list[Paper]:
        wanted = {clean(i) for i in ids}  # as the papers show their ids
        return list({p.arxiv_id: p for p in papers if p.arxiv_id in wanted}.values())

    return {"new": of(w.new, site.newest["first_seen"]),
            "ai": of(w.ai, site.newest["first_seen"]),
            "revised": of(w.revised, [p for p, _, _ in site.revisions]),
            "digests": of(w.digests, site.digested)}
