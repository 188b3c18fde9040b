"""SiteData: everything every page kind reads, computed once from the Config and the library.

The renderers (pipeline.site.pages) only read it; nothing here depends on the order in
which they run, or on whether they run in this process or a forked worker.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

import pipeline.site.i18n as i18n
from pipeline.config import Config
from pipeline.derive import rank, stats
from pipeline.site.model.brand import Brand, brand
from pipeline.site.model.follows import Followed
from pipeline.site.model.follows import match as match_follows
from pipeline.site.model.views import CLOCKS, Library, Pages, Paper
from pipeline.site.render.feeds import SITE_FEEDS, FeedSpec, light
from pipeline.site.render.safe import clean
from pipeline.text.ids import is_category
from pipeline.text.reasons import Why
from pipeline.text.venue import Tier, tier

Revision = tuple[Paper, int, dt.datetime]  # (paper, version, when we saw it)
Top = list[tuple[Paper, rank.Ranked]]  # 今日精选: best first
BRIEF_KINDS = ("new", "ai", "revised", "digests")  # the briefs of each day, by kind


@dataclass(frozen=True)
class Topic:
    slug: str
    name: str  # in the site's language
    description: str
    members: list[Paper]  # newest update first
    reasons: dict[str, Why]  # arxiv_id → why the paper matched


@dataclass(frozen=True)
class LocalTime:
    """A time as the site shows it, in its timezone ("—" for none). Data, not a method of
    the SiteData: templates call it, and a paper page's key holds its context by repr."""

    tz: ZoneInfo

    def __call__(self, t: dt.datetime | None) -> str:
        if t is None:
            return "—"
        d = t.astimezone(self.tz)  # by its fields: strftime took twice as long, 3 a page
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}"


@dataclass(frozen=True)
class SiteData:
    cfg: Config
    lib: Library
    theme: Path
    lang: str
    strings: dict[str, str]
    brand: Brand
    tz_label: str
    topic_names: dict[str, str]
    home: stats.HomeStats
    revisions: list[Revision]  # newest first
    newest: dict[str, list[Paper]]  # per clock, newest first (ties by id)
    categories: dict[str, list[Paper]]  # in code order; members newest update first
    topics: list[Topic]  # in the config's order
    site_feeds: list[FeedSpec]  # the feeds every page links
    # every feed: the site's, each category's and topic's, the daily briefs of each, and
    # the fork's own (me) when it follows anything
    feeds: list[FeedSpec]
    followed: Followed  # what the config's [[follows]] match
    accepted: list[Paper]  # a venue took them: newest news of it first (ties by id)
    local: LocalTime
    top: Top  # 今日精选 of the last announcement (pipeline.derive.rank)
    # Which pages are light or left out under [site] max_site_mb: each pass of the build
    # renders a SiteData with its own (generator, _budget).
    pages: Pages = field(default_factory=Pages)

    @property
    def paged(self) -> list[Paper]:
        """The papers with a page of their own."""
        return [p for p in self.lib.papers if self.pages.has(p)]

    @property
    def digested(self) -> list[Paper]:
        """Papers with a digest, newest digest first."""
        return sorted((p for p in self.lib.papers if p.digest_created),
                      key=lambda p: (p.digest_created, p.arxiv_id), reverse=True)


def newest(papers: Iterable[Paper], clock: str) -> list[Paper]:
    return sorted(papers, key=lambda p: (getattr(p, clock), p.arxiv_id), reverse=True)


def topic_names(cfg: Config) -> dict[str, str]:
    """Each topic's name in the site's language, by slug."""
    zh = cfg.site.language == "zh-CN"
    return {t.slug: t.name.zh if zh else t.name.en for t in cfg.topics}


