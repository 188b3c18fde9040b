"""为你推荐 (for-you/): the page, and the recent papers' vectors only it loads
(pipeline.site.index.recommend makes them; theme/static/foryou.js ranks them in the browser)."""

from __future__ import annotations

import bisect
import datetime as dt

from pipeline.site.index import recommend as _recommend
from pipeline.site.index.search import minutes
from pipeline.site.model.data import SiteData
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    days = site.cfg.site.recommend_days
    if "for-you" not in out.cache.once:  # the same whatever pages there are: once a build
        # The search index's order, so a row of the window is doc first_doc + row there.
        docs = sorted(site.lib.papers, key=lambda p: (p.first_seen, p.arxiv_id))
        first = bisect.bisect_left([p.first_seen for p in docs],
                                   site.lib.now - dt.timedelta(days=days))
        window = _recommend.build([_recommend.Doc(p.arxiv_id, p.title, p.abstract_text, p.doi)
                                   for p in docs[first:]])
        out.cache.once["for-you"] = _recommend.files(window, first, minutes(site.lib.now), days)
    for name, data in out.cache.once["for-you"].items():
        out.writer.put(out.root / name, data)
    s = site.strings
    return [out.page("for-you/", "foryou.html", title=s["foryou"], nav="foryou",
                     intro=s["foryou_intro"].format(days=days))]
