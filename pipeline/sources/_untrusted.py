"""The one gate every source's upstream body goes through (Atom, OAI-PMH, RSS, JSON), so a
new source gets it by using it, not by remembering what the others learned.

- A response is read up to outbound.SOURCE_REPLY_BYTES and no further (the outbound
  layer's cap): over it, that request fails at once, never retried (it would be read whole
  again on every try).
- C0 control characters, raw or as character references, are dropped before parsing:
  XML 1.0 forbids them, so one in one record would make the parser refuse the whole page,
  and every later run that reads it.
- XML is parsed strictly (a truncated body is never read as a shorter page), entities left
  unresolved, nothing fetched; lxml's limit of 10 MB per text node is lifted (huge_tree),
  since the response bound already bounds memory, and one record's huge node must not
  cost the page. An HTML page or another document served as 200 is said to be one.
- A record with a field over MAX_FIELD_CHARS is set aside by its source (`too_long`
  says why) and the rest of its page kept.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lxml import etree

from pipeline.text.untrusted import clean_text

# The longest text one field of a record may hold: arXiv caps an abstract at 1,920
# characters and HF's summaries are shorter; a field far past that is no paper's.
MAX_FIELD_CHARS = 100_000

# XML 1.0 forbids C0 controls but tab, newline and CR. In UTF-8 these bytes never occur
# inside another character, so dropping them is safe; JSON forbids them raw too.
_C0 = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
_C0_REF = re.compile(rb"&#(?:0*(?:[0-8]|1[124-9]|2\d|3[01])|[xX]0*(?:[0-8bcefBCEF]"
                     rb"|1[\da-fA-F]));")
_HTML = re.compile(rb"\s*(?:<\?xml[^>]*>\s*)?<(?:!doctype\s+html|html)\b", re.IGNORECASE)
_TITLE = re.compile(rb"<title[^>]*>([^<]{0,200})", re.IGNORECASE)


class Malformed(Exception):
    """The body is not complete, well-formed XML or JSON (cut off in transit, or broken)."""


class NotExpected(Exception):
    """The body is a well-formed document of another kind: an HTML page, another root."""


def without_c0(body: bytes) -> bytes:
    """The body without C0 controls but tab, newline and CR, raw or as references."""
    body = body.translate(None, _C0)  # ~7× faster than a regex on a page
    return _C0_REF.sub(b"", body) if b"&#" in body else body


def xml_root(body: bytes, tag: str, kind: str) -> Any:
    """The root of an XML body whose root element is `tag` (Clark notation); Malformed when
    it is truncated or broken, NotExpected when it is an HTML page or another document
    (`kind` names the expected one in the message)."""
    _refuse_html(body, kind)
    try:
        root = etree.fromstring(without_c0(body), etree.XMLParser(
            resolve_entities=False, no_network=True, huge_tree=True))
    except etree.XMLSyntaxError as exc:
        raise Malformed(f"truncated or malformed XML ({exc.msg})") from None
    if root.tag != tag:
        raise NotExpected(f"not {kind} (root element {str(root.tag)[:80]!r})")
    return root


def json_value(body: bytes, kind: str) -> Any:
    """A JSON body; raw controls in strings are let through (the fields' own cleaning
    drops them). Malformed, or NotExpected for an HTML page."""
    _refuse_html(body, kind)
    try:
        return json.loads(without_c0(body), strict=False)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"truncated or malformed JSON ({str(exc)[:120]})") from None


def too_long(record: Any) -> str | None:
    """Why a record (an XML element, or a JSON value) is set aside: a text, attribute or
    string of it over MAX_FIELD_CHARS; None when every field is within it."""
    if isinstance(record, etree._Element):
        for node in record.iter():
            texts = [("text", node.text), ("tail", node.tail), *node.attrib.items()]
            for name, text in texts:
                if text is not None and len(text) > MAX_FIELD_CHARS:
                    where = etree.QName(node).localname if isinstance(node.tag, str) else "?"
                    field = where if name in ("text", "tail") else f"{where}@{name}"
                    return f"{field} of {len(text):,} characters, over {MAX_FIELD_CHARS:,}"
        return None
    stack = [("item", record)]
    while stack:
        name, value = stack.pop()
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            return f"{name} of {len(value):,} characters, over {MAX_FIELD_CHARS:,}"
        if isinstance(value, dict):
            stack.extend((str(k)[:40], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((name, v) for v in value)
    return None


def _refuse_html(body: bytes, kind: str) -> None:
    if _HTML.match(body[:1024]):
        title = _TITLE.search(body[:8192])
        text = " ".join(clean_text(title[1].decode("utf-8", "replace")).split()) if title else ""
        said = f": {text[:100]!r}" if text else ""
        raise NotExpected(f"an HTML page, not {kind}{said}")
