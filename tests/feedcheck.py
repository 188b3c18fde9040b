"""Checkers for the site's feeds: Atom against RFC 4287, RSS 2.0 by structure, OPML's list.

Each checker returns messages that start with the line they are about, so a failing assert
shows where to look; an empty list means the document passed.
"""

from __future__ import annotations

import functools
import re
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urlsplit

import rnc2rng
from lxml import etree

ATOM_NS = "http://www.w3.org/2005/Atom"
DC_NS = "http://purl.org/dc/elements/1.1/"
SCHEMA = Path(__file__).parent / "data" / "atom.rnc"
A = {"a": ATOM_NS}

# RSS 2.0's own children of channel and item; anything else must be in a namespace.
RSS_CHANNEL = frozenset({
    "title", "link", "description", "language", "copyright", "managingEditor", "webMaster",
    "pubDate", "lastBuildDate", "category", "generator", "docs", "cloud", "ttl", "image",
    "rating", "textInput", "skipHours", "skipDays", "item"})
RSS_ITEM = frozenset({
    "title", "link", "description", "author", "category", "comments", "enclosure", "guid",
    "pubDate", "source"})

# RFC 3339's date-time, with RFC 4287 §3.3's uppercase T and Z; xsd:dateTime (all the RNC
# says) also takes a date-time without any time zone.
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
# An IRI is absolute when it starts with a scheme (RFC 3987); ids may not be relative.
ABSOLUTE_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
# RFC 822 allows a two-digit year, which RSS 2.0 asks us not to use.
RFC822_YEAR = re.compile(r"^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+(\d+)\s")


def _at(el: etree._Element, message: str) -> str:
    return f"line {el.sourceline}: {message}"


def _parse(xml: bytes) -> tuple[etree._Element | None, list[str]]:
    # No entities, no network: a feed is data we check, never a document we trust.
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        return etree.fromstring(xml, parser), []
    except etree.XMLSyntaxError as e:
        return None, [f"line {e.lineno}: not well-formed XML: {e.msg}"]


# --- Atom ----------------------------------------------------------------------------------


@functools.cache
def _atom_schema() -> etree.RelaxNG:
    rng = rnc2rng.dumps(rnc2rng.loads(SCHEMA.read_text(encoding="utf-8")))
    # rnc2rng declares the RFC's `namespace local = ""` as xmlns:local="", which XML 1.0
    # namespaces forbid (a prefix cannot be unbound); its one use is written out as ns="".
    rng = re.sub(r'\s+xmlns:local=""', "", rng)
    return etree.RelaxNG(etree.fromstring(rng.encode()))


def atom_errors(xml: bytes) -> list[str]:
    """RFC 4287's schema errors, then the rules of §3.3 and §4.1 it cannot state."""
    root, errors = _parse(xml)
    if root is None:
        return errors
    schema = _atom_schema()
    if not schema.validate(root):
        errors += [f"line {e.line}: {e.message}" for e in schema.error_log]
    if root.tag != f"{{{ATOM_NS}}}feed":
        return [*errors, _at(root, f"root is {root.tag}, not atom:feed")]
    return errors + _atom_rules(root)


def _atom_rules(feed: etree._Element) -> list[str]:
    entries = feed.findall("a:entry", A)
    errors = _exactly_one(feed, "feed", ("id", "title", "updated"))
    for entry in entries:
        errors += _exactly_one(entry, "entry", ("id", "title", "updated"))
        if entry.find("a:content", A) is None and not _alternates(entry):
            errors.append(_at(entry, "entry has neither atom:content nor a link "
                                     'rel="alternate"'))
    if feed.find("a:author", A) is None:
        errors += [_at(e, "entry has no atom:author and neither has the feed")
                   for e in entries
                   if e.find("a:author", A) is None and e.find("a:source/a:author", A) is None]
    for parent in (feed, *entries):
        errors += _duplicate_alternates(parent)
    errors += [_at(i, f"atom:id {i.text!r} is not an absolute IRI")
               for i in feed.iterfind(".//a:id", A) if not ABSOLUTE_IRI.fullmatch(i.text or "")]
    errors += [_at(d, f"{etree.QName(d).localname} {d.text!r} is not an RFC 3339 date-time")
               for d in feed.xpath(".//a:updated | .//a:published", namespaces=A)
               if not RFC3339.fullmatch(d.text or "")]
    if not feed.xpath("a:link[@rel='self']", namespaces=A):
        errors.append(_at(feed, 'feed has no link rel="self"'))
    return errors


def _exactly_one(el: etree._Element, what: str, names: tuple[str, ...]) -> list[str]:
    counts = {name: len(el.findall(f"a:{name}", A)) for name in names}
    return [_at(el, f"{what} has {n} atom:{name}, not exactly one")
            for name, n in counts.items() if n != 1]


