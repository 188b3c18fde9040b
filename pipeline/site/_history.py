"""What arXiv said of a paper over time: its comment, journal-ref and DOI at each reading.

The papers table keeps only the latest of these, and the versions table only titles and
abstracts; the arXiv snapshots keep every reading that changed something (a new version,
or the same version with new metadata: arXiv adds a journal-ref or DOI without a new
version). Read only for the few papers that need it: the revisions in the feeds and the
papers a fork watches.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.site._safe import clean_opt
from pipeline.site._venue import accepted, venue
from pipeline.store import Store


@dataclass(frozen=True)
class Reading:
    version: int
    seen: dt.datetime
    comment: str | None
    journal_ref: str | None
    doi: str | None


@dataclass(frozen=True)
class Event:
    """Something a watcher wants to hear about: kind is version, doi, journal_ref or
    accepted; `value` the new version number, DOI, journal-ref or comment."""

    arxiv_id: str
    kind: str
    value: str
    version: int
    seen: dt.datetime

    @property
    def key(self) -> str:
        """Stable within the paper: the entry id's last part."""
        return f"v{self.version}" if self.kind == "version" else f"v{self.version}/{self.kind}"


def readings(store: Store, ids: Iterable[str]) -> dict[str, list[Reading]]:
    """Per id, its readings oldest first (ties: the lower version first)."""
    wanted = pa.array(sorted(set(ids)), pa.string())
    if not len(wanted):
        return {}
    table = store.read_snapshots("arxiv", ["arxiv_id", "version", "comment", "journal_ref",
                                           "doi", "fetched_at"])
    table = table.filter(pc.is_in(table["arxiv_id"], value_set=wanted))
    table = table.sort_by([("arxiv_id", "ascending"), ("fetched_at", "ascending"),
                           ("version", "ascending")])
    out: dict[str, list[Reading]] = defaultdict(list)
    for row in table.to_pylist():
        out[row["arxiv_id"]].append(Reading(
            int(row["version"]), row["fetched_at"], clean_opt(row["comment"]),
            clean_opt(row["journal_ref"]), clean_opt(row["doi"])))
    return dict(out)


def events(arxiv_id: str, history: list[Reading]) -> list[Event]:
    """Each new version, the first DOI and journal-ref, and a comment starting to say the
    paper was accepted, oldest first."""
    out: list[Event] = []
    before: Reading | None = None
    for r in history:
        if before is None or r.version > before.version:
            out.append(Event(arxiv_id, "version", str(r.version), r.version, r.seen))
        for kind in ("doi", "journal_ref"):
            value = getattr(r, kind)
            if value and not (before and getattr(before, kind)):
                out.append(Event(arxiv_id, kind, value, r.version, r.seen))
        if accepted(r.comment) and not (before and accepted(before.comment)):
            out.append(Event(arxiv_id, "accepted", r.comment or "", r.version, r.seen))
        before = r
    return out


def first_venue(history: list[Reading]) -> tuple[int, dt.datetime] | None:
    """(version, when) of the first reading that names a venue that took the paper."""
    return next(((r.version, r.seen) for r in history
                 if venue(r.comment, r.journal_ref, r.doi)), None)


def around(history: list[Reading], version: int) -> tuple[Reading | None, Reading | None]:
    """What arXiv showed with the version before, last, and with `version`, first."""
    return (_at_version(history, version - 1, last=True),
            _at_version(history, version, last=False))


def _at_version(history: list[Reading], version: int, *, last: bool) -> Reading | None:
    """The first (or last) reading of `version`."""
    found = [r for r in history if r.version == version]
    return (found[-1] if last else found[0]) if found else None
