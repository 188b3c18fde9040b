"""我的订阅 (me/): what the fork's [[follows]] name, the watched papers' histories, and the
recent papers they match; its feed is feeds/me.*.xml (pages/feeds.py)."""

from __future__ import annotations

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output
from pipeline.site.render.feeds import recent

MAX_CARDS = 100  # the page shows the newest matches; the feed and search hold the rest


def render(site: SiteData, out: Output) -> list[str]:
    followed, s = site.followed, site.strings
    spec = next((f for f in site.feeds if f.slug == "me"), None)
    matches = recent(followed.newest, lambda x: x[0].first_seen, site.lib.now,
                     site.cfg.site.feed_days, site.lib.tz)[:MAX_CARDS]
    events: dict[str, list[tuple[str, str]]] = {}
    for e in followed.events:  # newest first
        note = s[f"watch_{e.kind}_note"].format(value=e.value, version=e.version)
        events.setdefault(e.arxiv_id, []).append((site.local(e.seen), note))
    kinds = (("authors", s["follow_kind_author"]), ("keywords", s["follow_kind_query"]),
             ("categories", s["follow_kind_category"]), ("topics", s["follow_kind_topic"]),
             ("watch", s["me_watched"]))
    follows = [(f.name, [(label, ", ".join(getattr(f, key))) for key, label in kinds
                         if getattr(f, key)]) for f in site.cfg.follows]
    # the watched ids with a page, not the pass's Pages: the key changes only with its links
    paged = frozenset(i for i, p in followed.watched if p is not None and site.pages.has(p))
    return [out.page("me/", "me.html", feeds=[spec] if spec else (), title=s["feed_me"],
                     follows=follows, watched=followed.watched, paged=paged, events=events,
                     cards=out.cards_html([p for p, _ in matches], "../",
                                          notes={p.arxiv_id: why for p, why in matches}),
                     count=len(matches), feed=spec, nav="follow")]
