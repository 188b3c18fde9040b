"""What a watcher hears of a paper: acceptance read from real arXiv comments of the bundled
sample, and the events of a paper's readings."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.site._history import Reading, accepted, events

# Real comments of the sample (pipeline/replay/sample), as arXiv carries them.
SAYS_ACCEPTED = [
    "Accepted at EIML@ICML 2026",
    "This work is accepted at IEEE Transactions on Communications",
    "Accepted for publication at MICCAI 2026",
    "Accepted at the ICLR 2026 Workshop on LLM Reasoning. 13 pages, 2 figures",
    "Accepted to ACL 2026 Main. 27 pages, 5 figures",
    "Accepted by KDD 2026 ADS Track",
    "To appear in the Proceedings of the 11th Workshop on Computational Linguistics and "
    "Clinical Psychology",
    "10 pages, 1 figure. To be published in the 2026 IEEE Symposium on Agentic Services",
    "Accepted by SCA2026(poster)",
    "Accepted to CVPR 2026 Findings",
    "Accepted by ICML 2026 Workshop SPIGM, 5 pages, 3 figures",
    "Accepted for TMLR, https://openreview.net/forum?id=xN7NYpQeBm",
    "Accepted to MICCAI 2026. This is the pre-review submitted version, not the camera-ready "
    "version.",
]
SAYS_NOTHING_YET = [
    "Preview, under submission for EMNLP 2026",
    "Under review at COLM 2026 (Conference)",
    "Under Review",
    "30 pages, 9 figures, 5 tables, Submitted to International Journal of Speech Technology",
    "under review. Code: https://github.com/YuxuZhou-CN/combination-problem-generation",
    "Submitted to EMNLP 2026",
    "6 pages, 6 figures. Submitted to IEEE GLOBECOM 2026",
    "This is a preprint of a manuscript currently under peer review",
    "The paper was not accepted; this version adds experiments",
    "",
    None,
]


@pytest.mark.parametrize("comment", SAYS_ACCEPTED)
def test_a_comment_saying_the_paper_was_accepted(comment):
    assert accepted(comment)


@pytest.mark.parametrize("comment", SAYS_NOTHING_YET)
def test_a_comment_not_saying_so(comment):
    assert not accepted(comment)


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
