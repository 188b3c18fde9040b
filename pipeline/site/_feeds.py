"""Atom and RSS 2.0 feeds (feedgenerator, as Pelican uses) and the OPML list of them.

Entry ids are tag URIs that never change for a paper (or, in the revisions feed,
for a paper version), so readers see no duplicates after a rebuild. Summaries
are HTML-escaped before they go in: readers render a summary as HTML, and an
abstract must reach them as text.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit
from xml.sax.saxutils import quoteattr

from feedgenerator import Atom1Feed, Rss201rev2Feed
from markupsafe import escape

from pipeline.site._views import DIGEST_FIELDS, Paper

FEED_MAX = 100  # entries per feed: readers poll often; the site keeps the rest
SITE_FEEDS = ("all", "ai", "revisions", "digests")  # the site's own feeds, by slug


@dataclass(frozen=True)
class FeedSpec:
    slug: str  # feeds/<slug>.atom.xml and feeds/<slug>.rss.xml
    title: str


class _Atom(Atom1Feed):
    def latest_post_date(self) -> dt.datetime:
        # feedgenerator falls back to the second's time for an empty feed, which would
        # change its bytes on every rebuild; the build's clock (to the minute) is the
        # default, and the bound: an entry dated 2099 does not date the feed.
        as_of = self.feed["as_of"]
        return min(max((i["updateddate"] for i in self.items), default=as_of), as_of)


class _Rss(Rss201rev2Feed):
    latest_post_date = _Atom.latest_post_date


def tag_host(base_url: str) -> str:
    return urlsplit(base_url).hostname or "papertrail.invalid"


def _summary(paper: Paper, s: dict[str, str]) -> str:
    parts = [f"<p>{escape(', '.join(paper.authors))}</p>", f"<p>{escape(paper.title)}</p>",
             f"<p>{escape(paper.abstract_text)}</p>"]
    if paper.digest:
        parts.append(f"<p><strong>{escape(s['digest'])}</strong> "
                     f"({escape(s['digest_label'].format(model=paper.digest_model))})</p>")
        parts += [f"<p>{escape(s[k])}: {escape(paper.digest[k])}</p>" for k in DIGEST_FIELDS
                  if paper.digest.get(k)]
    return "".join(parts)


def render(spec: FeedSpec, items: Iterable[tuple[Paper, dt.datetime, str]], *, site_title: str,
           base_url: str, strings: dict[str, str], language: str, as_of: dt.datetime
           ) -> tuple[str, str]:
    """(atom, rss) for newest-first items of (paper, entry time, entry id suffix)."""
    items = list(items)[:FEED_MAX]
    host = tag_host(base_url)
    root = base_url.rstrip("/") + "/" if base_url else ""
    out = []
    for cls, ext in ((_Atom, "atom"), (_Rss, "rss")):
        feed = cls(title=f"{site_title} · {spec.title}", link=root or "https://arxiv.org/",
                   description=spec.title, language=language,
                   feed_url=f"{root}feeds/{spec.slug}.{ext}.xml" if root else None,
                   feed_guid=f"tag:{host},2026:feed/{spec.slug}", as_of=as_of)
        for paper, when, suffix in items:
            feed.add_item(
                title=paper.title,
                link=f"{root}{paper.path}" if root and paper.has_page else paper.abs_url,
                description=_summary(paper, strings),
                unique_id=f"tag:{host},2026:paper/{paper.arxiv_id}{suffix}",
                unique_id_is_permalink=False,
                author_name=", ".join(paper.authors[:20]),
                categories=paper.categories,
                pubdate=when, updateddate=when,
            )
        buf = io.StringIO()
        feed.write(buf, "utf-8")
        out.append(buf.getvalue())
    return out[0], out[1]


def opml(specs: list[FeedSpec], *, site_title: str, base_url: str) -> str:
    root = base_url.rstrip("/") + "/" if base_url else ""
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<opml version="2.0">',
             f"  <head><title>{escape(site_title)}</title></head>", "  <body>"]
    for spec in specs:
        for ext, kind in (("atom", "atom"), ("rss", "rss")):
            lines.append(f"    <outline type={quoteattr(kind)} text={quoteattr(spec.title)} "
                         f"title={quoteattr(spec.title)} "
                         f"xmlUrl={quoteattr(f'{root}feeds/{spec.slug}.{ext}.xml')}/>")
    lines += ["  </body>", "</opml>", ""]
    return "\n".join(lines)