def compute(cfg: Config, lib: Library, theme: Path) -> SiteData:
    lang = cfg.site.language
    s = i18n.strings(lang)
    f = lib.frames
    ordered = {clock: newest(lib.papers, clock) for clock in CLOCKS}
    names = topic_names(cfg)
    categories = _categories(ordered["updated"], cfg.sources.arxiv.categories)
    topics = _topics(cfg, names, ordered["updated"])
    site_feeds = [FeedSpec(kind, s[f"feed_{kind}"], page) for kind, page in SITE_FEEDS.items()]
    followed = match_follows(cfg.follows, lib)
    return SiteData(
        cfg=cfg, lib=lib, theme=theme, lang=lang, strings=s, brand=brand(cfg.site, s),
        tz_label=i18n.tz_label(lang, cfg.site.timezone), topic_names=names,
        home=stats.home(f["papers"], f["versions"], f["digests"], f["runs"], lib.tz,
                        cfg.digest_language, lib.now, f["announcements"]),
        revisions=_revisions(lib), newest=ordered, categories=categories, topics=topics,
        site_feeds=site_feeds, feeds=_feeds(cfg, s, site_feeds, categories, topics),
        followed=followed,
        accepted=sorted((p for p in lib.papers if p.venue), reverse=True,
                        key=lambda p: (p.at("venue"), p.arxiv_id)),
        local=LocalTime(lib.tz),
        top=ranked(cfg, s, followed, last_announcement(cfg, lib.papers)))


def last_announcement(cfg: Config, papers: list[Paper]) -> list[Paper]:
    """The papers whose version came in with the last announcement (rank.last_announcement)."""
    by_id = {p.arxiv_id: p for p in papers}
    times = [(p.arxiv_id, p.version_seen_at.timestamp()) for p in papers]
    return [by_id[i] for i in rank.last_announcement(times, cfg.rank)]


def ranked(cfg: Config, s: dict[str, str], followed: Followed, papers: Iterable[Paper]) -> Top:
    """今日精选 of `papers`: what the store says of each, scored by `[rank]`."""
    follows = {p.arxiv_id: why for p, why in followed.papers}
    by_id = {p.arxiv_id: p for p in papers}
    categories = cfg.sources.arxiv.categories
    signals = [rank.Signals(
        p.arxiv_id, rank.weighed(p.sourced), p.venue.badge(s) if p.venue else None,
        tier(p.venue, categories) if p.venue else Tier.MAIN,
        *rank.link_hosts(p.comment, p.abstract_text, p.sourced), p.primary,
        _changed_words(p), tuple(slug for slug, _ in p.topics),
        (i18n.say(follows[p.arxiv_id], s),) if p.arxiv_id in follows else ())
        for p in by_id.values()]
    return [(by_id[r.arxiv_id], r) for r in rank.ranked(signals, cfg.rank)]


def _changed_words(p: Paper) -> int:
    last = p.versions[-1] if len(p.versions) > 1 else None
    if last is None or last.texts is None or last.previous is None:
        return 0
    return rank.changed_words(" ".join(last.previous), " ".join(last.texts))


def top_of_days(site: SiteData, days: dict[str, dict[str, list[Paper]]]) -> dict[str, Top]:
    """Per local day, 今日精选 of the papers that came in or were revised that day."""
    return {day: ranked(site.cfg, site.strings, site.followed,
                        [*kinds.get("new", []), *kinds.get("revised", [])])
            for day, kinds in days.items()}


def _feeds(cfg: Config, s: dict[str, str], site_feeds: list[FeedSpec],
           categories: dict[str, list[Paper]], topics: list[Topic]) -> list[FeedSpec]:
    own = [*site_feeds,
           *(FeedSpec(f"category/{c}", s["category"].format(name=c), f"category/{c}/")
             for c in categories),
           *(FeedSpec(f"topic/{t.slug}", s["topic"].format(name=t.name), f"topic/{t.slug}/")
             for t in topics)]
    briefs = [FeedSpec(f"brief/{kind}", s["feed_brief"].format(kind=s[f"brief_{kind}"]),
                       "brief/") for kind in BRIEF_KINDS]
    briefs += [FeedSpec(f"brief/{spec.slug}", s["feed_brief_of"].format(name=spec.title),
                        spec.page) for spec in own[len(site_feeds):]]
    me = [FeedSpec("me", s["feed_me"], "me/")] if cfg.follows else []
    accepted = FeedSpec("accepted", s["feed_accepted"], "accepted/")
    top = FeedSpec("top", s["feed_top"], "brief/top/")
    full = [*own, accepted, top, *me]
    # A daily brief is one entry a day already: it has no light twin.
    lights = [light(spec, s["feed_light"].format(title=spec.title)) for spec in full]
    return [*own, accepted, top, *briefs, *me, *lights]


