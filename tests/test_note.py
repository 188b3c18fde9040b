"""The change note by rule (修订说明): on the sample's revisions, and on the changes real
revisions make (results, pages, acceptance, code, withdrawal), in both languages."""

from __future__ import annotations

from collections import defaultdict

import pytest

from pipeline.replay import sample
from pipeline.site import i18n
from pipeline.site.model.note import Side, note, note_text

ABSTRACT = ("We study sparse attention for long documents. Our method, SPAN, prunes "
            "heads per layer. On LongBench it reaches 76.3% accuracy at 2x speed. "
            "We analyse where pruning fails.")


def keys(parts) -> list[str]:
    return [k for k, _ in parts]


def test_every_sample_revision_gets_a_note():
    """The sample's revisions add a sentence to the abstract and a new comment; some
    retitle the paper."""
    by_id: dict[str, dict] = defaultdict(dict)
    for e in sample.entries():
        by_id[e.arxiv_id][e.version] = e
    pairs = [(v[1], v[2]) for v in by_id.values() if 1 in v and 2 in v]
    assert len(pairs) > 40
    for a, b in pairs:
        parts = dict(note(Side(a.title, a.abstract, a.comment, a.journal_ref),
                          Side(b.title, b.abstract, b.comment, b.journal_ref)))
        assert parts["note_sentences_added"] == {"n": 1}
        assert "note_sentences_removed" not in parts
        assert ("note_title" in parts) == (a.title.split() != b.title.split())


@pytest.mark.parametrize(("old", "new", "expected"), [
    # results changed
    (Side("SPAN", ABSTRACT), Side("SPAN", ABSTRACT.replace("76.3%", "78.1%").replace("2x", "3x")),
     [("note_sentences_rewritten", {"n": 1}), ("note_numbers", {"changes": ["76.3% → 78.1%",
                                                                           "2x → 3x"]})]),
    # a sentence added and one removed, unlike each other
    (Side("SPAN", ABSTRACT), Side("SPAN", ABSTRACT.replace(
        "We analyse where pruning fails.", "A user study with 40 annotators confirms it.")),
     [("note_sentences_added", {"n": 1}), ("note_sentences_removed", {"n": 1})]),
    # accepted, with more pages and figures
    (Side("SPAN", ABSTRACT, "Submitted to ICML 2026. 9 pages, 3 figures"),
     Side("SPAN", ABSTRACT, "Accepted at ICML 2026. 12 pages, 5 figures"),
     [("note_venue", {"venue": "ICML 2026"}), ("note_pages", {"old": 9, "new": 12}),
      ("note_figures", {"old": 3, "new": 5})]),
    # a journal took it
    (Side("SPAN", ABSTRACT, "Accepted at ICML 2026"),
     Side("SPAN", ABSTRACT, "Accepted at ICML 2026", "IEEE TPAMI 2027"),
     [("note_venue", {"venue": "TPAMI 2027"})]),
    # code released
    (Side("SPAN", ABSTRACT), Side("SPAN", ABSTRACT + " Code: https://github.com/x/span."),
     [("note_sentences_added", {"n": 1}), ("note_code", {})]),
    # withdrawn
    (Side("SPAN", ABSTRACT, "10 pages"),
     Side("SPAN", ABSTRACT, "This paper has been withdrawn by the authors due to an error"),
     [("note_withdrawn", {})]),
    # "withdrawn" in another sense says nothing
    (Side("SPAN", ABSTRACT), Side("SPAN", ABSTRACT + " Bids withdrawn from the auction."),
     [("note_sentences_added", {"n": 1})]),
    # retitled, nothing else
    (Side("SPAN: sparse attention", ABSTRACT), Side("SPAN: Sparse Attention at Scale", ABSTRACT),
     [("note_title", {})]),
    # re-wrapped only: no note
    (Side("SPAN", ABSTRACT), Side("SPAN", ABSTRACT.replace(" ", "\n  ", 3)), []),
])
def test_what_a_revision_changed(old, new, expected):
    assert note(old, new) == expected


def test_without_readings_the_comment_says_nothing():
    """Comments not read (no snapshots): nothing about venues, pages or code is guessed."""
    old = Side("SPAN", ABSTRACT, None)
    new = Side("SPAN", ABSTRACT, "Accepted at ICML 2026. 12 pages")
    assert note(old, new, meta=False) == []
    assert keys(note(old, new)) == ["note_venue"]


def test_the_note_reads_in_the_sites_language():
    parts = note(Side("SPAN", ABSTRACT, "Submitted to ICML 2026. 9 pages"),
                 Side("SPAN", ABSTRACT.replace("76.3%", "78.1%"),
                      "Accepted at ICML 2026. 12 pages"))
    assert note_text(parts, i18n.strings("zh-CN")) == (
        "已被 ICML 2026 录用；改写 1 句；数字 76.3% → 78.1%；页数 9 → 12")
    assert note_text(parts, i18n.strings("en")) == (
        "accepted at ICML 2026; rewritten: 1; numbers 76.3% → 78.1%; pages 9 → 12")
