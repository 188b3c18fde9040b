"""Atom and RSS feeds of the site, of each category and topic, and the OPML of them all."""

from __future__ import annotations

import datetime as dt

import pipeline.site._feeds as _feeds
from pipeline.site._views import Paper
from pipeline.site.data import SiteData, newest
from pipeline.site.output import Output

Entry = tuple[Paper, dt.datetime, str]  # (paper, entry time, entry id suffix)


def render(site: SiteData, out: Output) -> list[str]:
    """Feeds are not pages: the sitemap lists none."""
    entries = _entries(site)
    title, base_url = site.cfg.site.title, site.cfg.site.base_url
    for spec in site.feeds:
        atom, rss = _feeds.render(spec, entries[spec.slug], site_title=title,
                                  base_url=base_url, strings=site.strings,
                                  language=site.lang, as_of=site.lib.now)
        out.writer.write_text(f"feeds/{spec.slug}.atom.xml", atom)
        out.writer.write_text(f"feeds/{spec.slug}.rss.xml", rss)
    out.writer.write_text("feeds.opml", _feeds.opml(site.feeds, site_title=title,
                                                    base_url=base_url))
    return []


def _entries(site: SiteData) -> dict[str, list[Entry]]:
    """Newest first, per feed slug."""
    new = [(p, p.first_seen, "") for p in site.newest["first_seen"]]
    lists: dict[str, list[Entry]] = {
        "all": new,
        "ai": [x for x in new if x[0].ai_related],
        "revisions": [(p, when, f"v{v}") for p, v, when in site.revisions],
        "digests": [(p, p.digest_created, f"v{p.version}/digest")  # type: ignore[misc]
                    for p in site.digested],
    }
    for cat, members in site.categories.items():
        lists[f"category/{cat}"] = [(p, p.first_seen, "") for p in newest(members, "first_seen")]
    for topic in site.topics:
        lists[f"topic/{topic.slug}"] = [(p, p.first_seen, "")
                                       for p in newest(topic.members, "first_seen")]
    return lists
