"""People's names as topics and follows match them: normalised tokens (case, accents and
punctuation ignored), and whether two names are one person, initials allowed or not.
Shared by topic matching and the arXiv source's author look-ups."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=1 << 20)
def name_tokens(name: str) -> tuple[str, ...]:
    """'Kaiming  HE' → ('kaiming', 'he'); 'José-María Núñez' → ('jose', 'maria', 'nunez')."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", name)
                     if not unicodedata.combining(c)).casefold()
    return tuple(re.findall(r"[^\W_]+", folded))


def same_person(wanted: tuple[str, ...], seen: tuple[str, ...], initials: bool) -> bool:
    if wanted == seen:
        return True
    if not (initials and len(wanted) == len(seen) >= 2 and wanted[-1] == seen[-1]):
        return False
    return all(a == b or (len(a) == 1 and b.startswith(a)) or (len(b) == 1 and a.startswith(b))
               for a, b in zip(wanted[:-1], seen[:-1], strict=True))
