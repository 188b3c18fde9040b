"""What changed between two texts, word by word and in short: for the feeds and for the
change-note prompt."""

from __future__ import annotations

import difflib


def changes(old: str, new: str, *, most: int = 6, words: int = 25) -> list[tuple[str, str]]:
    """Up to `most` (removed, added) runs of plain text, each side cut to `words` words."""
    a, b = old.split(), new.split()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            out.append((_cut(a[i1:i2], words), _cut(b[j1:j2], words)))
    return out[:most]


def _cut(tokens: list[str], words: int) -> str:
    return " ".join(tokens[:words]) + (" …" if len(tokens) > words else "")
