"""The HF board (HF 社区发现): each day's Hugging Face community picks ranked by upvotes,
as huggingface.co/papers ranks them, joined with what the site knows of each paper (its
versions, digest and topics): hf/ is the newest day, hf/<day>/ every day."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from pipeline.site.model.data import SiteData
from pipeline.site.model.views import Paper
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    by_day: dict[dt.date, list[Paper]] = defaultdict(list)
    for p in site.lib.papers:
        if p.hf_day is not None:
            by_day[p.hf_day].append(p)
    days = sorted(by_day, reverse=True)
    s, written = site.strings, []
    for i, day in enumerate(days):
        ranked = sorted(by_day[day], key=lambda p: (-(p.hf_upvotes or 0), p.arxiv_id))
        for path in (["hf/"] if i == 0 else []) + [f"hf/{day.isoformat()}/"]:
            root = "../" * path.count("/")
            picks = [(p, out.cards_html([p], root, heading="h2")) for p in ranked]
            written.append(out.page(path, "hf.html", title=s["hf_board_title"].format(
                date=day.isoformat()), picks=picks, day=day, days=days, nav="hf"))
    if not days:
        written.append(out.page("hf/", "hf.html", title=s["hf_board"], picks=[], day=None,
                                days=[], nav="hf"))
    return written
