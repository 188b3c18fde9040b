"""One LaTeX formula as sanitised MathML (`formula`) or as readable Unicode (`formula_text`).

Formulas are untrusted: each one's MathML is rebuilt from an allow-list, so nothing the
converter passes through (``\\href``, raw ``<`` in ``\\text``) can reach the page.
"""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from functools import lru_cache

from latex2mathml.converter import convert
from markupsafe import Markup, escape
from pylatexenc.latex2text import LatexNodes2Text

MAX_FORMULA_CHARS = 2000  # longer "formulas" are almost always a stray dollar, not math
MAX_BRACE_DEPTH = 64  # deeper nesting risks recursion limits in the converter

# The one standard LaTeX operator name latex2mathml does not know (it echoes "\\arg" back).
_ARG = re.compile(r"\\arg(?![A-Za-z])")
# What latex2mathml leaves in a token element for a command it does not know.
_ECHOED_COMMAND = re.compile(r"\\[A-Za-z]+\*?")

_MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot",
    "mover", "munder", "munderover", "mtext", "mspace", "mtable", "mtr", "mtd", "mstyle",
    "mpadded", "mphantom", "menclose", "semantics", "annotation",
})
# Presentation-only attributes; no URL, colour, class, style or event handler gets through.
# xmlns is re-added on <math>, mathvariant handled separately below.
_ATTRS = frozenset({
    "display", "stretchy", "fence", "separator", "lspace", "rspace", "accent", "accentunder",
    "columnalign", "rowspacing", "columnspacing", "displaystyle", "scriptlevel", "width",
    "height", "depth", "linethickness", "notation", "minsize", "maxsize", "movablelimits",
    "symmetric", "form",
})
_TOKEN_TAGS = frozenset({"mi", "mn", "mo"})
# mathvariant -> Unicode character-name prefix; MathML Core only knows "normal" on <mi>,
# so other variants become Mathematical Alphanumeric Symbols where Unicode has one.
_VARIANT_PREFIX = {
    "bold": "BOLD",
    "italic": "ITALIC",
    "bold-italic": "BOLD ITALIC",
    "script": "SCRIPT",
    "bold-script": "BOLD SCRIPT",
    "fraktur": "FRAKTUR",
    "bold-fraktur": "BOLD FRAKTUR",
    "double-struck": "DOUBLE-STRUCK",
    "sans-serif": "SANS-SERIF",
    "bold-sans-serif": "SANS-SERIF BOLD",
    "sans-serif-italic": "SANS-SERIF ITALIC",
    "sans-serif-bold-italic": "SANS-SERIF BOLD ITALIC",
    "monospace": "MONOSPACE",
}


class _Rejected(Exception):
    """The converter's output holds something outside the allow-list."""


@lru_cache(maxsize=4096)  # the same symbols ($n$, $\epsilon$) recur across abstracts
def formula(tex: str, *, display: bool = False) -> Markup | None:
    """Sanitised MathML for one formula, or None when it cannot be converted cleanly."""
    if len(tex) > MAX_FORMULA_CHARS or not balanced(tex):
        return None
    try:
        tex = _ARG.sub(r"\\operatorname{arg}", tex)
        raw = convert(tex, display="block" if display else "inline")
        return Markup(_serialise(ET.fromstring(raw)))
    # The converter raises many exception types on malformed input, a raw "<" or "&" it
    # passes through makes the XML unparseable, and _serialise raises _Rejected: each
    # of them means "fall back to the source".
    except Exception:
        return None


def balanced(tex: str) -> bool:
    """Every "{" of ``tex`` closed, none closed before it opens (escaped braces aside),
    nesting at most MAX_BRACE_DEPTH deep."""
    # latex2mathml silently closes an unbalanced "{", rendering something the author
    # did not write; reject it here instead.
    if "{" not in tex and "}" not in tex:  # most texts: found at memchr's speed
        return True
    depth = 0
    for m in re.finditer(r"\\.|[{}]", tex, re.DOTALL):
        token = m[0]
        if token == "{":
            depth += 1
            if depth > MAX_BRACE_DEPTH:
                return False
        elif token == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _serialise(el: ET.Element) -> str:
    ns, _, tag = el.tag.rpartition("}")
    if ns != "{" + _MATHML_NS or tag not in _TAGS:
        raise _Rejected(el.tag)
    text = el.text or ""
    if tag in _TOKEN_TAGS and _ECHOED_COMMAND.fullmatch(text):
        raise _Rejected(text)  # an unknown command the converter echoed back, e.g. \url
    attrs = {k: v for k, v in el.attrib.items() if k in _ATTRS}
    variant = el.get("mathvariant")
    if tag == "math":
        attrs["xmlns"] = _MATHML_NS
    elif variant == "normal" and tag == "mi":
        attrs["mathvariant"] = "normal"
    elif variant and tag in _TOKEN_TAGS:
        text = "".join(_styled(ch, variant) for ch in text)
    # Plain str throughout: adding str to Markup would escape the already-built markup.
    parts = [f"<{tag}"]
    parts += [f' {k}="{_esc(v)}"' for k, v in sorted(attrs.items())]
    parts += [">", _esc(text)]
    parts += [_serialise(child) + _esc(child.tail or "") for child in el]
    parts.append(f"</{tag}>")
    return "".join(parts)


def _esc(s: str) -> str:
    return str(escape(s))


@lru_cache(maxsize=1024)
def _styled(ch: str, variant: str) -> str:
    """``ch`` as its Mathematical Alphanumeric Symbol for ``variant``, else ``ch`` itself."""
    prefix = _VARIANT_PREFIX.get(variant)
    name = unicodedata.name(ch, "")
    if prefix is None or not name:
        return ch
    # "LATIN CAPITAL LETTER R" -> "CAPITAL R"; "GREEK SMALL LETTER THETA" -> "SMALL THETA"
    short = re.sub(r"^(?:LATIN|GREEK) (CAPITAL|SMALL) LETTER ", r"\1 ", name)
    # Some letters live in Letterlike Symbols without the MATHEMATICAL prefix (ℝ, ℒ).
    for candidate in (f"MATHEMATICAL {prefix} {short}", f"{prefix} {short}"):
        try:
            return unicodedata.lookup(candidate)
        except KeyError:
            continue
    return ch


_TO_TEXT = LatexNodes2Text(math_mode="text")
# An unescaped % starts a TeX comment: pylatexenc would drop the rest of the formula.
_PERCENT = re.compile(r"(?<!\\)%")
# "\overlineδ": TeX reads the command, then δ as its argument; pylatexenc refuses it.
_GLUED = re.compile(r"(\\[A-Za-z]+)([^\x00-\x7f])")


@lru_cache(maxsize=4096)
def formula_text(tex: str) -> str | None:
    """One formula as readable Unicode (``\\alpha\\in[0,\\infty]`` → ``α∈[0,∞]``), for readers
    that show no MathML; None when pylatexenc cannot read it."""
    if len(tex) > MAX_FORMULA_CHARS or not balanced(tex):
        return None
    try:
        tex = _GLUED.sub(r"\1{\2}", _PERCENT.sub(r"\\%", tex))
        text = _TO_TEXT.latex_to_text(tex).strip()
    # pylatexenc raises IndexError and others on a command missing its arguments.
    except Exception:
        return None
    return text or None
