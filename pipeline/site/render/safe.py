"""The one gate stored text passes before any page, feed or JSON file shows it.

Stored text is untrusted and may hold anything (the sources clean what they take in, but a
store may be older, or come from another branch): XML forbids C0 controls (and
U+FFFE/FFFF), a lone surrogate cannot be encoded as UTF-8 at all (it crashed every
build), and bidi controls reorder the text around them on a page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pipeline.text.untrusted import clean_text

# XML's two non-characters, and the bidi embeddings, overrides, isolates and marks
# (U+202A–E, U+2066–9, U+200E/F, U+061C): harmless to store, not to show.
_UNSHOWN = re.compile("[\ufffe\uffff\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def clean(text: str) -> str:
    """`text` without control, bidi, private-use and non-characters, lone surrogates as
    U+FFFD (private-use ones are the build's placeholders)."""
    if text.isascii() and text.isprintable():  # nearly every title and name: no regex
        return text
    return clean_text(_UNSHOWN.sub("", text))


def clean_all(texts: Iterable[str]) -> list[str]:
    """`clean` over a list (authors, categories), checked by builtins first: nearly every
    name is printable ASCII, and a call a name cost a second of a build at 200,000 papers."""
    texts = list(texts)
    if all(map(str.isascii, texts)) and all(map(str.isprintable, texts)):
        return texts
    return [clean(t) for t in texts]


def clean_opt(text: str | None) -> str | None:
    return None if text is None else clean(text)
