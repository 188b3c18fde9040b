"""arXiv's announcement feed: what arXiv announced today in the configured categories,
fetched by id where the store lacks it, and the completeness ledger that says so.

The feed (`[sources.arxiv] feed_url`, rss.arxiv.org) lists the last announcement's
papers, each with how it was announced (arXiv/arxiv-feed: `new`, `cross`, `replace`,
`replace-cross`; a multi-category feed is cut at 2,000 items). It switches at midnight
US-Eastern, so it is the check after the announcement: OAI-PMH normally has the day by
then (its docs: ~22:30 ET), and whatever the feed lists that the store still lacks, a
paper OAI-PMH is late with or missed, is fetched through the export API's `id_list`
(`arxiv.fetch_ids`, in batches), paced with every other request to arXiv.

One request reads all the configured categories; a feed that holds 2,000 items, or
serves an earlier day than expected, is read again in halves, down to one category (a
stale feed whose halves are as stale is the whole day behind: no smaller feed helps).
The expected day is arXiv's own (today in US-Eastern time at the run's clock) or the
latest any feed of the run served, whichever is later: a feed serving an earlier day
is stale (seen in 2026: one category's feed a day behind the others). A feed serving a
day after arXiv's today is set aside too (no day arXiv has not reached is trusted). Their
items are not trusted and nothing of them is recorded; the run says so (status partial)
and the next run reads them again. A body that is not RSS is an error, never "nothing announced".

The ledger (`announcements`, one row per announcement day and category): the versioned
ids listed as new (primary category here), cross-listed, and replaced, whether the
feed was capped, and which of them the store lacked after the run. Each run fetches
again the versions the ledger says are missing from the last GAP_DAYS days' rows, and
rewrites those rows.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import functools
import itertools
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc

from pipeline import outbound
from pipeline.merge import merge_arxiv
from pipeline.outbound import Answer, FetchStats, Transient, check_status
from pipeline.report import RunReport, RunStatus
from pipeline.sources._http import Requests, SourceError
from pipeline.sources._source import Catch, Fact, Library, Link, Merged, Options, Picks, Signal
from pipeline.sources._untrusted import Malformed, NotExpected, too_long, xml_root
from pipeline.sources.arxiv import Fetch, fetch_ids
from pipeline.tables import ANNOUNCEMENTS, ARXIV_SNAPSHOT, Table
from pipeline.text.ids import split_version
from pipeline.text.untrusted import CLOCK_SKEW, Findings, clean_text, not_after

if TYPE_CHECKING:
    from pipeline.config import ArxivConfig, Config

EASTERN = ZoneInfo("America/New_York")  # arXiv's day (arxiv-feed's ARXIV_BUSINESS_TZ)
FEED_CAP = 2000  # arxiv-feed's result_limit: a feed this long may have been cut
# A gap older than this is left to OAI-PMH: a version the API will not serve (withdrawn,
# or an id arXiv reassigned) is not asked for on every run forever.
GAP_DAYS = 7
# At most this many papers asked for by id per run (the rest next run: the ledger keeps
# them missing): a whole day of all of cs that OAI-PMH missed (2,000-3,000 papers with
# cross-lists and replacements), 50 requests at 100 ids; a feed claiming more is not to
# be believed whole, and each id costs arXiv a request's share and this run memory.
MAX_BY_ID = 5000
MAX_VERSION = 9999  # as the OAI-PMH reader takes them: four digits, beyond any paper's
KINDS = ("new", "cross", "replace", "replace-cross")
_ARXIV = "http://arxiv.org/schemas/atom"
_GUID = re.compile(r"oai:arXiv\.org:(?P<vid>.+)")


@dataclass(frozen=True)
class Listing:
    """One item of a feed: a paper's version and how the feed announced it."""

    arxiv_id: str
    version: int
    kind: str
    categories: tuple[str, ...]  # primary first, as arXiv's metadata lists them

    @property
    def vid(self) -> str:
        return f"{self.arxiv_id}v{self.version}"


@dataclass(frozen=True)
class Feed:
    categories: tuple[str, ...]  # what was asked for
    day: dt.date  # the announcement day it serves (its pubDate, US-Eastern)
    items: tuple[Listing, ...]
    dropped: int = 0  # items past FEED_CAP: more than arXiv's feed ever holds, not read

    @property
    def capped(self) -> bool:
        return len(self.items) >= FEED_CAP


