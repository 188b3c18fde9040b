"""The home page: the day's numbers and the newest papers in full."""

from __future__ import annotations

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output

HOME_CARDS = 20  # fewer than a list page's 50, so the next one is on the library's first
HOME_TOP = 10  # 今日精选's first ten: the rest on its page (brief/top/)


def render(site: SiteData, out: Output) -> list[str]:
    h, papers = site.home, site.lib.papers
    newest = site.newest["updated"]
    latest = newest[:HOME_CARDS]
    last_arxiv = next((x for x in h.sources if x.source == "arxiv"), None)
    return [out.page("", "index.html", h=h, cards=out.cards_html(latest, "", full=True),
                     count=len(papers), last_arxiv=last_arxiv, nav="home",
                     top_title=site.strings["top"], top_link="brief/top/",
                     top_cards=out.ranked_html(site.top[:HOME_TOP], ""), top_count=len(site.top),
                     accepted=len(site.accepted),
                     # "Next" goes to the library's card of the paper after the last shown
                     more=newest[HOME_CARDS] if len(newest) > HOME_CARDS else None,
                     last_ingest=max((p.version_seen_at for p in papers), default=None))]
