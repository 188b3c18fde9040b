"""What text and dates from outside (arXiv, Hugging Face, a model server) go through before
they are stored.

Text: control characters are dropped, since they break the XML of the site's feeds and
mean nothing in a title or a digest; so are private-use characters, the site's
placeholders. A lone surrogate (JSON can carry one as ``\\ud800``) cannot be encoded as
UTF-8 at all, so writing the table would fail: upstream fields get U+FFFD instead, and a
model reply with one is rejected (`has_surrogate`).

Dates: upstream clocks are not ours. An entry dated ahead of the run must not carry the
watermark into the future, or every later run asks only for entries newer than that date
and finds nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field

from pipeline.text.ids import is_category

# C0 controls but \t and \n, DEL and the C1 controls: Unicode's Cc category. And the
# private-use characters (Co): they stand for nothing without a private agreement, and the
# site's build uses them as its placeholders (a title holding one broke its page).
_DROPPED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ue000-\uf8ff\U000f0000-\U0010ffff]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")

# How far ahead of the run's clock a watermark may be: servers' clocks drift by seconds to
# minutes, and arXiv stamps `updated` itself; an hour is generous for that and still
# small against the overlap (hours) every run re-reads before the watermark.
CLOCK_SKEW = dt.timedelta(hours=1)
# An entry dated this far ahead of the run is no clock drift but a wrong date: it is stored
# (it is the source's data) and named in the run ledger.
AHEAD_IS_ANOMALY = dt.timedelta(days=1)
# The run ledger lists at most this many rejected entries or anomalies (and counts all).
MAX_LISTED = 50


def clean_text(text: str) -> str:
    """Control characters other than tab and newline, and private-use characters,
    removed; lone surrogates → U+FFFD."""
    return _SURROGATES.sub("\ufffd", _DROPPED.sub("", text))


def has_surrogate(text: str) -> bool:
    """True when `text` holds a code point UTF-8 cannot encode (an unpaired surrogate)."""
    return _SURROGATES.search(text) is not None


def not_after(mark: dt.datetime | None, now: dt.datetime, skew: dt.timedelta = CLOCK_SKEW
              ) -> dt.datetime | None:
    """A watermark that does not pass the run's clock plus `skew`."""
    return None if mark is None else min(mark, now + skew)


def is_ahead(when: dt.datetime | None, now: dt.datetime) -> bool:
    """True for a date too far ahead of the run's clock to be drift (AHEAD_IS_ANOMALY)."""
    return when is not None and when > now + AHEAD_IS_ANOMALY


@dataclass
class Findings:
    """What a fetch noticed about the source's data, for the run ledger's details."""

    rejected: list[dict[str, str]] = field(default_factory=list)  # not stored
    # stored, dated oddly: far ahead of the run, or before the version it replaced
    anomalies: list[dict[str, str]] = field(default_factory=list)
    unknown_categories: Counter[str] = field(default_factory=Counter)  # stored as they came

    def reject(self, value: object, why: str) -> None:
        """An entry not stored: its id as it came (repr: it may be anything), and why."""
        self.rejected.append({"id": repr(value)[:80], "why": why})

    def check_date(self, entry_id: str, name: str, when: dt.datetime | None,
                   now: dt.datetime) -> None:
        if when is not None and is_ahead(when, now):
            self.anomalies.append({"id": entry_id, name: when.isoformat()})

    def check_categories(self, categories: list[str]) -> None:
        self.unknown_categories.update(c for c in set(categories) if not is_category(c))

    def add(self, other: Findings, label: str) -> None:
        """Another fetch's findings with these (one run, two fetches): each entry it
        rejected or found odd says where from (`from`); category counts are summed."""
        self.rejected += [{**r, "from": label} for r in other.rejected]
        self.anomalies += [{**a, "from": label} for a in other.anomalies]
        self.unknown_categories.update(other.unknown_categories)

    def details(self) -> dict[str, object]:
        """Counts of everything, lists cut at MAX_LISTED: upstream decides their length."""
        return {"rejected_count": len(self.rejected), "rejected": self.rejected[:MAX_LISTED],
                "anomaly_count": len(self.anomalies), "anomalies": self.anomalies[:MAX_LISTED],
                "unknown_categories": dict(self.unknown_categories.most_common(MAX_LISTED))}
