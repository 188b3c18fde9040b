"""word_diff / changed: what moved between two versions of a title or abstract."""

from __future__ import annotations

from pipeline.site.render.diff import changed, word_diff


def test_insertion() -> None:
    assert word_diff("fast image models", "fast small image models") == (
        "fast <ins>small</ins> image models"
    )


def test_deletion() -> None:
    assert word_diff("fast small image models", "fast image models") == (
        "fast <del>small</del> image models"
    )


def test_replacement() -> None:
    assert word_diff("we gain 2 dB", "we gain 3 dB") == "we gain <del>2</del><ins>3</ins> dB"


def test_change_at_the_end() -> None:
    assert word_diff("a b", "a b c") == "a b <ins>c</ins>"
    assert word_diff("a b c", "a b") == "a b <del>c</del>"


def test_identical_has_no_marks() -> None:
    text = "Same <title> & text"
    out = word_diff(text, text)
    assert out == "Same &lt;title&gt; &amp; text"
    assert not changed(text, text)


def test_untrusted_markup_is_escaped_on_both_sides() -> None:
    out = word_diff("<script>alert(1)</script> old", "new <img src=x onerror=alert(1)>")
    assert "<script" not in out
    assert "<img" not in out
    assert out == (
        "<del>&lt;script&gt;alert(1)&lt;/script&gt; old</del>"
        "<ins>new &lt;img src=x onerror=alert(1)&gt;</ins>"
    )


def test_whitespace_only_change_is_not_a_change() -> None:
    old, new = "line one\nline  two", "line one line two"
    assert not changed(old, new)
    out = word_diff(old, new)
    assert out == "line one line two"
    assert "<ins>" not in out
    assert "<del>" not in out


def test_changed_detects_word_edits() -> None:
    assert changed("a b", "a c")
    assert changed("", "a")


def test_long_abstract_diff_marks_only_the_edit() -> None:
    words = [f"w{i % 97}" for i in range(2000)]
    new = words.copy()
    new[1000] = "EDITED"
    out = word_diff(" ".join(words), " ".join(new))
    assert out.count("<del>") == 1
    assert out.count("<ins>") == 1
    assert "<del>w30</del><ins>EDITED</ins>" in out


def test_with_context_only_the_words_next_to_a_change_are_kept() -> None:
    words = [f"w{i}" for i in range(100)]
    new = words.copy()
    new[50] = "EDITED"
    out = word_diff(" ".join(words), " ".join(new), context=3)
    assert out == "… w47 w48 w49 <del>w50</del><ins>EDITED</ins> w51 w52 w53 …"
    # A change at the very start and end: no "…" before or after it.
    assert word_diff("a b c d e f g h", "X b c d e f g Y", context=1) == (
        "<del>a</del><ins>X</ins> b … g <del>h</del><ins>Y</ins>")
    # Runs too short to elide stay whole, and the whole text without `context`.
    assert word_diff("a b c d", "a X c d", context=1) == "a <del>b</del><ins>X</ins> c d"
    assert "w20" in word_diff(" ".join(words), " ".join(new))
