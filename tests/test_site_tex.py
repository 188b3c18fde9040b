"""render_tex and plain_tex on LaTeX's text mode: the commands authors write in abstracts,
titles and comments (the cases come from the bundled sample's real abstracts)."""

from __future__ import annotations

import re
import time

import pytest
from lxml import etree

from pipeline.replay import sample
from pipeline.site.render.tex import (
    _STARTS,
    _TOKEN,
    MAX_ARGUMENT_CHARS,
    _next_token,
    _starts,
    excerpt,
    links_in,
    plain_tex,
    render_tex,
)

# (source, HTML, plain Unicode)
CASES = [
    (r"we propose \textbf{GRACE} and \emph{what is optimal?}",
     "we propose <b>GRACE</b> and <em>what is optimal?</em>",
     "we propose GRACE and what is optimal?"),
    (r"\textit{a} \texttt{b} \textsc{LedgerAgent} \underline{G}ranularity",
     '<i>a</i> <code>b</code> <span class="sc">LedgerAgent</span> <u>G</u>ranularity',
     "a b LedgerAgent Granularity"),
    (r"called {\it Envy-free Contracts} when we know the {\em fraction}",
     "called <i>Envy-free Contracts</i> when we know the <em>fraction</em>",
     "called Envy-free Contracts when we know the fraction"),
    (r"Code at~\url{https://github.com/a/b}.",
     'Code at <a href="https://github.com/a/b" rel="nofollow">https://github.com/a/b</a>.',
     "Code at https://github.com/a/b."),
    (r"see \href{https://x.org/p?a=1&b=2}{our page}",
     'see <a href="https://x.org/p?a=1&amp;b=2" rel="nofollow">our page</a>',
     "see our page (https://x.org/p?a=1&b=2)"),
    ("available at https://github.com/a/b-c.",
     'available at <a href="https://github.com/a/b-c" rel="nofollow">https://github.com/a/b-c</a>.',
     "available at https://github.com/a/b-c."),
    (r"available at \https://github.com/Funny0101/ReA-OVCD",
     'available at <a href="https://github.com/Funny0101/ReA-OVCD" rel="nofollow">'
     "https://github.com/Funny0101/ReA-OVCD</a>",
     "available at https://github.com/Funny0101/ReA-OVCD"),
    (r"While DialNav~\cite{han2025dialnav} provides, as in \citep{a,b}.",
     "While DialNav provides, as in.", "While DialNav provides, as in."),
    (r"a 50\% cut on S\&P 500, snake\_case \#1",
     "a 50% cut on S&amp;P 500, snake_case #1", "a 50% cut on S&P 500, snake_case #1"),
    ("4B--671B parameters -- the same --- models; not --flag, <-- or -->",
     "4B–671B parameters – the same — models; not --flag, &lt;-- or --&gt;",
     "4B–671B parameters – the same — models; not --flag, <-- or -->"),
    ("a ``Recency Effect'' and ``what is degradation\" and ''epistemic blindness''",
     "a “Recency Effect” and “what is degradation” and “epistemic blindness”",
     "a “Recency Effect” and “what is degradation” and “epistemic blindness”"),
    (r"differs by \approx 7.4\times, pass\textasciicircum{}k, \eg, \ie \ldots",
     "differs by ≈ 7.4×, pass^k, e.g., i.e. …", "differs by ≈ 7.4×, pass^k, e.g., i.e. …"),
    (r"comprises \num{33000} tiles of \qtyproduct{128 x 128}{\m}, \qty{5}{\percent}",
     "comprises 33000 tiles of 128 × 128 m, 5%", "comprises 33000 tiles of 128 × 128 m, 5%"),
    (r"we introduce \sevra, a \blue{clinical reward} and \openbiorq{}, a",
     "we introduce sevra, a clinical reward and openbiorq, a",
     "we introduce sevra, a clinical reward and openbiorq, a"),
    (r"text\footnote{a note} goes on",
     "text (a note) goes on", "text (a note) goes on"),
    (r"\textbf{$\alpha$-fair} models",
     "<b><math", "α-fair models"),
]


@pytest.mark.parametrize(("tex", "html", "plain"), CASES)
def test_text_commands_render_as_tex_prints_them(tex: str, html: str, plain: str) -> None:
    assert str(render_tex(tex)).startswith(html)
    assert plain_tex(tex) == plain


def test_display_environments_become_block_math() -> None:
    out = str(render_tex(r"flow \begin{equation*} g(t)=(1-4t)g_{\mathrm{BH}}, \end{equation*} so"))
    assert out.startswith('flow <math display="block"')
    assert out.endswith("</math> so")
    assert "begin" not in out
    assert plain_tex(r"\begin{align} a = b \end{align}") == "a = b"


@pytest.mark.parametrize("text", [
    r"C:\Users\me and a\b",  # a path, a backslash inside a word: no macro
    r"\textbf{unclosed and \emph",  # missing arguments
    r"\undefined{",
])
def test_what_is_not_a_command_stays_as_written(text: str) -> None:
    assert plain_tex(text) == text
    assert render_tex(text) == str(render_tex.__globals__["escape"](text))


