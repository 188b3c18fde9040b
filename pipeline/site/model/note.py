"""A revision's change note (修订说明) made by rule, so every fork has one without a model:
what a reader wants to know of a new version before reading its diff.

The note is a list of parts, each a catalogue key and its values (i18n formats them):
withdrawn; accepted at a venue; title changed; sentences of the abstract added, removed
or rewritten; numbers that changed ("76.3 → 78.1"); pages, figures and tables counted
in the comment; code released.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from pipeline.text.venue import venue

Part = tuple[str, dict[str, object]]  # (catalogue key, its values)
MAX_NUMBERS = 4  # number changes named; more read as "the results changed", in the diff
REWRITTEN = 0.5  # a removed and an added sentence this alike are one sentence rewritten

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
# A number as results are written: 76.3, 1,024, 78.1%, 2.3x, 7B (a percent, a speed-up, a size)
_NUMBER = re.compile(r"^[(\[]?[-+]?\d+(?:[.,]\d+)*[%x×kKMB]?[)\],;:.]*$")
_COUNTS = {"pages": re.compile(r"(\d+)\s*(?:pages|pp\b)", re.IGNORECASE),
           "figures": re.compile(r"(\d+)\s*fig(?:ure)?s?\b", re.IGNORECASE),
           "tables": re.compile(r"(\d+)\s*tables?\b", re.IGNORECASE)}
_CODE = re.compile(r"https?://(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co)/"
                   r"|\bcode (?:is |are )?(?:now )?(?:publicly )?(?:available|released)\b",
                   re.IGNORECASE)
# arXiv's withdrawal notice and how authors word it; not "funds withdrawn from …"
_WITHDRAWN = re.compile(r"\b(?:(?:has|have) been withdrawn|withdrawn by the authors?|withdraw"
                        r" (?:this|the) (?:paper|submission|manuscript))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Side:
    """One version as the note compares it: text as read (TeX as Unicode)."""

    title: str
    abstract: str
    comment: str | None = None
    journal_ref: str | None = None


def note(old: Side, new: Side, *, meta: bool = True) -> list[Part]:
    """The parts of the note from `old` to `new`; `meta`: whether the comment and
    journal-ref of both sides are known (else they say nothing)."""
    parts: list[Part] = []
    if meta and _said(_WITHDRAWN, new) and not _said(_WITHDRAWN, old):
        parts.append(("note_withdrawn", {}))
    if meta:
        was = venue(old.comment, old.journal_ref, None)
        now = venue(new.comment, new.journal_ref, None)
        if now and (not was or was.short != now.short):
            parts.append(("note_venue", {"venue": now.short}))
    if old.title.split() != new.title.split():
        parts.append(("note_title", {}))
    parts += _sentences(old.abstract, new.abstract)
    numbers = _numbers(f"{old.title} {old.abstract}", f"{new.title} {new.abstract}")
    if numbers:
        parts.append(("note_numbers", {"changes": numbers}))
    if meta:
        for kind, pattern in _COUNTS.items():
            a, b = _count(pattern, old.comment), _count(pattern, new.comment)
            if a is not None and b is not None and a != b:
                parts.append((f"note_{kind}", {"old": a, "new": b}))
        if _said(_CODE, new) and not _said(_CODE, old):
            parts.append(("note_code", {}))
    return parts


def _said(pattern: re.Pattern[str], side: Side) -> bool:
    return any(pattern.search(t or "") for t in (side.comment, side.abstract))


def _count(pattern: re.Pattern[str], comment: str | None) -> int | None:
    m = pattern.search(comment or "")
    return int(m[1]) if m else None


def _sentences(old: str, new: str) -> list[Part]:
    """Sentences of the abstract added, removed and rewritten (a removed one and an added
    one at least REWRITTEN alike, in order), each counted once."""
    a = [" ".join(s.split()) for s in _SENTENCE.split(old.strip()) if s.strip()]
    b = [" ".join(s.split()) for s in _SENTENCE.split(new.strip()) if s.strip()]
    removed = [s for s in a if s not in b]
    added = [s for s in b if s not in a]
    rewritten = 0
    for s in list(removed):
        alike = next((t for t in added if difflib.SequenceMatcher(
            None, s.split(), t.split(), autojunk=False).ratio() >= REWRITTEN), None)
        if alike is not None:
            rewritten += 1
            removed.remove(s)
            added.remove(alike)
    counts = {"added": len(added), "removed": len(removed), "rewritten": rewritten}
    return [(f"note_sentences_{k}", {"n": n}) for k, n in counts.items() if n]


def _numbers(old: str, new: str) -> list[str]:
    """"76.3 → 78.1" for each number the new text puts where the old had another, in
    order, up to MAX_NUMBERS."""
    a, b = old.split(), new.split()
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        was = [_bare(w) for w in a[i1:i2] if _NUMBER.match(w)]
        now = [_bare(w) for w in b[j1:j2] if _NUMBER.match(w)]
        out += [f"{x} → {y}" for x, y in zip(was, now, strict=False) if x != y]
    return out[:MAX_NUMBERS]


def _bare(word: str) -> str:
    return word.strip("()[],;:.")


def note_text(parts: list[Part], strings: dict[str, str]) -> str:
    """The note in the site's language: "新增 2 句；数字 76.3 → 78.1"."""
    def one(key: str, values: dict[str, object]) -> str:
        changes = values.get("changes")
        if isinstance(changes, list):
            values = {**values, "changes": strings["note_list_sep"].join(changes)}
        return strings[key].format(**values)

    return strings["note_sep"].join(one(k, v) for k, v in parts)
