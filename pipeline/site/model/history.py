"""A paper's history as a reader or a watcher sees it: its events (new versions, a DOI, a
journal-ref, an acceptance) and the first venue, from what arXiv said reading by reading
(`pipeline.derive.readings`, cleaned here for showing).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.derive.readings import Reading
from pipeline.derive.readings import readings as read
from pipeline.site.render.safe import clean_opt
from pipeline.store import Store
from pipeline.text.venue import accepted, venue


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

    @property
    def item(self) -> str:
        """Its id across the personal feed and the notify ledger: watch/<id>/<key>."""
        return f"watch/{self.arxiv_id}/{self.key}"


def readings(store: Store, ids: Iterable[str]) -> dict[str, list[Reading]]:
    """Per id, its readings oldest first, their text clean for showing."""
    return read(store, ids, clean_opt)


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