@pytest.mark.parametrize("text", [
    r"\url{javascript:alert(1)}",
    r"\href{javascript:alert(1)}{click}",
    r"\href{https://a.org/\" onmouseover=\"x}{click}",
    r"\href{data:text/html,<script>alert(1)</script>}{<b>x</b>}",
    r"\textbf{<script>alert(1)</script>} \emph{<img src=x onerror=alert(1)>}",
    r"{\bf <iframe>} ``<svg onload=alert(1)>''",
    "https://a.org/\"><script>alert(1)</script>",
])
def test_hostile_text_commands_make_no_active_markup(text: str) -> None:
    out = str(render_tex(text))
    root = etree.fromstring(f"<div>{out}</div>")
    for el in root.iter():
        assert el.tag in {"div", "a", "b", "i", "em", "code", "u", "span"}
        if el.tag == "a":
            assert set(el.attrib) == {"href", "rel"}
            assert re.fullmatch(r"https?://[^\s\"<>]+", el.attrib["href"])
        else:
            assert set(el.attrib) <= {"class"}
    assert "<script" not in out and "<img" not in out and "<iframe" not in out


def test_nesting_past_the_limit_stays_as_source() -> None:
    text = r"\textbf{" * 10 + "x" + "}" * 10
    out = str(render_tex(text))
    assert out.count("<b>") == 4  # MAX_DEPTH wrappers, then the rest as written
    assert r"\textbf" in out


@pytest.mark.parametrize("opener", [r"\textbf{", r"{\it ", "``", r"\begin{equation}", r"\url{"])
def test_unclosed_text_commands_take_linear_time(opener: str) -> None:
    text = f"{opener}x " * 20000
    t0 = time.perf_counter()
    plain_tex(text)
    render_tex(text)
    assert time.perf_counter() - t0 < 2.0


def test_an_argument_past_its_limit_is_no_argument() -> None:
    long = "x" * MAX_ARGUMENT_CHARS
    assert plain_tex(r"\textbf{" + long + "}") == r"\textbf{" + long + "}"


def test_search_words_need_no_formula_conversion() -> None:
    assert plain_tex(r"\textbf{Fast} $\alpha$", math=False) == r"Fast $\alpha$"


def _texts() -> list[str]:
    """Every title, abstract and comment of the bundled sample."""
    rows = [row for day in sample.days() for row in sample.listing(day)]
    return [t for row in rows for t in (row["title"], row["summary"], row.get("comment")) if t]


def test_no_backslash_command_is_left_in_the_sample() -> None:
    """The measure of the site's paper pages (tests/test_site.py counts them on a build),
    here on the texts themselves: no backslash command and no TeX quote is left."""
    texts = _texts()
    assert len(texts) > 3000
    left = [t for t in texts if re.search(r"\\[A-Za-z]+|``", plain_tex(t))]
    assert left == []


@pytest.mark.parametrize(("text", "chars", "cut"), [
    ("one two three four", 100, "one two three four"),
    ("one two three four", 12, "one two …"),
    (r"we use $a + b$ here and there", 10, "we use …"),  # never inside a formula
    (r"a \textbf{bold words here} end", 20, "a …"),  # nor inside an argument
    ("本文提出一种方法，用于连续图像重建。", 10, "本文提出一种方法，用…"),  # no spaces in Chinese
    ("x" * 50, 10, ""),
])
def test_an_excerpt_ends_at_a_word(text: str, chars: int, cut: str) -> None:
    assert excerpt(text, chars) == cut


def test_an_excerpt_cuts_outside_every_token_a_whole_scan_finds() -> None:
    """excerpt() looks for tokens only before the cut; a token that starts there and runs
    past it (a formula, an argument) still keeps the cut out of it. Every sample text at
    several widths: no cut falls inside a token _TOKEN finds scanning the whole text."""
    checked = 0
    for text in _texts():
        spans = [m.span() for m in _TOKEN.finditer(text)]
        for chars in (20, 60, 160):
            cut = excerpt(text, chars).removesuffix("…").rstrip()
            if len(text) > chars and cut:
                checked += 1
                assert text.startswith(cut)
                assert not any(a < len(cut) < b for a, b in spans), (text[:80], chars)
    assert checked > 5000


def test_tokens_are_tried_only_where_one_may_start() -> None:
    """_render and excerpt try _TOKEN only where a text holds one of _STARTS: the same
    tokens as _TOKEN's alternatives tried at every position, on every sample text and on
    near-tokens (one hyphen, one quote, http without a colon)."""
    lookahead = "(?=" + "|".join(map(re.escape, _STARTS)) + ")"
    assert _TOKEN.pattern.startswith(lookahead)
    everywhere = re.compile(_TOKEN.pattern.removeprefix(lookahead), re.VERBOSE)
    near = (r"a - b -- c --- d ``q'' 'x' ` `` ~\ref{x} {\it y} \$ https://a.b/c http x "
            r"$a$ $$b$$ \(c\) \[d\] a--b x---y ~ \begin{equation}e\end{equation}")
    checked = 0
    for text in [*_texts(), near]:
        found, pos, starts = [], 0, _starts(text)
        while (m := _next_token(text, pos, starts)) is not None:
            found.append(m.span())
            pos = m.end()
        assert found == [m.span() for m in everywhere.finditer(text)], text[:80]
        checked += len(found)
    assert checked > 1000


def test_a_models_text_links_only_the_urls_its_paper_links() -> None:
    links = links_in(r"Code: \url{https://github.com/a/b}. Data at https://d.org/x.", None)
    assert links == {"https://github.com/a/b", "https://d.org/x"}
    text = (r"\textbf{\href{https://evil.example/s}{github.com/a/b}} https://evil.example/t, "
            r"\href{https://github.com/a/b}{code} https://d.org/x")
    assert str(render_tex(text, links)) == (
        "<b>github.com/a/b (https://evil.example/s)</b> https://evil.example/t, "
        '<a href="https://github.com/a/b" rel="nofollow">code</a> '
        '<a href="https://d.org/x" rel="nofollow">https://d.org/x</a>')
    assert str(render_tex(text)).count("<a href=") == 4  # an author's text links its own
