"""Cleaning upstream text and bounding upstream dates (pipeline.text.untrusted)."""

from __future__ import annotations

import datetime as dt

from pipeline.text.untrusted import (
    CLOCK_SKEW,
    MAX_LISTED,
    Findings,
    clean_text,
    has_surrogate,
    not_after,
)

NOW = dt.datetime(2026, 6, 22, 12, tzinfo=dt.UTC)


def test_controls_go_but_tabs_newlines_and_other_text_stay() -> None:
    text = "a\x00b\x08c\td\ne\x0bf\rg\x1fh\x7fi\x80j\x85k\x9fl\xa0m 研踪 é 😀"
    assert clean_text(text) == "abc\td\nefghijkl\xa0m 研踪 é 😀"


def test_lone_surrogates_become_the_replacement_character() -> None:
    assert has_surrogate("x\ud800") and has_surrogate("\udfff") and not has_surrogate("😀")
    assert clean_text("x\ud800y\udc00") == "x\ufffdy\ufffd"
    assert clean_text("x\ud800").encode() == "x\ufffd".encode()


def test_a_watermark_stops_at_the_clock_plus_the_skew() -> None:
    assert not_after(None, NOW) is None
    assert not_after(NOW, NOW) == NOW
    assert not_after(dt.datetime(2099, 1, 1, tzinfo=dt.UTC), NOW) == NOW + CLOCK_SKEW
    assert not_after(NOW + dt.timedelta(days=1), NOW, skew=dt.timedelta(0)) == NOW


def test_only_dates_over_a_day_ahead_are_anomalies() -> None:
    findings = Findings()
    findings.check_date("a", "updated", NOW + dt.timedelta(hours=23), NOW)
    findings.check_date("b", "updated", None, NOW)
    findings.check_date("c", "updated", NOW + dt.timedelta(days=2), NOW)
    assert findings.anomalies == [{"id": "c", "updated": "2026-06-24T12:00:00+00:00"}]


def test_the_ledger_counts_everything_and_lists_a_bounded_number() -> None:
    findings = Findings()
    for i in range(MAX_LISTED + 10):
        findings.reject(f"bad{i}" * 40, "not an arXiv id")
        findings.check_categories([f"x{i}", "cs.AI"])
    details = findings.details()
    assert details["rejected_count"] == MAX_LISTED + 10
    assert len(details["rejected"]) == MAX_LISTED
    assert all(len(r["id"]) <= 80 for r in details["rejected"])
    assert len(details["unknown_categories"]) == MAX_LISTED
    assert "cs.AI" not in details["unknown_categories"]


def test_private_use_characters_go() -> None:
    """The site's build uses them as placeholders; no real title needs them."""
    text = "a\ue000meta\ue000b\uf8ffc\U000f0000d\U0010fffde 研踪 😀"
    assert clean_text(text) == "ametabcde 研踪 😀"


def test_findings_of_two_fetches_add_up() -> None:
    feed, by_id = Findings(), Findings()
    feed.reject("2606.1v1v3", "a feed item without an arXiv id")
    feed.check_categories(["xx.YY"])
    by_id.reject("bad", "not an arXiv id")
    by_id.check_categories(["xx.YY", "zz.A"])
    by_id.check_date("c", "updated", NOW + dt.timedelta(days=2), NOW)
    both = Findings()
    both.add(feed, "feed")
    both.add(by_id, "by_id")
    details = both.details()
    assert [(r["why"], r["from"]) for r in details["rejected"]] == [
        ("a feed item without an arXiv id", "feed"), ("not an arXiv id", "by_id")]
    assert details["unknown_categories"] == {"xx.YY": 2, "zz.A": 1}
    assert details["anomaly_count"] == 1