def by_day(site: SiteData) -> dict[str, dict[str, list[Paper]]]:
    """Per local day (YYYY-MM-DD), the papers of each brief kind, newest first."""
    tz = site.lib.tz
    days: dict[str, dict[str, list[Paper]]] = defaultdict(lambda: defaultdict(list))

    def day(t: dt.datetime) -> str:
        return t.astimezone(tz).strftime("%Y-%m-%d")

    for p in site.newest["first_seen"]:
        days[day(p.first_seen)]["new"].append(p)
        if p.ai_related:
            days[day(p.first_seen)]["ai"].append(p)
    listed: set[tuple[str, str]] = set()
    for p, version, when in site.revisions:  # newest first: a day shows its last version
        date = day(when)
        if (date, p.arxiv_id) not in listed:
            listed.add((date, p.arxiv_id))
            days[date]["revised"].append(p.as_of(version, when))
    for p in site.digested:
        days[day(p.digest_created)]["digests"].append(p)  # type: ignore[arg-type]
    return days


def _revisions(lib: Library) -> list[Revision]:
    rev = stats.revisions(lib.frames["versions"], lib.frames["papers"])
    by_id = lib.by_id  # keyed by the cleaned id, as the papers show it
    out = [(by_id[clean(r["arxiv_id"])], int(r["version"]), r["first_seen"].to_pydatetime())
           for r in rev.to_dict("records") if clean(r["arxiv_id"]) in by_id]
    return sorted(out, key=lambda x: (x[2], x[0].arxiv_id, x[1]), reverse=True)


def _categories(by_update: list[Paper], wanted: tuple[str, ...]) -> dict[str, list[Paper]]:
    """The pages of the fork's own categories (a paper cross-listed elsewhere, or a followed
    or picked paper outside them, is on none of another category's)."""
    scope = set(wanted)
    members: dict[str, list[Paper]] = defaultdict(list)
    for p in by_update:
        for c in p.categories:
            if c in scope and is_category(c):  # a stored "../x" is text, never a path
                members[c].append(p)
    return {c: members[c] for c in sorted(members)}


def _topics(cfg: Config, names: dict[str, str], by_update: list[Paper]) -> list[Topic]:
    # One pass over the papers for all topics (a scan per topic is quadratic in topics).
    members: dict[str, list[Paper]] = defaultdict(list)
    reasons: dict[str, dict[str, Why]] = defaultdict(dict)
    for p in by_update:
        for slug, reason in p.topics:
            if p.arxiv_id not in reasons[slug]:
                members[slug].append(p)
            reasons[slug][p.arxiv_id] = reason
    zh = cfg.site.language == "zh-CN"
    return [Topic(t.slug, names[t.slug], (zh and t.description_zh) or t.description,
                  members[t.slug], reasons[t.slug]) for t in cfg.topics]


Group = tuple[Literal["topic", "category"], str, list[Paper]]  # (kind, name, papers)


def rest(site: SiteData, papers: Iterable[Paper], top: Top) -> list[Group]:
    """The papers of a day that 今日精选 leaves out, by topic (in the config's order), then by
    primary category (the largest first): each paper in one category, and in its topics."""
    shown = {p.arxiv_id for p, _ in top}
    left = [p for p in {p.arxiv_id: p for p in papers}.values() if p.arxiv_id not in shown]
    groups: list[Group] = []
    for t in site.topics:
        members = [p for p in left if any(slug == t.slug for slug, _ in p.topics)]
        if members:
            groups.append(("topic", t.name, members))
    by_category: dict[str, list[Paper]] = defaultdict(list)
    for p in left:
        by_category[p.primary].append(p)
    groups += [("category", c, members) for c, members in
               sorted(by_category.items(), key=lambda x: (-len(x[1]), x[0]))]
    return groups
