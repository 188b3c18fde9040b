"""Atom 1.0 and RSS 2.0 files from feed entries, and the OPML list of every feed.

What goes into an entry is pages/feeds.py's business; this module knows the formats: one
author element per author, arXiv's pages as related links, rel="self" and "alternate"
on every feed, and the byte cap. Entry ids are tag URIs that never change for what they
name, so readers see no duplicates after a rebuild. Content is HTML built by escaping
every untrusted piece first: readers render it, and an abstract must reach them as text.

Every feed comes full and light (`feeds/light/<slug>.*.xml`): the same entries, ids and
links, each with its light content (the one-line digest) and its first authors only, a
fifth of the bytes a poller fetches. A feed's bytes change only when an entry does: its
`<updated>` is its newest entry's, never the build's clock, so a server's ETag and
Last-Modified let a poller's conditional request end in 304 Not Modified.

Written as strings, each entry once per format and link prefix (a paper is in several
feeds): feedgenerator's SAX writer took 2.5 s for the demo's 3,000 entries, and an exact
byte count per entry makes the cap exact without writing a feed twice.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.utils import format_datetime
from typing import TypeVar
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as _esc
from xml.sax.saxutils import quoteattr

from markupsafe import escape

# The site's own feeds, by slug, with the page each follows.
SITE_FEEDS = {"all": "", "ai": "", "revisions": "brief/", "digests": "brief/"}
LIGHT = "light/"  # a feed's light twin: feeds/light/<slug>.*.xml
LIGHT_AUTHORS = 3  # authors a light entry names (its light content says how many more)
# An empty feed's <updated>: no entry dates it, and the build's clock would change its
# bytes at every run (the tag URIs' own date).
EMPTY_UPDATED = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
_T = TypeVar("_T")
_XML = '<?xml version="1.0" encoding="utf-8"?>\n'


@dataclass(frozen=True)
class FeedSpec:
    slug: str  # feeds/<slug>.atom.xml and feeds/<slug>.rss.xml
    title: str
    page: str = ""  # the site page the feed follows (its rel="alternate"), site-relative


@dataclass(frozen=True)
class Entry:
    key: str  # what the entry is, within the site: paper/<id>, paper/<id>v2, brief/new/<day>
    title: str
    link: str  # site-relative, or absolute; see FeedSite.url
    updated: dt.datetime
    content: str  # HTML, every untrusted part escaped
    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    related: tuple[str, ...] = ()  # absolute URLs: arXiv's abstract page and PDF
    day: str = ""  # the local day the entry counts in (the cap's note links its brief)
    light: str | None = None  # HTML of the light feed's entry; None: the content itself


def light(spec: FeedSpec, title: str) -> FeedSpec:
    """The light twin of a feed: same entries, same page."""
    return FeedSpec(LIGHT + spec.slug, title, spec.page)


@dataclass(frozen=True)
class FeedSite:
    """What every feed of a build shares."""

    title: str
    base_url: str  # empty: links relative to each feed file (a local preview)
    language: str
    as_of: dt.datetime  # the build's clock: bounds every date a feed shows

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or "papertrail.invalid"

    def url(self, path: str, slug: str) -> str:
        """A site path as feeds/<slug>.*.xml links it (an absolute URL stays as it is)."""
        if self.base_url:
            return _absolute(path, self.base_url.rstrip("/") + "/")
        return _absolute(path, "../" * (1 + slug.count("/")))

    def tag(self, key: str) -> str:
        return f"tag:{self.host},2026:{key}"

    def when(self, t: dt.datetime) -> dt.datetime:
        """Never past the build's clock: an entry dated 2099 does not date the feed."""
        return min(t, self.as_of).astimezone(dt.UTC)


def _absolute(link: str, prefix: str) -> str:
    """`link` under `prefix` (the site's URL, or the way up from a feed file), unless it is
    an absolute URL already (arXiv's page of a paper that has none of its own)."""
    return link if link.startswith(("https://", "http://")) else prefix + link