def _alternates(el: etree._Element) -> list[etree._Element]:
    # A link without rel is an alternate link (RFC 4287 §4.2.7.2).
    return [link for link in el.findall("a:link", A)
            if link.get("rel", "alternate") == "alternate"]


def _duplicate_alternates(el: etree._Element) -> list[str]:
    seen: set[tuple[str | None, str | None]] = set()
    errors = []
    for link in _alternates(el):
        key = (link.get("type"), link.get("hreflang"))
        if key in seen:
            errors.append(_at(link, f'a second link rel="alternate" with type={key[0]!r} '
                                    f"and hreflang={key[1]!r}"))
        seen.add(key)
    return errors


# --- RSS 2.0 -------------------------------------------------------------------------------


def rss_errors(xml: bytes) -> list[str]:
    """RSS 2.0's structure (it has no schema), plus the atom:link rel="self" we require."""
    root, errors = _parse(xml)
    if root is None:
        return errors
    if root.tag != "rss" or root.get("version") != "2.0":
        return [_at(root, f'root is {root.tag} version={root.get("version")!r}, '
                          'not rss version="2.0"')]
    channels = root.findall("channel")
    if len(channels) != 1:
        return [_at(root, f"rss has {len(channels)} channel elements, not exactly one")]
    errors += _dc_prefix(root)
    return errors + _channel(channels[0])


def _dc_prefix(root: etree._Element) -> list[str]:
    # An undeclared dc: prefix is already a parse error; a misspelled namespace is not.
    return [_at(el, f"dc:{etree.QName(el).localname} is in {etree.QName(el).namespace}, "
                    f"not {DC_NS}")
            for el in root.iter() if el.prefix == "dc" and etree.QName(el).namespace != DC_NS]


def _channel(channel: etree._Element) -> list[str]:
    errors = []
    for name in ("title", "link", "description"):
        found = channel.findall(name)
        if len(found) != 1 or not (found[0].text or "").strip():
            errors.append(_at(channel, f"channel needs exactly one non-empty {name}"))
    errors += _http_urls(channel.findall("link"))
    if not channel.xpath("a:link[@rel='self']", namespaces=A):
        errors.append(_at(channel, 'channel has no atom:link rel="self"'))
    errors += _unknown(channel, RSS_CHANNEL)
    errors += _dates(channel)
    for item in channel.findall("item"):
        errors += _item(item)
    return errors


def _item(item: etree._Element) -> list[str]:
    errors = []
    if item.find("title") is None and item.find("description") is None:
        errors.append(_at(item, "item has neither title nor description"))
    guids = item.findall("guid")
    if len(guids) != 1:
        errors.append(_at(item, f"item has {len(guids)} guid elements, not exactly one"))
    for guid in guids:
        errors += _guid(guid)
    errors += _http_urls(item.findall("link"))
    errors += _unknown(item, RSS_ITEM)
    return errors + _dates(item)


def _guid(guid: etree._Element) -> list[str]:
    permalink = guid.get("isPermaLink", "true")
    if permalink not in ("true", "false"):
        return [_at(guid, f"guid isPermaLink={permalink!r}, not 'true' or 'false'")]
    if permalink == "true" and not _is_http_url(guid.text):
        return [_at(guid, f"guid {guid.text!r} is a permalink but not an absolute URL")]
    return []


def _is_http_url(text: str | None) -> bool:
    parts = urlsplit((text or "").strip())
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _http_urls(links: list[etree._Element]) -> list[str]:
    return [_at(link, f"link {link.text!r} is not an absolute http(s) URL")
            for link in links if not _is_http_url(link.text)]


def _unknown(el: etree._Element, allowed: frozenset[str]) -> list[str]:
    # Extensions live in namespaces (atom:link, dc:creator); RSS 2.0's own have none.
    return [_at(child, f"{el.tag} has <{child.tag}>, not an RSS 2.0 element")
            for child in el.iterchildren(tag=etree.Element)
            if etree.QName(child).namespace is None and child.tag not in allowed]


def _dates(el: etree._Element) -> list[str]:
    return [_at(d, f"{d.tag} {d.text!r} is not an RFC 822 date with a 4-digit year")
            for d in el.findall("pubDate") + el.findall("lastBuildDate")
            if not _is_rfc822(d.text or "")]


def _is_rfc822(text: str) -> bool:
    year = RFC822_YEAR.match(text.strip())
    if year is None or len(year.group(1)) != 4:
        return False
    try:
        parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return False
    return True


# --- OPML ----------------------------------------------------------------------------------


def opml_urls(xml: bytes) -> list[str]:
    """The feeds an OPML 2.0 list names (its outlines' xmlUrl), in document order."""
    root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    if root.tag != "opml" or root.get("version") != "2.0":
        raise ValueError(f'root is {root.tag} version={root.get("version")!r}, '
                         'not opml version="2.0"')
    return [str(url) for url in root.xpath("body//outline/@xmlUrl")]
