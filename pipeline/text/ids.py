"""arXiv identifiers and category codes, checked against arXiv's own rules.

Ids and categories arrive from upstream (the export API, Hugging Face) and end up in
file names, URLs and page paths, so they are untrusted until they pass these checks.
The grammar is https://info.arxiv.org/help/arxiv_identifier.html:

- new style (since April 2007): ``YYMM.NNNN`` up to December 2014, ``YYMM.NNNNN`` from
  January 2015, e.g. ``0704.0001``, ``2606.19617``;
- old style (August 1991 to March 2007): ``archive[.SC]/YYMMNNN``, e.g.
  ``hep-th/9901001``, ``math.GT/0309136``, where the archive is one of arXiv's archives
  of that time and SC one of that archive's subject classes;

either with an optional version ``vN`` (N ≥ 1).
"""

from __future__ import annotations

import re

from pipeline.text.taxonomy import ALL_CATEGORIES

# ASCII digits only: \d also matches other scripts' digits, which int() accepts.
_NEW = re.compile(r"(?P<yy>\d\d)(?P<mm>\d\d)\.(?P<num>\d{4,5})(?:v[1-9]\d*)?", re.ASCII)
_OLD = re.compile(r"(?P<archive>[a-z-]+)(?:\.(?P<sc>[A-Z]{2}))?/"
                  r"(?P<yy>\d\d)(?P<mm>\d\d)(?P<num>\d{3})(?:v[1-9]\d*)?", re.ASCII)

# The archives that issued old-style ids: today's, plus those merged into others since.
_OLD_ARCHIVES = frozenset({
    "astro-ph", "cond-mat", "cs", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math",
    "math-ph", "nlin", "nucl-ex", "nucl-th", "physics", "q-bio", "quant-ph",
    "acc-phys", "adap-org", "alg-geom", "ao-sci", "atom-ph", "bayes-an", "chao-dyn",
    "chem-ph", "cmp-lg", "comp-gas", "dg-ga", "funct-an", "mtrl-th", "patt-sol", "plasm-ph",
    "q-alg", "solv-int", "supr-con",
})
# Categories no longer offered but still carried by old papers: the merged archives, and
# astro-ph and cond-mat from before they were divided into subject classes.
_LEGACY_CATEGORIES = frozenset({
    "astro-ph", "cond-mat", "acc-phys", "adap-org", "alg-geom", "ao-sci", "atom-ph",
    "bayes-an", "chao-dyn", "chem-ph", "cmp-lg", "comp-gas", "dg-ga", "funct-an", "mtrl-th",
    "patt-sol", "plasm-ph", "q-alg", "solv-int", "supr-con",
})


def _is_new_style(s: str) -> bool:
    m = _NEW.fullmatch(s)
    if m is None or not 1 <= int(m["mm"]) <= 12 or int(m["num"]) == 0:
        return False
    yymm = int(m["yy"] + m["mm"])
    return yymm >= 704 and len(m["num"]) == (4 if yymm < 1501 else 5)


def _is_old_style(s: str) -> bool:
    m = _OLD.fullmatch(s)
    if m is None or m["archive"] not in _OLD_ARCHIVES or int(m["num"]) == 0:
        return False
    if not 1 <= int(m["mm"]) <= 12:
        return False
    if m["sc"] is not None and f"{m['archive']}.{m['sc']}" not in ALL_CATEGORIES:
        return False
    yymm = int(m["yy"] + m["mm"])
    return yymm >= 9108 or yymm <= 703  # August 1991 to March 2007


def is_arxiv_id(s: str) -> bool:
    """True for a well-formed arXiv identifier, with or without its version.

    >>> [is_arxiv_id(s) for s in ("2606.19617v2", "0704.0001", "math.GT/0309136", "1501.0001")]
    [True, True, True, False]
    """
    return isinstance(s, str) and (_is_new_style(s) or _is_old_style(s))


def split_version(s: str) -> tuple[str, int] | None:
    """An identifier with its version as (id, version); None for anything else: no
    version, `v0`, `v01`, a version twice (`…v1v3`), not an arXiv id.

    >>> [split_version(s) for s in ("2606.19617v2", "2606.19617", "2606.19617v1v3")]
    [('2606.19617', 2), None, None]
    """
    if not is_arxiv_id(s):
        return None
    base, sep, number = s.rpartition("v")
    return (base, int(number)) if sep and number.isdigit() else None


def is_category(s: str) -> bool:
    """True for a category code of arXiv's taxonomy (cs.AI, hep-th, math.GT, …), the legacy
    ones that old papers still carry included (cmp-lg, astro-ph).

    Upstream also lists ACM or MSC classes (I.2.7, 68T05) among a paper's categories;
    those are not arXiv categories.
    """
    return isinstance(s, str) and (s in ALL_CATEGORIES or s in _LEGACY_CATEGORIES)