@dataclass
class Reading:
    """What the feeds of one run said, and how reading them went."""

    feeds: list[Feed] = field(default_factory=list)
    stats: FetchStats = field(default_factory=FetchStats)
    findings: Findings = field(default_factory=Findings)
    error: str | None = None
    ahead: list[Feed] = field(default_factory=list)  # set aside: a day arXiv has not reached

    def expected(self, started: dt.datetime) -> dt.date:
        """The day every feed should serve: arXiv's today, or a later day a feed served."""
        return max([arxiv_day(started), *(f.day for f in self.feeds)])


def arxiv_day(t: dt.datetime) -> dt.date:
    return t.astimezone(EASTERN).date()


def read_feeds(cfg: ArxivConfig, started: dt.datetime) -> Reading:
    """The feeds of the configured categories: one, or halves of it where it was capped or
    stale. Never raises for the source's faults: they end the reading with what was read."""
    requests_ = Requests(cfg, time.monotonic() + cfg.max_run_seconds, name="arxiv",
                         limit=f"max_run_seconds ({cfg.max_run_seconds:g} s)")
    reading = Reading(stats=requests_.stats)

    def read(categories: tuple[str, ...]) -> Feed:
        url = cfg.feed_url + "+".join(categories)
        return requests_.call(functools.partial(_get, url, cfg=cfg),
                              functools.partial(_parse, categories=categories,
                                                findings=reading.findings), url)

    def settle(feed: Feed) -> list[Feed]:
        """The feed, or its halves' where it was capped or stale (and theirs, in turn)."""
        cats = feed.categories
        if len(cats) == 1 or not (feed.capped or feed.day < arxiv_day(started)):
            return [feed]
        halves = [read(cats[:len(cats) // 2]), read(cats[len(cats) // 2:])]
        if not feed.capped and all(h.day == feed.day for h in halves):
            return halves  # the whole day is behind, not one category's feed
        return [f for h in halves for f in settle(h)]

    try:
        feeds = settle(read(tuple(cfg.categories)))
    except SourceError as exc:
        reading.error = str(exc)
    else:
        # arXiv announces at most today in its time zone (CLOCK_SKEW: this clock may
        # run a little behind arXiv's); a later day would pin the ledger there and have
        # its items asked for by id on every run.
        latest = arxiv_day(started + CLOCK_SKEW)
        reading.feeds = [f for f in feeds if f.day <= latest]
        reading.ahead = [f for f in feeds if f.day > latest]
    return reading


def _get(url: str, deadline: float, *, cfg: ArxivConfig) -> Answer:
    headers = {"User-Agent": cfg.user_agent,
               "Accept": "application/rss+xml, application/xml;q=0.9, text/xml;q=0.8"}
    return outbound.get(url, headers, deadline)


def _parse(answer: Answer, *, categories: tuple[str, ...], findings: Findings) -> Feed:
    status, headers, body = answer
    check_status(status, headers)
    try:
        root = xml_root(body, "rss", "an RSS feed")
    except Malformed as exc:
        if status != 200:
            raise SourceError(f"HTTP {status}, not an RSS feed") from None
        raise Transient(str(exc)) from None
    except NotExpected as exc:
        raise SourceError(f"HTTP {status}: {exc}") from None
    channel = root.find("channel")
    if channel is None:
        raise SourceError(f"HTTP {status}: not an RSS feed ({str(root.tag)[:80]})")
    if status != 200:  # arxiv-feed's errors are RSS channels saying why
        raise SourceError(f"feed error (HTTP {status}): "
                          f"{clean_text(channel.findtext('description') or '')[:200]}")
    day = _day(channel.findtext("pubDate"))
    if day is None:
        raise SourceError("an RSS feed without the day it announces (pubDate)")
    items = channel.iter("item")
    listings = tuple(filter(None, (_listing(item, findings)
                                   for item in itertools.islice(items, FEED_CAP))))
    return Feed(categories, day, listings, dropped=sum(1 for _ in items))


def _day(text: str | None) -> dt.date | None:
    try:
        return arxiv_day(email.utils.parsedate_to_datetime((text or "").strip()))
    except (TypeError, ValueError):
        return None


def _listing(item: Any, findings: Findings) -> Listing | None:
    guid = clean_text(item.findtext("guid") or "").strip()
    if oversized := too_long(item):
        findings.reject(guid[:40] or "?", oversized)
        return None
    kind = clean_text(item.findtext(f"{{{_ARXIV}}}announce_type") or "").strip()
    m = _GUID.fullmatch(guid)
    vid = split_version(m["vid"]) if m else None
    if vid is None or vid[1] > MAX_VERSION:
        findings.reject(guid[:40] or "?", "a feed item without an arXiv id and version")
        return None
    if kind not in KINDS:
        findings.reject(guid[:40], f"announce type {kind[:20]!r} is not one of {KINDS}")
        return None
    if kind == "new" and vid[1] != 1:
        findings.reject(guid[:40], "announced as new, but not its v1")
        return None
    categories = [c for c in (clean_text(e.text or "").strip()
                              for e in item.findall("category")) if c]
    findings.check_categories(categories)
    return Listing(*vid, kind, tuple(categories))


# -- the ledger ------------------------------------------------------------------------------


class LedgerRow(TypedDict):
    """A row of the announcements table (ANNOUNCEMENTS); `missing` and `checked` are worked
    out after the versions it lists are fetched."""

    day: dt.date
    category: str
    new: list[str]
    cross: list[str]
    replace: list[str]
    capped: bool
    missing: NotRequired[list[str]]
    checked: NotRequired[dt.datetime]


def ledger_rows(feeds: Iterable[Feed], wanted: Iterable[str]) -> list[LedgerRow]:
    """One row per (day, configured category) of the feeds: the versions listed, by how
    they were announced in that category (new: its primary category; cross: a new paper
    cross-listed to it; replace: a new version, replace-cross included)."""
    wanted = set(wanted)
    rows: dict[tuple[dt.date, str], LedgerRow] = {}
    for feed in feeds:
        for category in wanted.intersection(feed.categories):
            row = rows.setdefault((feed.day, category), {
                "day": feed.day, "category": category, "new": [], "cross": [],
                "replace": [], "capped": False})
            row["capped"] |= feed.capped
            for item in feed.items:
                if category not in item.categories:
                    continue
                if item.kind in ("replace", "replace-cross"):
                    row["replace"].append(item.vid)
                else:
                    row["new" if item.categories[0] == category else "cross"].append(item.vid)
    return [rows[k] for k in sorted(rows)]


def missing(papers: pa.Table, vids: Iterable[str]) -> list[str]:
    """The versions (`2606.12345v2`) the papers table does not hold, nor a later one of."""
    vids = list(dict.fromkeys(vids))
    if not vids:
        return []
    ids = [v.rsplit("v", 1)[0] for v in vids]
    at = pc.index_in(pa.array(ids), value_set=papers["arxiv_id"].combine_chunks())
    # stubs: fill_null is typed as coalesce (one type for values and fill)
    held = pc.fill_null(papers["version"].take(at), 0).to_pylist()  # type: ignore[attr-defined, type-var]
    return [v for v, have in zip(vids, held, strict=True) if have < int(v.rsplit("v", 1)[1])]


def listed(row: LedgerRow) -> list[str]:
    return [*row["new"], *row["cross"], *row["replace"]]


# -- the source ------------------------------------------------------------------------------


class AnnounceSource:
    """The last announcement of the configured categories, checked against the store."""

    name = "announce"
    label: Mapping[str, str] = {"zh-CN": "arXiv 每日公告（RSS）", "en": "arXiv announcements (RSS)"}
    schema = ARXIV_SNAPSHOT  # what it fetches by id is the export API's entries
    tables: tuple[Table, ...] = ()  # papers and versions; its ledger is a core table
    facts: tuple[Fact, ...] = ()
    signals: tuple[Signal, ...] = ()
    picks: Picks | None = None
    links: tuple[Link, ...] = ()

    def enabled(self, cfg: Config) -> bool:
        return cfg.sources.arxiv.enabled

    def catch_up(self, cfg: Config, library: Library, watermark: dt.datetime | None,
                 started: dt.datetime, options: Options) -> Catch:
        acfg = cfg.sources.arxiv
        before = not_after(watermark, started)
        reading = read_feeds(acfg, started)
        expected = reading.expected(started)
        trusted = [f for f in reading.feeds if f.day >= expected]
        stale = {c: f.day.isoformat() for f in reading.feeds if f.day < expected
                 for c in f.categories}
        today = [] if not any(f.items for f in trusted) else ledger_rows(
            trusted, acfg.categories)
        gaps = _gaps(library.announcements, expected, {(r["day"], r["category"])
                                                       for r in today})
        wanted = missing(library.papers, [v for r in today + gaps for v in listed(r)])
        ids = list(dict.fromkeys(v.rsplit("v", 1)[0] for v in wanted))
        fetch = fetch_ids(acfg, ids[:MAX_BY_ID], started) if ids else None
        batch = fetch.table() if fetch else ARXIV_SNAPSHOT.empty_table()
        merged = self.merge(cfg, library, batch)
        for row in today + gaps:
            row["missing"] = missing(merged.papers, listed(row))
            row["checked"] = started
        problems = [p for p in (reading.error, fetch and fetch.error) if p]
        if stale:
            problems.append(_stale_message(stale, expected))
        ahead = {c: f.day.isoformat() for f in reading.ahead for c in f.categories}
        if ahead:
            problems.append(_ahead_message(ahead, started))
        failed = reading.error is not None and not reading.feeds and not batch.num_rows
        status: RunStatus = "failed" if failed else "partial" if problems else "ok"
        newest = max((f.day for f in trusted), default=None)
        after = before if newest is None else not_after(max(filter(None, [
            before, dt.datetime.combine(newest, dt.time(), EASTERN).astimezone(dt.UTC)])),
            started)
        stats = [reading.stats, *([fetch.stats] if fetch else [])]
        report = RunReport(self.name, status, merged.counts, sum(s.requests for s in stats),
                           sum(s.retries for s in stats), "; ".join(problems) or None, before,
                           after)
        catch = Catch(report, expected, {
            "day": expected.isoformat(), "feeds": len(reading.feeds),
            "announced": sum(len(listed(r)) for r in today),
            "no_announcement": bool(trusted) and not today, "stale": stale,
            "capped": sorted({c for f in trusted if f.capped for c in f.categories}),
            "asked_by_id": len(wanted), "deferred_by_id": len(ids[MAX_BY_ID:]),
            "still_missing": sum(len(r["missing"]) for r in today + gaps), "ahead": ahead,
            "dropped_past_cap": {"+".join(f.categories): f.dropped
                                 for f in [*reading.feeds, *reading.ahead] if f.dropped},
            **_findings(reading, fetch).details()})
        catch.add(self.name, merged)
        rows = today + gaps
        if rows:
            catch.announcements = pa.Table.from_pylist(rows, schema=ANNOUNCEMENTS)
        return catch

    def merge(self, cfg: Config, library: Library, batch: pa.Table) -> Merged:
        merged = merge_arxiv(library.papers, library.version_keys, batch,
                             cfg.sources.arxiv.categories)
        return Merged(merged.papers, merged.changed, merged.counts, merged.new_versions)


def _findings(reading: Reading, fetch: Fetch | None) -> Findings:
    """The feed's findings and the by-id fetch's, each entry saying which."""
    findings = Findings()
    findings.add(reading.findings, "feed")
    if fetch is not None:
        findings.add(fetch.findings, "by_id")
    return findings


def _gaps(ledger: pa.Table, expected: dt.date, fresh: set[tuple[dt.date, str]]
          ) -> list[LedgerRow]:
    """The ledger's rows of the last GAP_DAYS days up to `expected` that still miss
    something (the ones this run reads afresh aside; a later day, written before feeds
    were checked against the clock, is left alone)."""
    since = expected - dt.timedelta(days=GAP_DAYS)
    return [row for row in cast(list[LedgerRow], ledger.to_pylist())
            if row["missing"] and since <= row["day"] <= expected
            and (row["day"], row["category"]) not in fresh]


def _stale_message(stale: dict[str, str], expected: dt.date) -> str:
    shown = ", ".join(f"{c} ({d})" for c, d in sorted(stale.items())[:5])
    more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
    return (f"the announcement feed served an earlier day for {shown}{more} than "
            f"{expected.isoformat()}: not trusted, read again next run")


def _ahead_message(ahead: dict[str, str], started: dt.datetime) -> str:
    shown = ", ".join(f"{c} ({d})" for c, d in sorted(ahead.items())[:5])
    more = f" and {len(ahead) - 5} more" if len(ahead) > 5 else ""
    return (f"the announcement feed claimed a day after arXiv's today "
            f"({arxiv_day(started).isoformat()}) for {shown}{more}: set aside, read again "
            "next run")


SOURCE = AnnounceSource()
