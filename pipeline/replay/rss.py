"""arXiv's announcement feed (`rss.arxiv.org/rss/<archives and categories>`) over the
replay's entries: what `ArxivReplay` answers at /rss/.

Where each behaviour comes from (arXiv/arxiv-feed at 110b5ab, 2025-07-02, the code that
serves rss.arxiv.org, and arXiv/arxiv-docs `source/help/rss_specifications.md`, copied in
/work/shared/fixtures/arxiv-rss/):
- the day: `utils.get_arxiv_midnight` and `fetch_data.get_records_from_db` with
  `FEED_NUM_DAYS = 1`: a feed lists the updates dated today in US-Eastern time, so it
  switches at midnight ET ("arXiv updates the feed content every day at midnight", the
  spec), about four hours after the 20:00 ET announcement; Saturday's and Sunday's
  feeds are empty (`skipDays`);
- the query: `fetch_data.validate_request`: archives and categories joined by `+`; an
  unknown archive or category is a `FeedIndexerError`, answered as an RSS document
  titled "Feed error for query" with HTTP 400 (`serializer.serialize_error`);
- which listings: `database.get_announce_papers`: one listing per paper; `absonly`
  left out; a replacement only below version 6 (`version_threshold`); the type is
  `new` or `replace` when the paper's primary category is among the requested ones,
  else `cross` or `replace-cross`; ordered replace-cross, replace, cross, new (each by
  id, newest first) and cut at `result_limit = 2000`, so a capped feed loses the new
  papers of the lowest ids; feedgen's `add_entry` prepends, so the document lists
  them in reverse: new first;
- each item (`serializer.add_document`, `extensions.ArxivEntryExtension.extend_rss`):
  title, link to the abstract, description "arXiv:<id>v<n> Announce Type: <type>
  \\nAbstract: …", guid `oai:arXiv.org:<id>v<n>`, one category element per category
  (primary first, as arXiv's metadata lists them), pubDate (today's midnight ET),
  `arxiv:announce_type`, `dc:rights`, `arxiv:DOI`, `arxiv:journal_reference`,
  `dc:creator` (the authors joined by ", ");
- the channel: title "<topics> updates on arXiv.org", links, description, docs,
  language, lastBuildDate, managingEditor, pubDate (midnight ET of the day), skipDays;
  Content-Type `application/rss+xml`, an ETag, Cache-Control to the next midnight
  (`routes._feed`).

What is modelled, not recorded
------------------------------
- Which version a day lists: an entry's listing day is the US-Eastern date four hours
  after its announcement (20:00 ET announces the next day's listing, `sample.announced_at`).
  Only `new` (a v1) and `replace` (a later version) updates exist here: a cross-list added
  to an old paper (`cross` in arXiv_updates) is not in the sample.
- The taxonomy: every active cs category (as the OAI-PMH replay knows them) and every
  other category the entries use; an archive stands for those of its categories.
- Stale feeds (`stale`): a feed that names a stale category is served as it was on the
  previous day that listed anything, pubDate included: the 2026 field reports of one
  category's feed serving the previous day while others were current (likely a cached
  copy; the mechanism is not recorded, only what a reader sees).
- lastBuildDate is the day's midnight plus a few seconds (the spec's example:
  00:00:11 ET); the description's abstract and the creator string are the entry's own.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable
from email.utils import format_datetime
from xml.sax.saxutils import escape

from pipeline.replay.sample import EASTERN, Entry

RESULT_LIMIT = 2000  # arxiv-feed's get_announce_papers
VERSION_THRESHOLD = 6  # replacements of this version and later are not listed
_ORDER = {"replace-cross": 1, "replace": 2, "cross": 3, "new": 4}  # its listing_order
_LOOK_BACK = 7  # days a stale feed may reach back for the previous listing


class FeedQueryError(ValueError):
    """The path names no archive or category arXiv knows."""


def listing_day(e: Entry) -> dt.date:
    """The day whose feed lists this version: 20:00 ET announces the next day's listing."""
    return (e.announced + dt.timedelta(hours=4)).astimezone(EASTERN).date()


def day_of(now: dt.datetime) -> dt.date:
    """arXiv's day at `now`: the US-Eastern date (`get_arxiv_midnight`)."""
    return now.astimezone(EASTERN).date()


def midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=EASTERN)


def wanted(query: str, known: Iterable[str]) -> tuple[list[str], set[str]]:
    """The topics as the feed names them (archives, then categories) and every category
    they stand for; FeedQueryError for an unknown one (arxiv-feed's validate_request)."""
    known = set(known)
    archives, categories = [], []
    for part in query.split("+"):
        if not part.strip():
            raise FeedQueryError(f"Invalid archive specification '{query}'.")
        if "." in part:
            if part not in known:
                raise FeedQueryError(f"Bad subject class '{part.split('.', 1)[1]}'.")
            categories.append(part)
        elif any(c.split(".")[0] == part for c in known):
            archives.append(part)
        else:
            raise FeedQueryError(f"Bad archive '{part}'.")
    cats = {c for c in known if c.split(".")[0] in archives} | set(categories)
    return archives + categories, cats


