"""为你推荐 (for-you/): the page, and the recent papers' vectors only it loads
(pipeline.site.index.recommend makes them; theme/static/foryou.js ranks them in the browser)."""

from __future__ import annotations

import bisect
import datetime as dt

import numpy as np

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
        recent = docs[first:]
        held = site.lib.embeddings
        # Meaning only when every paper of the window has its vector: the store's embeddings
        # fill in over runs (a per-run cap), and a half-filled space would rank half.
        vectors = (np.stack([held[p.arxiv_id] for p in recent])
                   if recent and all(p.arxiv_id in held for p in recent) else None)
        window = _recommend.build([_recommend.Doc(p.arxiv_id, p.title, p.abstract_text, p.doi)
                                   for p in recent], vectors, site.lib.embedder.split("@")[0])
        out.cache.once["for-you"] = _recommend.files(window, first, minutes(site.lib.now), days)
        out.cache.once["for-you-by"] = window.model
    for name, data in out.cache.once["for-you"].items():
        out.writer.put(out.root / name, data)
    s = site.strings
    by = out.cache.once["for-you-by"]
    return [out.page("for-you/", "foryou.html", title=s["foryou"], nav="foryou",
                     intro=s["foryou_intro"].format(days=days),
                     method=(s["foryou_by_meaning"].format(model=by) if by
                             else s["foryou_by_words"]))]
