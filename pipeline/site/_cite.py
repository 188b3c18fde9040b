"""How a paper is cited: a BibTeX entry in arXiv's own shape (what its "Export BibTeX
citation" gives), for the paper page's copy button.

Titles and names are untrusted: a brace that does not pair would end a field early and let
the rest of the text become BibTeX of its own, so an unbalanced text loses its braces.
"""

from __future__ import annotations

import re
import unicodedata

from pipeline.site._tex import plain_tex
from pipeline.site._views import Paper

# Words a citation key skips, as Google Scholar's and arXiv's keys do.
_SMALL = frozenset({"a", "an", "the", "on", "of", "for", "in", "to", "and", "with", "via",
                    "towards", "toward", "from", "by", "at", "is", "are", "do", "does"})


def bibtex(p: Paper) -> str:
    fields = [
        ("title", _braced(p.title)),
        ("author", " and ".join(_braced(a) for a in p.authors)),
        ("year", str(p.published.year)),
        ("eprint", p.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", _braced(p.primary)),
        ("url", f"https://arxiv.org/abs/{p.arxiv_id}"),
    ]
    if p.doi:
        fields.append(("doi", _braced(p.doi)))
    body = "".join(f"      {k}={{{v}}},\n" for k, v in fields)
    return f"@misc{{{key(p)},\n{body}}}"


def key(p: Paper) -> str:
    """``lastname2026word``: the first author's family name, the year, the title's first
    significant word, in ASCII letters and digits (names in other scripts give none)."""
    family = p.authors[0].split()[-1] if p.authors and p.authors[0].split() else ""
    words = [w for w in _ascii(plain_tex(p.title)).split() if w.lower() not in _SMALL]
    return (_ascii(family).replace(" ", "") + str(p.published.year) + "".join(words[:1])).lower()


def _ascii(text: str) -> str:
    """Letters and digits folded to ASCII (Å → A), everything else a space."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]+", " ", folded)


def _braced(text: str) -> str:
    """``text`` safe inside a BibTeX field's braces: its own braces kept only when they
    pair (BibTeX counts them all, escaped or not), and no line break."""
    text = " ".join(text.split())
    if "{" not in text and "}" not in text and "\\" not in text:
        return text  # most titles and names: nothing to pair
    # A backslash before a brace (or at the end, before ours) would escape it for parsers.
    text = re.sub(r"\\+(?=[{}]|$)", "", text).strip()
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            break
    return text if depth == 0 else text.replace("{", "").replace("}", "")
