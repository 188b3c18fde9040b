"""arXiv's plain text with LaTeX in it, as a reader should see it: escaped HTML with MathML
and a few inline elements (`render_tex`), or plain Unicode for feeds and search (`plain_tex`).

Authors write abstracts, titles and comments in LaTeX's text mode as well as in math mode:
``\\textbf{…}``, ``\\emph``, ``\\url``, ``\\cite``, ``\\%``, ``--``, TeX quotes,
``\\begin{equation*}``. Each of these becomes what TeX would print. The text is untrusted:
everything is escaped, only a fixed set of elements is made here, and a link is made only
for an ``http(s)`` URL. A model's text (a digest) links only the URLs its paper links
(`links_in`): a prompt injection in an abstract must not hide a link of its choosing behind
words such as a repository's name. A command we do not know stays as its source, so nothing
the author wrote silently disappears.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Collection

from markupsafe import Markup, escape

from pipeline.site.render.mathml import balanced, formula, formula_text

MAX_FORMULAS = 200  # per text; bounds the work one hostile abstract can cause
# Deeper nesting of text commands (\textbf{\emph{…}}) is rendered as its source: bounds the
# recursion a hostile text can cause.
MAX_DEPTH = 4
# The longest argument a text command may take; a "{" left open ends the scan here, so
# ten thousand open braces cost linear time.
MAX_ARGUMENT_CHARS = 1000

# One pass over the text. Inline `$` follows pandoc's rule (no space just inside the
# dollars, no digit right after the closing one) so "$5 and $10" stays prose. No body can
# run past its own kind of delimiter, so a failed opener scans only to the next one and
# the pass stays linear even on a text of ten thousand unclosed openers.
# What every token starts with: _TOKEN is tried only where one of these is (_starts).
_STARTS = ("\\", "$", "~", "{", "--", "``", "''", "http")
_TOKEN = re.compile(
    "(?=" + "|".join(map(re.escape, _STARTS)) + ")"  # so it cannot match anywhere else
    r"""
    (?:
      \\(?P<special>[$%&_\#{}])
    | \$\$(?P<display>(?:\\.|[^\\$])+)\$\$
    | \$(?!\s)(?P<inline>(?:\\.|[^\\$])+)(?<!\s)\$(?!\d)
    | \\\((?P<paren>(?:\\[^()]|[^\\])+)\\\)
    | \\\[(?P<bracket>(?:\\[^\[\]]|[^\\])+)\\\]
    | \\begin\{(?P<env>equation|align|gather|multline|eqnarray|displaymath)(?P<star>\*?)\}
      (?P<body>(?:[^\\]|\\(?!begin\{|end\{))+)\\end\{(?P=env)(?P=star)\}
    | \\?(?P<url>https?://[^\s<>"'`{}\\]*[^\s<>"'`{}\\.,;:!?)\]])
    | \{\\(?P<switch>it|em|sl|bf|tt|sc|rm|sf|itshape|bfseries|ttfamily|scshape)(?![A-Za-z])
      \s*(?P<switched>[^{}]{0,300})\}
    | \\(?P<command>[A-Za-z]+)
    | (?:``|'')(?P<quoted>[^`'"]{1,300}?)(?:''|")
    | (?P<dash>(?<=\S)(?<![-<!])---?(?![->\s])|(?<=\s)---?(?=\s))
    | (?P<tie>~(?=\\))
    )
    """,
    re.VERBOSE,
)

# Text commands whose one argument is shown, wrapped in an element (or in none).
_WRAP = {
    "textbf": "b", "textit": "i", "textsl": "i", "emph": "em", "texttt": "code",
    "underline": "u", "textsc": "span", "textrm": "", "textsf": "", "textup": "",
    "textmd": "", "textnormal": "", "mbox": "", "text": "", "num": "", "textcolor": "",
}
# Commands whose arguments are references a reader cannot follow: dropped with the space
# or tie before them ("as in \cite{x}." reads "as in.").
_DROP = frozenset({"cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear",
                   "ref", "eqref", "label"})
# Text-mode symbols TeX spells as commands, some with an empty "{}" after them.
_SYMBOLS = {
    "textasciicircum": "^", "textasciitilde": "~", "textbackslash": "\\", "textendash": "–",
    "textemdash": "—", "textbar": "|", "textless": "<", "textgreater": ">", "ldots": "…",
    "dots": "…", "textquotedbl": '"', "LaTeX": "LaTeX", "TeX": "TeX", "S": "§", "P": "¶",
    "copyright": "©", "textregistered": "®", "texttrademark": "™", "textdegree": "°",
    # The abbreviations nearly every vision paper's preamble defines.
    "eg": "e.g.", "ie": "i.e.", "etal": "et al.", "etc": "etc.", "wrt": "w.r.t.", "vs": "vs.",
    "cf": "cf.", "aka": "a.k.a.",
}
# {\it …}: the old font switches, as the element their command form makes.
_SWITCH = {"it": "i", "em": "em", "sl": "i", "bf": "b", "tt": "code", "sc": "span", "rm": "",
           "sf": "", "itshape": "i", "bfseries": "b", "ttfamily": "code", "scshape": "span"}
_ARITY = {**dict.fromkeys(_WRAP, 1), **dict.fromkeys(_DROP, 1), "textcolor": 2, "url": 1,
          "href": 2, "footnote": 1, "qty": 2, "SI": 2, "qtyproduct": 2, "SIrange": 3}
_UNITS = {"percent": "%", "degree": "°", "celsius": "°C", "micro": "µ", "ohm": "Ω"}
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef]")  # no spaces between words
_BRACE = re.compile(r"\\.|[{}]", re.DOTALL)
_DASHES = {"--": "–", "---": "—"}
_URL = re.compile(r"https?://[^\s<>\"'`{}\\]+")
# A URL as _TOKEN finds it in text (the sentence's closing punctuation left out), or as the
# argument of \url and \href.
_LINKED = re.compile(r"https?://[^\s<>\"'`{}\\]*[^\s<>\"'`{}\\.,;:!?)\]]")

Links = Collection[str] | None  # the URLs a text may link; None: any http(s) URL


def render_tex(text: str, links: Links = None) -> Markup:
    """``text`` as escaped HTML: formulas as MathML, text commands as their elements; a URL
    not in ``links`` (when given) is shown as its address, never as a link."""
    return Markup("".join(_render(text, html=True, math=True, depth=0, links=links)))


def links_in(*texts: str | None) -> frozenset[str]:
    """The URLs these texts (a paper's abstract and comment) may link: what a model writes
    about the paper may link these and no others."""
    return frozenset(url for text in texts if text for url in _LINKED.findall(text))


def plain_tex(text: str, *, math: bool = True) -> str:
    """``text`` as readable Unicode (``\\textbf{Fast} $\\alpha\\le 1$`` → ``Fast α≤1``), for
    feed readers and search; not escaped. Without ``math`` formulas stay as written: the
    search index's words need no Unicode, and pylatexenc takes ~0.25 ms a formula."""
    return "".join(_render(text, html=False, math=math, depth=0))


def excerpt(text: str, chars: int) -> str:
    """The start of ``text``, cut at the last word boundary before ``chars`` (a space, or
    anywhere in Chinese) that is outside every formula and braced argument, with "…"; the
    whole text when it is that short."""
    if len(text) <= chars:
        return text
    # The tokens that start before the cut, as _TOKEN.finditer finds them.
    spans = []
    pos = 0
    starts = _starts(text, chars)
    while (m := _next_token(text, pos, starts)) is not None:
        spans.append((m.start(), m.end()))
        pos = m.end()
    for cut in range(chars, 0, -1):
        if not (text[cut] == " " or _CJK.match(text[cut - 1]) or _CJK.match(text[cut])):
            continue
        head = text[:cut].rstrip(" ,;:，；：、")
        if head and not any(a < cut < b for a, b in spans) and balanced(head):
            return head + ("…" if _CJK.match(head[-1]) else " …")
    return ""


def _starts(text: str, before: int | None = None) -> list[int]:
    """Where a token may start in `text` (before `before`), in order: str.find skips the
    text between at memchr's speed, where a regex tries every position (the bench's
    abstracts, side by side: 33 µs for _TOKEN's search, 23 for a class of the first
    characters, 9 for this)."""
    found = []
    for start in _STARTS:
        end = len(text) if before is None else before + len(start) - 1
        i = text.find(start, 0, end)
        while i >= 0:
            found.append(i)
            i = text.find(start, i + 1, end)
    return sorted(found)


def _next_token(text: str, pos: int, starts: list[int]) -> re.Match[str] | None:
    """_TOKEN.search(text, pos)'s match, tried only at `starts` (_starts(text), or some)."""
    for k in range(bisect_left(starts, pos), len(starts)):
        if (m := _TOKEN.match(text, starts[k])) is not None:
            return m
    return None


def _render(text: str, *, html: bool, math: bool, depth: int, links: Links = None
            ) -> list[str]:
    def out(s: str) -> str:
        return str(escape(s)) if html else s

    parts: list[str] = []
    pos = 0
    formulas = 0
    pairs: dict[int, int] | None = None  # found when the first command needs them
    starts = _starts(text)
    while (m := _next_token(text, pos, starts)) is not None:
        parts.append(out(text[pos : m.start()]))
        pos = m.end()
        if m["special"]:
            parts.append(out(m["special"]))
        elif m["command"]:
            pairs = _pairs(text) if pairs is None else pairs
            shown, pos = _command(text, m, pairs, html=html, math=math, depth=depth,
                                  links=links)
            if m["command"] in _DROP and not shown:  # with the space or tie before it
                while parts and not parts[-1].strip():
                    parts.pop()
                if parts:
                    parts[-1] = parts[-1].rstrip()
            parts.append(shown)
        elif m["switch"]:
            parts.append(_wrap(_SWITCH[m["switch"]], "".join(
                _render(m["switched"], html=html, math=math, depth=depth + 1, links=links)),
                html=html))
        elif m["quoted"] is not None:
            quoted = _render(m["quoted"], html=html, math=math, depth=depth + 1, links=links)
            parts.append("“" + "".join(quoted) + "”")
        elif m["dash"]:
            parts.append(_DASHES[m["dash"]])
        elif m["tie"]:
            parts.append(" ")
        elif m["url"]:
            parts.append(_link(m["url"], m["url"], html=html, links=links))
        else:
            formulas += 1
            tex = m["display"] or m["inline"] or m["paren"] or m["bracket"] or m["body"]
            display = m["inline"] is None and m["paren"] is None
            parts.append(_formula(tex, m[0], display=display, html=html,
                                  as_source=not math or formulas > MAX_FORMULAS))
    parts.append(out(text[pos:]))
    return parts


def _formula(tex: str, source: str, *, display: bool, html: bool, as_source: bool) -> str:
    """MathML when the converter takes it; else readable Unicode (set like math); else
    the source, dollars included."""
    if as_source:
        return str(escape(source)) if html else source
    if html and (mathml := formula(tex, display=display)) is not None:
        return str(mathml)
    text = formula_text(tex)
    if text is None or "\\" in text:
        return str(escape(source)) if html else source
    return f'<span class="tex">{escape(text)}</span>' if html else text


def _arguments(text: str, pos: int, most: int, pairs: dict[int, int]) -> tuple[list[str], int]:
    """Up to ``most`` braced arguments at ``pos`` (spaces allowed before each), and the
    position after the last; an argument left open, or too long, is no argument."""
    args: list[str] = []
    while len(args) < most:
        start = pos
        while text.startswith(" ", start):
            start += 1
        end = pairs.get(start)
        if end is None or end - start > MAX_ARGUMENT_CHARS:
            break
        args.append(text[start + 1 : end])
        pos = end + 1
    return args, pos


def _pairs(text: str) -> dict[int, int]:
    """Where each "{" of ``text`` is closed: one pass, so every argument is found at once."""
    pairs: dict[int, int] = {}
    opened: list[int] = []
    for m in _BRACE.finditer(text):
        if m[0] == "{":
            opened.append(m.start())
        elif m[0] == "}" and opened:
            pairs[opened.pop()] = m.start()
    return pairs


def _command(text: str, m: re.Match[str], pairs: dict[int, int], *, html: bool, math: bool,
             depth: int, links: Links) -> tuple[str, int]:
    """What TeX prints for the command ``m`` found in ``text``, and where the text goes on."""
    def out(s: str) -> str:
        return str(escape(s)) if html else s

    def inner(s: str) -> str:
        return "".join(_render(s, html=html, math=math, depth=depth + 1, links=links))

    name, pos = m["command"], m.end()
    before = text[m.start() - 1] if m.start() else " "
    if depth >= MAX_DEPTH:
        return out(m[0]), pos
    if name in _SYMBOLS:
        return out(_SYMBOLS[name]), pos + 2 if text.startswith("{}", pos) else pos
    if name not in _ARITY:
        # After a letter it is a path (C:\Users) or an accent inside a word, not a macro.
        if not before.isalpha() and (symbol := _math_symbol(name)) is not None:
            return out(symbol), pos + 2 if text.startswith("{}", pos) else pos
        args, end = _arguments(text, pos, 1, pairs)
        if text.startswith("{", end) or before not in " ([\n":
            return out(m[0]), pos  # an argument left open, or glued to what comes before
        # A macro from the paper's own preamble (\ours, \methodname{}, \blue{…}): arXiv
        # prints it undefined. Its argument, else its name, reads better than a backslash.
        return (inner(args[0]) if args and args[0] else out(name)), end
    args, end = _arguments(text, pos, _ARITY[name], pairs)
    if len(args) < _ARITY[name]:
        return out(m[0]), pos
    if name in _DROP:
        return "", end
    if name == "url":
        return _link(args[0], args[0], html=html, links=links), end
    if name == "href":
        return _link(args[0], args[1], html=html, links=links), end
    if name == "footnote":
        return f" ({inner(args[0])})", end
    if name in _WRAP:  # \textcolor{red}{x} shows x
        return _wrap(_WRAP[name], inner(args[-1]), html=html), end
    # siunitx: \qty{3}{\milli\second}, \qtyproduct{128 x 128}{\m}, \SIrange{1}{5}{\m}
    unit = re.sub(r"\\([A-Za-z]+)", lambda u: _UNITS.get(u[1], u[1]), args[-1]).strip()
    value = " – ".join(inner(a).replace(" x ", " × ") for a in args[:-1])
    return value + out(unit if unit in ("%", "°") else f" {unit}"), end


def _wrap(tag: str, body: str, *, html: bool) -> str:
    if not html or not tag:
        return body
    attrs = ' class="sc"' if tag == "span" else ""
    return f"<{tag}{attrs}>{body}</{tag}>"


def _math_symbol(name: str) -> str | None:
    """A math command written outside a formula (\\times, \\approx) as its character; None
    for a macro of the paper's own, or a text accent (\\b, \\v: a lone combining mark)."""
    symbol = formula_text("\\" + name)
    ok = symbol and "\\" not in symbol and not any(unicodedata.combining(c) for c in symbol)
    return symbol if ok else None


def _link(url: str, label: str, *, html: bool, links: Links) -> str:
    """A link for an http(s) URL only (and one in ``links``, when given); anything else
    (javascript:, a path) is text."""
    url = url.strip()
    shown = url if label == url else plain_tex(label)
    if not html:
        return shown if label == url else f"{shown} ({url})"
    if not _URL.fullmatch(url):
        return str(escape(shown))
    if links is None or url in links:
        return f'<a href="{escape(url)}" rel="nofollow">{escape(shown)}</a>'
    # Not the paper's: its address is shown, so no words can stand for it.
    return str(escape(shown if label == url else f"{shown} ({url})"))
