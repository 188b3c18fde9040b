"""Keywords written as regular expressions, and the plain phrases they most likely meant.

Keywords are plain phrases (pipeline.text.phrases): `prompt.*injection` looks for those
characters as written and finds nothing. A keyword looks like a pattern when it holds a
backslash escape (`\\b`), `|`, a class `[..]`, a group `(..)`, `?`, `*`, `^`, `$`, a
repeat `{n}`, or `.` before a quantifier (`.*`). `+` and `.` alone are text (`C++`,
`GPT-4.5`), matched as written.

The plain forms read the pattern as a person who wrote it meant it: `.*` joins two
words, `[cs]` and `a|b` are alternatives, a group is optional (`(un)safe`: "unsafe",
"safe"), a trailing `?` keeps its letter (`LiDAR?`: "LiDAR") except a plural's `s`
(phrases match plurals anyway), `\\b` and anchors go.
"""

from __future__ import annotations

import itertools
import re

_LOOKS_LIKE_PATTERN = re.compile(r"\\.|[|\[\]()?*^$]|\{\d+(?:,\d*)?\}|\.[+?{]")
_MOST_FORMS = 8  # alternatives beyond this many are not a suggestion but a vocabulary
_CLASS_MOST = 5  # a class of more letters ([a-z]) suggests none of them
_DEEPEST = 8  # groups nested deeper are no one's phrase (and would recurse without bound)


def looks_like_pattern(keyword: str) -> bool:
    return bool(_LOOKS_LIKE_PATTERN.search(keyword))


def plain_forms(keyword: str) -> tuple[str, ...]:
    """The plain phrases a pattern-looking keyword most likely meant, in its order; () when
    it looks plain or nothing readable is left."""
    if not looks_like_pattern(keyword) or keyword.count("(") > _DEEPEST:
        return ()
    forms, _ = _alternatives(keyword, 0, nested=False)
    out: dict[str, None] = {}
    for form in forms:
        plain = " ".join(re.sub(r"[()\[\]]", " ", form).split())  # unbalanced: dropped
        if re.search(r"\w", plain):
            out.setdefault(plain)
    return tuple(out)[:_MOST_FORMS]


def _alternatives(text: str, at: int, nested: bool) -> tuple[list[str], int]:
    """The forms of `a|b|…` from `at` to the end or (`nested`) the `)` that closes it (its
    index)."""
    forms: list[str] = []
    while True:
        branch, at = _sequence(text, at, nested)
        forms += branch
        if at < len(text) and text[at] == "|":
            at += 1
            continue
        return forms[:_MOST_FORMS * 4], at


def _sequence(text: str, at: int, nested: bool) -> tuple[list[str], int]:
    forms = [""]
    while at < len(text) and text[at] != "|" and not (nested and text[at] == ")"):
        atom, at, optional_as_group = _atom(text, at)
        quantifier = text[at] if at < len(text) and text[at] in "?*+{" else ""
        if quantifier == "{":
            close = text.find("}", at)
            at = close + 1 if close > 0 else at + 1
        elif quantifier:
            at += 1
        if quantifier == "?" or optional_as_group:
            word_ends = at >= len(text) or not (text[at].isalnum() or text[at] == "_")
            if quantifier == "?" and len(atom) == 1 and len(atom[0]) == 1 and word_ends:
                atom = [""] if atom[0].lower() == "s" else atom  # LiDAR? → LiDAR; robots? → robot
            else:
                atom = [*atom, ""]
        forms = ["".join(p) for p in itertools.product(forms, atom)][:_MOST_FORMS * 4]
    return forms, at


def _atom(text: str, at: int) -> tuple[list[str], int, bool]:
    """(its forms, the index after it, whether it is a group a person meant as optional)."""
    ch = text[at]
    if ch == "\\" and at + 1 < len(text):
        nxt = text[at + 1]
        forms = [" "] if nxt in "sW" else [""] if nxt.isalnum() else [nxt]
        return forms, at + 2, False
    if ch == "[":
        close = text.find("]", at + 1)
        if close > at + 1:
            members = text[at + 1:close]
            plain = not (members.startswith("^") or "-" in members.strip("-")
                         or "\\" in members or len(members) > _CLASS_MOST)
            return (list(dict.fromkeys(members)) if plain else [""]), close + 1, False
    if ch == "(":
        inner = at + 1
        if text.startswith("?:", inner):
            inner += 2
        forms, end = _alternatives(text, inner, nested=True)
        if end < len(text):  # its `)`; a group with no alternatives reads as optional
            return forms, end + 1, "|" not in text[inner:end]
    if ch == ".":
        return [" "], at + 1, False
    if ch in "^$":
        return [""], at + 1, False
    return [ch], at + 1, False