def _atom_date(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _rss_date(t: dt.datetime) -> str:
    return format_datetime(t, usegmt=True)


def _lighter(e: Entry) -> Entry:
    """The entry as the light feed has it: its light content, its first authors, arXiv's
    abstract page (not the PDF) and no categories."""
    if e.light is None:
        return e
    return dataclasses.replace(e, content=e.light, authors=e.authors[:LIGHT_AUTHORS],
                               categories=(), related=e.related[:1], light=None)


def _as_is(e: Entry) -> Entry:
    return e


@functools.lru_cache(maxsize=1 << 16)
def _atom_entry(e: Entry, site: FeedSite, prefix: str) -> str:
    link = _absolute(e.link, prefix)
    when = _atom_date(site.when(e.updated))
    parts = [f"<entry><title>{_esc(e.title)}</title>",
             f'<link href={quoteattr(link)} rel="alternate"/>',
             *(f'<link href={quoteattr(u)} rel="related"/>' for u in e.related),
             f"<id>{_esc(site.tag(e.key))}</id><updated>{when}</updated>",
             *(f"<author><name>{_esc(a)}</name></author>" for a in e.authors),
             *(f"<category term={quoteattr(c)}/>" for c in e.categories),
             f'<content type="html">{_esc(e.content)}</content></entry>\n' if e.content
             else "</entry>\n"]
    return "".join(parts)


@functools.lru_cache(maxsize=1 << 16)
def _rss_item(e: Entry, site: FeedSite, prefix: str) -> str:
    link = _absolute(e.link, prefix)
    parts = [f"<item><title>{_esc(e.title)}</title><link>{_esc(link)}</link>",
             f"<description>{_esc(e.content)}</description>" if e.content else "",
             *(f"<dc:creator>{_esc(a)}</dc:creator>" for a in e.authors),
             *(f"<category>{_esc(c)}</category>" for c in e.categories),
             f"<pubDate>{_rss_date(site.when(e.updated))}</pubDate>",
             f'<guid isPermaLink="false">{_esc(site.tag(e.key))}</guid></item>\n']
    return "".join(parts)


def _atom(spec: FeedSpec, site: FeedSite, updated: dt.datetime) -> tuple[str, str]:
    head = (f'{_XML}<feed xmlns="http://www.w3.org/2005/Atom" '
            f"xml:lang={quoteattr(site.language)}>"
            f"<title>{_esc(site.title)} · {_esc(spec.title)}</title>"
            f'<link href={quoteattr(site.url(spec.page, spec.slug))} rel="alternate"/>'
            f'<link href={quoteattr(site.url(f"feeds/{spec.slug}.atom.xml", spec.slug))} '
            'rel="self"/>'
            f"<id>{_esc(site.tag(f'feed/{spec.slug}'))}</id>"
            f"<updated>{_atom_date(updated)}</updated>"
            f"<author><name>{_esc(site.title)}</name></author>\n")
    return head, "</feed>\n"


def _rss(spec: FeedSpec, site: FeedSite, updated: dt.datetime) -> tuple[str, str]:
    head = (f'{_XML}<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>'
            f"<title>{_esc(site.title)} · {_esc(spec.title)}</title>"
            f"<link>{_esc(site.url(spec.page, spec.slug))}</link>"
            f"<description>{_esc(spec.title)}</description>"
            f'<atom:link href={quoteattr(site.url(f"feeds/{spec.slug}.rss.xml", spec.slug))} '
            'rel="self" type="application/rss+xml"/>'
            f"<language>{_esc(site.language)}</language>"
            f"<lastBuildDate>{_rss_date(updated)}</lastBuildDate>\n")
    return head, "</channel></rss>\n"


_FORMATS = ((_atom, _atom_entry), (_rss, _rss_item))


def render(spec: FeedSpec, entries: Sequence[Entry], site: FeedSite, *, max_bytes: int,
           note: Callable[[Sequence[Entry]], Entry]) -> tuple[bytes, bytes, int]:
    """(atom, rss, entries left out) for newest-first entries. Past `max_bytes` the oldest
    entries give way to `note(left_out)`, the feed's last entry, which says so. A light
    feed (slug light/…) writes each entry's light form."""
    prefix = site.url("", spec.slug)
    form = _lighter if spec.slug.startswith(LIGHT) else _as_is
    entries = [form(e) for e in entries]
    # The newest entry dates the feed: a rebuild, or a run that brought nothing new,
    # keeps its bytes.
    updated = max((site.when(e.updated) for e in entries), default=EMPTY_UPDATED)
    out, left_out = [], 0
    for frame, item in _FORMATS:
        head, tail = frame(spec, site, updated)
        parts = [item(e, site, prefix) for e in entries]
        sizes = [len(p.encode()) for p in parts]
        total = len(head.encode()) + len(tail.encode()) + sum(sizes)
        keep = len(parts)
        if total > max_bytes:
            last = item(form(note(entries)), site, prefix)  # sized with every entry left out
            room = max_bytes - len(head.encode()) - len(tail.encode()) - len(last.encode())
            keep = 0
            while keep < len(sizes) and room >= sizes[keep]:
                room -= sizes[keep]
                keep += 1
            parts = [*parts[:keep], item(form(note(entries[keep:])), site, prefix)]
        left_out = max(left_out, len(entries) - keep)
        out.append((head + "".join(parts) + tail).encode())
    return out[0], out[1], left_out


def opml(folders: Sequence[tuple[str, Sequence[FeedSpec]]], site: FeedSite) -> str:
    """A folder of feeds per (name, feeds), each feed once and as Atom: a reader that
    imports the list subscribes to each once (its RSS twin would repeat every item)."""

    def url(path: str) -> str:  # relative to feeds.opml itself without a base_url
        return site.url(path, "") if site.base_url else path or "./"

    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<opml version="2.0">',
             f"  <head><title>{escape(site.title)}</title></head>", "  <body>"]
    for name, specs in folders:
        if not specs:
            continue
        lines.append(f"    <outline text={quoteattr(name)} title={quoteattr(name)}>")
        # type "rss": what OPML 2.0 calls any feed of a subscription list, Atom too
        lines += [f'      <outline type="rss" text={quoteattr(spec.title)} '
                  f"title={quoteattr(spec.title)} "
                  f"xmlUrl={quoteattr(url(f'feeds/{spec.slug}.atom.xml'))} "
                  f"htmlUrl={quoteattr(url(spec.page))}/>" for spec in specs]
        lines.append("    </outline>")
    lines += ["  </body>", "</opml>", ""]
    return "\n".join(lines)


def recent(items: Sequence[_T], when: Callable[[_T], dt.datetime], now: dt.datetime,
           days: int, tz: dt.tzinfo) -> list[_T]:
    """Of newest-first items, those of the last `days` days, or of the last `days` local
    days that had any when those reach further back (a quiet category's feed is never
    empty; a weekend's gap never hides Friday's papers)."""
    cutoff = now - dt.timedelta(days=days)
    out: list[_T] = []
    distinct, last_day = 0, None
    for item in items:
        t = when(item)
        day = t.astimezone(tz).date()
        if day != last_day:
            distinct, last_day = distinct + 1, day
        if t < cutoff and distinct > days:
            break
        out.append(item)
    return out
