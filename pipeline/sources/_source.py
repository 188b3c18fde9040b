"""What a source is to the rest of the pipeline: the Source protocol, what it folds into, and
what one catch-up hands back for ingest to store and record."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import pyarrow as pa

from pipeline.report import RunReport
from pipeline.tables import ANNOUNCEMENTS, Table

if TYPE_CHECKING:
    from pipeline.config import Config, RankConfig

VERSION_KEYS = ["arxiv_id", "version"]


@dataclass(frozen=True)
class Fact:
    """A column of a source's own table that a paper's page shows, under its label in the
    site's language ("zh-CN", "en"), as plain text."""

    column: str
    label: Mapping[str, str]


@dataclass(frozen=True)
class Signal:
    """A number a source's own table holds of a paper, which the core weighs without
    knowing the source: 今日精选 gives it `weight(cfg.rank)` points per doubling under a chip
    of kind `chip` (said by the catalogue's `reason_<chip>`), and a topic's `min_<name>`
    keeps the papers with at least that many (none counts as 0)."""

    name: str  # "upvotes"
    column: str  # its column in the library view
    chip: str
    weight: Callable[[RankConfig], float]


@dataclass(frozen=True)
class Picks:
    """Papers a source picks, a day at a time (a community's daily list): `day` is the
    column of the day it first picked one. The digest queue serves picks after 今日精选's
    head, by the column `order`, most first; `outside(cfg)`: whether picks in none of the
    fork's categories are in its scope; the search page's filter `name` keeps them."""

    day: str
    order: str
    outside: Callable[[Config], bool]


@dataclass(frozen=True)
class Link:
    """A column of a source's own table holding a link it reports of a paper: to its
    `code` (a repository) or its project `page`; 今日精选 counts them as the paper's own."""

    column: str
    kind: Literal["code", "page"]


@dataclass(frozen=True)
class Library:
    """What a batch is merged into: papers, the keys of versions (never every abstract),
    every source's own tables by name, and the completeness ledger (what arXiv announced,
    for the source that checks the store against it)."""

    papers: pa.Table
    version_keys: pa.Table
    tables: Mapping[str, pa.Table] = field(default_factory=dict)
    announcements: pa.Table = field(default_factory=ANNOUNCEMENTS.empty_table)


@dataclass(frozen=True)
class Merged:
    """One batch folded into the library."""

    papers: pa.Table
    changed: pa.Table  # the batch rows that changed something: what a snapshot keeps
    counts: dict[str, int]  # ledger counts: fetched, new, revised, unchanged (, cross_listed)
    new_versions: pa.Table | None = None  # rows to append to versions; None: adds none
    tables: Mapping[str, pa.Table] = field(default_factory=dict)  # its own tables, after


class Progress(Protocol):
    """Told how far a catch-up got, for a progress bar (sources may not report any)."""

    def begin(self, since: dt.datetime, until: dt.datetime) -> None: ...

    def advance(self, entries: int, reached: dt.datetime) -> None:
        """`entries` kept so far; the window is read from its start up to about `reached`."""
        ...


@dataclass(frozen=True)
class Options:
    """What a command may ask of a catch-up; a source ignores what it has no use for."""

    since: dt.datetime | None = None  # re-read from here instead of the stored watermark
    max_pages: int | None = None
    progress: Progress | None = None


def start_day(options: Options, watermark: dt.datetime | None, started: dt.datetime, *,
              overlap_days: int, backfill_days: int) -> dt.date:
    """The first day a day-by-day catch-up reads: the one asked for, the watermark's day
    less the overlap, or, before the first run, `backfill_days` before `started`."""
    if options.since is not None:
        return options.since.astimezone(dt.UTC).date()
    if watermark is not None:
        return watermark.date() - dt.timedelta(days=overlap_days)
    return started.astimezone(dt.UTC).date() - dt.timedelta(days=backfill_days)


@dataclass
class Catch:
    """One catch-up: how it went, and what ingest should store and write in the ledger."""

    report: RunReport
    since: dt.date  # where it started reading (a datetime, or a day)
    details: dict[str, Any] = field(default_factory=dict)  # the ledger's details, after since
    # source → rows, written as snapshots of this run in this order (rebuild replays them so)
    snapshots: dict[str, pa.Table] = field(default_factory=dict)
    new_versions: list[pa.Table] = field(default_factory=list)
    papers: pa.Table | None = None  # the papers table after the merges; stored with a snapshot
    tables: dict[str, pa.Table] = field(default_factory=dict)  # sources' own, after the merges
    announcements: pa.Table | None = None  # completeness ledger rows to add or replace

    def add(self, source: str, merged: Merged) -> None:
        """Keep a merge's outcome: its snapshot (when it changed anything), papers and the
        source's own tables."""
        if merged.changed.num_rows:
            self.snapshots[source] = merged.changed
            if merged.new_versions is not None:
                self.new_versions.append(merged.new_versions)
            self.tables.update(merged.tables)
        self.papers = merged.papers


@runtime_checkable
class Source(Protocol):
    """A source: ingest runs its catch-ups, rebuild replays its snapshots through `merge`.

    To add one, write a module with an object like this and add it to
    `pipeline.sources.SOURCES`; its snapshots are then stored, checked, compacted and
    replayed, its runs recorded, shown by `status` and the site, and `ingest --source` takes
    its name."""

    name: str  # the ledger's `source`, the snapshots' folder
    label: Mapping[str, str]  # what pages call it, by the site's language ("zh-CN", "en")
    schema: pa.Schema  # its snapshots' columns
    # Its own tables, keyed by arxiv_id and made from its snapshots alone (so `rebuild` makes
    # them again): each column but the key joins the papers in `library_view`, for topics,
    # the site and anything else that reads a paper.
    tables: tuple[Table, ...]
    facts: tuple[Fact, ...]  # what of them a paper's page lists (its own pages aside)
    signals: tuple[Signal, ...]  # its numbers the core weighs
    picks: Picks | None  # when it picks papers a day at a time
    links: tuple[Link, ...]  # the links it reports of a paper

    def enabled(self, cfg: Config) -> bool: ...

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        """Fetch what is new since `watermark` (the last clean run's; None before the first)
        and merge it. Never raises for the source's own faults: they go in the report."""
        ...

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        """Fold one snapshot's rows into the library (papers, or the source's own tables): a
        pure function (no clock, no I/O)."""
        ...