def listings(entries: Iterable[Entry], day: dt.date, now: dt.datetime, cats: set[str]
             ) -> list[tuple[str, Entry]]:
    """The day's listings for these categories, (announce type, version), in the order
    the document shows them, at most RESULT_LIMIT."""
    by_paper: dict[str, Entry] = {}
    for e in entries:
        if (listing_day(e) == day and e.announced <= now and cats.intersection(e.categories)
                and e.version < VERSION_THRESHOLD):
            held = by_paper.get(e.arxiv_id)
            if held is None or e.version < held.version:  # a new paper is listed as new
                by_paper[e.arxiv_id] = e
    typed = [(_type(e, cats), e) for e in by_paper.values()]
    typed.sort(key=lambda t: t[1].arxiv_id, reverse=True)
    typed.sort(key=lambda t: _ORDER[t[0]])  # stable: by type, each newest id first
    return list(reversed(typed[:RESULT_LIMIT]))  # feedgen prepends each entry


def _type(e: Entry, cats: set[str]) -> str:
    primary = e.primary_category in cats
    if e.version == 1:
        return "new" if primary else "cross"
    return "replace" if primary else "replace-cross"


def served_day(entries: list[Entry], now: dt.datetime, cats: set[str],
               stale: set[str]) -> dt.date:
    """Today in US-Eastern time, or, for a feed naming a stale category, the previous day
    that listed anything."""
    today = day_of(now)
    if not stale & cats:
        return today
    for back in range(1, _LOOK_BACK + 1):
        day = today - dt.timedelta(days=back)
        if listings(entries, day, now, cats):
            return day
    return today - dt.timedelta(days=1)


def document(topics: list[str], items: list[tuple[str, Entry]], day: dt.date,
             license_of: Callable[[str], str]) -> bytes:
    """The RSS 2.0 document as arxiv-feed's serializer writes it."""
    link = f"http://rss.arxiv.org/rss/{'+'.join(topics)}"
    named = ", ".join(topics)
    start = midnight(day)
    parts = [
        "<?xml version='1.0' encoding='UTF-8'?>",
        '<rss xmlns:arxiv="http://arxiv.org/schemas/atom" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:atom="http://www.w3.org/2005/Atom" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/" version="2.0">',
        "  <channel>",
        f"    <title>{escape(named)} updates on arXiv.org</title>",
        f"    <link>{escape(link)}</link>",
        f"    <description>{escape(named)} updates on the arXiv.org e-print archive."
        "</description>",
        f'    <atom:link href="{escape(link)}" rel="self" type="application/rss+xml"/>',
        "    <docs>http://www.rssboard.org/rss-specification</docs>",
        "    <language>en-us</language>",
        f"    <lastBuildDate>{_rfc822(start + dt.timedelta(seconds=11), dt.UTC)}"
        "</lastBuildDate>",
        "    <managingEditor>rss-help@arxiv.org</managingEditor>",
        f"    <pubDate>{_rfc822(start, EASTERN)}</pubDate>",
        "    <skipDays>\n      <day>Saturday</day>\n      <day>Sunday</day>\n    </skipDays>",
    ]
    for kind, e in items:
        full = f"{e.arxiv_id}v{e.version}"
        parts += [
            "    <item>",
            f"      <title>{escape(e.title)}</title>",
            f"      <link>https://arxiv.org/abs/{escape(e.arxiv_id)}</link>",
            f"      <description>arXiv:{escape(full)} Announce Type: {kind} \n"
            f"Abstract: {escape(e.abstract)}</description>",
            f'      <guid isPermaLink="false">oai:arXiv.org:{escape(full)}</guid>',
            *(f"      <category>{escape(c)}</category>" for c in e.categories),
            f"      <pubDate>{_rfc822(start, EASTERN)}</pubDate>",
            f"      <arxiv:announce_type>{kind}</arxiv:announce_type>",
            f"      <dc:rights>{escape(license_of(e.arxiv_id))}</dc:rights>",
            *([f"      <arxiv:DOI>{escape(e.doi)}</arxiv:DOI>"] if e.doi else []),
            *([f"      <arxiv:journal_reference>{escape(e.journal_ref.strip())}"
               "</arxiv:journal_reference>"] if e.journal_ref else []),
            f"      <dc:creator>{escape(', '.join(e.authors))}</dc:creator>",
            "    </item>",
        ]
    parts += ["  </channel>", "</rss>", ""]
    return "\n".join(parts).encode()


def error_document(query: str, message: str, day: dt.date) -> bytes:
    """A FeedError as arxiv-feed answers it (with HTTP 400): an RSS channel saying why."""
    link = f"http://rss.arxiv.org/rss/{query}"
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<rss xmlns:atom="http://www.w3.org/2005/Atom" version="2.0">\n  <channel>\n'
        f"    <title>Feed error for query: {escape(link)}</title>\n"
        f"    <link>{escape(link)}</link>\n"
        f"    <description>{escape(message)}</description>\n"
        "    <language>en-us</language>\n"
        "    <managingEditor>rss-help.arxiv.org</managingEditor>\n"
        f"    <pubDate>{_rfc822(midnight(day), EASTERN)}</pubDate>\n"
        "  </channel>\n</rss>\n").encode()


def headers(body: bytes, now: dt.datetime) -> dict[str, str]:
    """ETag and Cache-Control to the next midnight ET, as routes._feed sets them."""
    expires = midnight(day_of(now) + dt.timedelta(days=1))
    return {"ETag": hashlib.sha256(body).hexdigest(),
            "Cache-Control": f"max-age={int((expires - now).total_seconds())}"}


def _rfc822(t: dt.datetime, tz: dt.tzinfo) -> str:
    return format_datetime(t.astimezone(tz))
