"""A fork's `[[follows]]` held against the library: the papers each follow matches, and
what happened to the watched papers.

A paper matches a follow when any one of its lists matches (unlike a topic, where
categories narrow the keywords): an author (names matched as topics match them), a
keyword in the title or abstract, a category, a topic, or a watched id.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa

from pipeline.config import Follow
from pipeline.derive import topics as topic_match
from pipeline.site.model.history import Event, events
from pipeline.site.model.views import Library, Paper
from pipeline.site.render.feeds import recent
from pipeline.tables import TABLES, to_table
from pipeline.text.reasons import Code, Reason, Why

_MATCHED = pa.schema([TABLES["papers"].schema.field(name)
                      for name in ("title", "abstract", "authors", "categories")])


@dataclass(frozen=True)
class Followed:
    papers: list[tuple[Paper, Why]]  # (paper, why), in the library's order
    events: list[Event]  # of the watched papers, newest first
    watched: list[tuple[str, Paper | None]]  # each watched id, with its paper when stored

    @property
    def newest(self) -> list[tuple[Paper, Why]]:
        """The matched papers, newest first seen first."""
        return sorted(self.papers, key=lambda x: (x[0].first_seen, x[0].arxiv_id),
                      reverse=True)

    def recent(self, now: dt.datetime, days: int, tz: dt.tzinfo) -> list[tuple[Paper, Why]]:
        """The matched papers the personal feed holds (and `papertrail notify` sends): those
        of its window (`recent`), newest first. Watched papers' events are few and each one
        matters: `events` holds all of them, not windowed."""
        return recent(self.newest, lambda x: x[0].first_seen, now, days, tz)


def match(follows: tuple[Follow, ...], lib: Library) -> Followed:
    why: dict[int, Why] = {}
    if follows:
        # Typed by the papers table's schema: an empty frame's columns carry no type, and
        # Arrow would read them as nulls, which the matchers cannot fill.
        table = to_table(lib.frames["papers"][list(_MATCHED.names)], _MATCHED)
        names = (topic_match.AuthorIndex(table["authors"])
                 if any(f.authors for f in follows) else None)
        for follow in follows:
            for i, reason in _matches(follow, table, names, lib):
                why.setdefault(i, reason)
    watched_ids = list(dict.fromkeys(i for f in follows for i in f.watch))
    found = [e for i in watched_ids for e in events(i, lib.readings.get(i, []))]
    return Followed(
        papers=[(lib.papers[i], why[i]) for i in sorted(why)],
        events=sorted(found, key=lambda e: (e.seen, e.arxiv_id, e.version), reverse=True),
        watched=[(i, lib.by_id.get(i)) for i in watched_ids])


def _matches(follow: Follow, table: pa.Table, names: topic_match.AuthorIndex | None,
             lib: Library) -> list[tuple[int, Why]]:
    """(row, why) for every paper `follow` matches; its name leads the reasons."""
    label: Why = (Reason(Code.FOLLOW, (follow.name,)),) if follow.name else ()
    out: list[tuple[int, Why]] = [(i, label + why) for i, why in
                                  topic_match.follow_matches(table, follow, names)]
    wanted_topics, watched = set(follow.topics), set(follow.watch)
    if not (wanted_topics or watched):
        return out
    for i, paper in enumerate(lib.papers):
        if paper.arxiv_id in watched:
            out.append((i, (*label, Reason(Code.WATCH, (paper.arxiv_id,)))))
        slug = next((s for s, _ in paper.topics if s in wanted_topics), None)
        if slug:
            out.append((i, (*label, Reason(Code.TOPIC, (slug,)))))
    return out
