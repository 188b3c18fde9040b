"""What a watcher hears of a paper: the events of its readings (acceptance itself is read in
_venue, tested in test_venue)."""

from __future__ import annotations

import datetime as dt

from pipeline.derive.readings import Reading
from pipeline.site.model.history import events, first_venue


def _at(hours: int) -> dt.datetime:
    return dt.datetime(2026, 6, 22, tzinfo=dt.UTC) + dt.timedelta(hours=hours)


def test_events_fire_once_each_oldest_first():
    history = [
        Reading(1, _at(0), "Submitted to ICML 2026", None, None),
        Reading(1, _at(5), "Submitted to ICML 2026", None, "10.1/x"),  # arXiv added a DOI
        Reading(2, _at(30), "Accepted at ICML 2026", "ICML 2026", "10.1/x"),
        Reading(3, _at(60), "Accepted at ICML 2026, camera-ready", "ICML 2026", "10.1/x"),
    ]
    got = [(e.kind, e.version, e.value, e.key) for e in events("2606.1", history)]
    assert got == [
        ("version", 1, "1", "v1"),
        ("doi", 1, "10.1/x", "v1/doi"),
        ("version", 2, "2", "v2"),
        ("journal_ref", 2, "ICML 2026", "v2/journal_ref"),
        ("accepted", 2, "Accepted at ICML 2026", "v2/accepted"),
        ("version", 3, "3", "v3"),  # still accepted, a DOI kept: nothing new but the version
    ]


def test_the_first_reading_that_names_a_venue_dates_it():
    history = [Reading(1, _at(0), "Submitted to ICML 2026", None, None),
               Reading(1, _at(5), "Submitted to ICML 2026", None, "10.48550/arXiv.2606.1"),
               Reading(2, _at(30), "Accepted at ICML 2026", None, None),
               Reading(3, _at(60), "Accepted at ICML 2026", "PMLR 267", None)]
    assert first_venue(history) == (2, _at(30))
    assert first_venue(history[:2]) is None
