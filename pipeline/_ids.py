"""What an arXiv id and a category code may look like: anything else never becomes a path.

Shared by the sources (which refuse such entries) and the site (which shows them as text
but makes no page or link of them).
"""

from __future__ import annotations

import re

from pipeline._taxonomy import ALL_CATEGORIES

# New style since 2007-04: YYMM.NNNN (to 2014-12) or YYMM.NNNNN, optionally vN.
_NEW = r"[0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5}"
# Old style: archive[.SUBJ]/YYMMNNN, e.g. hep-th/9901001 or math.GT/0309136.
_OLD = r"[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/[0-9]{2}(?:0[1-9]|1[0-2])[0-9]{3}"
_ARXIV_ID = re.compile(rf"(?:{_NEW}|{_OLD})(?:v[1-9][0-9]*)?")


def is_arxiv_id(s: str) -> bool:
    """Whether `s` is an arXiv identifier, new style (`2401.12345`, `0704.0001v2`) or old
    style (`hep-th/9901001`, `math.GT/0309136v1`). Such an id holds no `..`, no empty
    part and at most one `/`, so it is safe as a path."""
    return isinstance(s, str) and _ARXIV_ID.fullmatch(s) is not None


def is_category(s: str) -> bool:
    """Whether `s` is a category code of arXiv's taxonomy (`cs.LG`, `hep-th`, …)."""
    return isinstance(s, str) and s in ALL_CATEGORIES
