"""One page of the arXiv export API (Atom 1.0), parsed strictly into `arxiv.Result`s.

Our own parser rather than the arxiv package's private one: its parser recovers from
broken XML (so a truncated page would silently read as fewer entries), and is not part
of the package's public API. The Result type is public, and what the rest of the
source normalises.

Field by field this reads what the package reads (arXiv's user manual, "Details of Atom
Results Returned"): the opensearch totalResults, and per entry id, updated, published,
title, authors, summary, comment, journal_ref, doi, categories and primary_category.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import arxiv
from lxml import etree

from pipeline.sources._untrusted import Malformed, too_long, xml_root

log = logging.getLogger(__name__)

_NS = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom",
       "os": "http://a9.com/-/spec/opensearch/1.1/"}


class Unreadable(Exception):
    """The page is not a complete Atom feed, or an entry has a date we cannot read."""


@dataclass
class Page:
    total_results: int
    results: list[arxiv.Result] = field(default_factory=list)
    set_aside: list[tuple[str, str]] = field(default_factory=list)  # (entry id, why)

    @property
    def entries(self) -> int:
        """Entries on the page, kept or set aside: how far it moves the offset."""
        return len(self.results) + len(self.set_aside)


def parse_page(body: bytes) -> Page:
    """The page's entries, read through the gate (`_untrusted`); Unreadable when the XML
    is truncated or malformed (never a partial page) or an entry's date is not RFC 3339,
    NotExpected when it is no Atom feed (an HTML page). An entry with a field over
    MAX_FIELD_CHARS is set aside, the rest kept."""
    try:
        root = xml_root(body, f"{{{_NS['a']}}}feed", "an Atom feed")
    except Malformed as exc:
        raise Unreadable(str(exc)) from None
    page = Page(_count(root.findtext("os:totalResults", None, _NS)))
    for entry in root.iterfind("a:entry", _NS):
        if oversized := too_long(entry):
            page.set_aside.append((_entry_id(entry), oversized))
        elif (result := _result(entry)) is not None:
            page.results.append(result)
    return page


def _entry_id(entry: Any) -> str:
    """The short id (e.g. 2606.00005v1) as the ledger names entries, cut to a sane length."""
    return (entry.findtext("a:id", "", _NS) or "").strip().rsplit("/abs/", 1)[-1][:80]


def api_error(content: bytes) -> str | None:
    """arXiv reports errors as an Atom entry titled Error whose id is under /api/errors."""
    if b"/api/errors" not in content:
        return None
    try:
        root = etree.fromstring(content, etree.XMLParser(recover=True, no_network=True))
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    for entry in root.iterfind("a:entry", _NS):
        if "/api/errors" in (entry.findtext("a:id", "", _NS) or ""):
            return (entry.findtext("a:summary", "", _NS) or "error").strip()
    return None


def _count(text: str | None) -> int:
    try:
        return int((text or "0").strip())
    except ValueError:
        return 0


def _time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise Unreadable(f"unreadable entry (date {text.strip()[:40]!r})") from None
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)


def _result(entry: Any) -> arxiv.Result | None:
    """An entry as the arxiv package's Result; None (logged) without an id or its dates."""
    entry_id = entry.findtext("a:id", None, _NS)
    if not entry_id:
        log.warning("arxiv: skipping an entry without <id>")
        return None
    updated = _time(entry.findtext("a:updated", None, _NS))
    published = _time(entry.findtext("a:published", None, _NS))
    if updated is None or published is None:
        log.warning("arxiv: skipping %s: no <%s>", entry_id,
                    "updated" if updated is None else "published")
        return None
    primary = entry.find("arxiv:primary_category", _NS)
    return arxiv.Result(
        entry_id=entry_id, updated=updated, published=published,
        title=re.sub(r"\s+", " ", entry.findtext("a:title", "", _NS) or ""),
        authors=[arxiv.Result.Author(a.findtext("a:name", "", _NS) or "")
                 for a in entry.iterfind("a:author", _NS)],
        summary=entry.findtext("a:summary", "", _NS) or "",
        comment=entry.findtext("arxiv:comment", None, _NS),
        journal_ref=entry.findtext("arxiv:journal_ref", None, _NS),
        doi=entry.findtext("arxiv:doi", None, _NS),
        primary_category=(primary.get("term") if primary is not None else None) or "",
        categories=[t for c in entry.iterfind("a:category", _NS)
                    if (t := c.get("term")) is not None],
    )
