"""Every feed of the site, and the OPML of them all.

- all, ai, revisions (one entry per version), digests; each category and topic: every
  entry of the last [site] feed_days days (or of the last feed_days days that had
  entries), so no paper of a 1,500-paper announcement is missed;
- brief/…: the daily briefs, one entry a day with the day's list, for readers who want
  one item a day (a busy category's, say);
- top: 今日精选 of each of the last feed_days days, one entry per day and paper, its
  reasons first;
- me: a fork's [[follows]], with the watched papers' new versions, DOIs, journal-refs and
  acceptances.

Each of these but the briefs has a light twin, feeds/light/<slug>.*.xml: the same entries
(ids, titles, links) with the one-line digest and the first authors only.

Each file is capped at [site] feed_max_mb; when the cap bites, the last entry says so and
links the day's brief and the daily brief feed, whose day lists hold the rest of the
window: every paper of the last feed_days days is in some feed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from markupsafe import escape

import pipeline.site.render.feeds as _feeds
from pipeline.derive.rank import Ranked
from pipeline.site.i18n import say, say_pick
from pipeline.site.model.data import BRIEF_KINDS, SiteData, by_day, newest, top_of_days
from pipeline.site.model.history import Event
from pipeline.site.model.views import DIGEST_FIELDS, Paper, Version
from pipeline.site.output import Output, fingerprint
from pipeline.site.render.feeds import Entry, FeedSpec, recent
from pipeline.site.render.tex import plain_tex
from pipeline.text.changes import changes
from pipeline.text.reasons import Why

BRIEF_DAYS = 14  # days a daily brief feed offers: two weeks (a reader keeps what it fetched)
# The brief page of a day that a feed's left-out entries are on, by feed slug.
_BRIEF_OF = {"all": "new", "ai": "ai", "revisions": "revised", "digests": "digests"}
_T = TypeVar("_T")


def render(site: SiteData, out: Output) -> list[str]:
    """Feeds are not pages: the sitemap lists none. A feed whose entries an earlier pass of
    the build rendered the same (most: pages left out are the oldest) is kept."""
    cfg = site.cfg.site
    fs = _feeds.FeedSite(cfg.title, cfg.base_url, site.lang, site.lib.now)
    make = _Entries(site, fs, out.cache.once.setdefault("feed contents", {}))
    max_bytes = int(cfg.feed_max_mb * 1_000_000)
    for spec in site.feeds:
        entries = make.feed(spec.slug)
        paths = [out.root / f"feeds/{spec.slug}.{kind}.xml" for kind in ("atom", "rss")]
        made = fingerprint(repr((spec, fs, max_bytes, entries)))
        if out.cache.feeds.get(f"feeds/{spec.slug}") == made and all(map(Path.exists, paths)):
            for path in paths:
                out.writer.keep(path)
            continue
        atom, rss, _ = _feeds.render(spec, entries, fs, max_bytes=max_bytes,
                                     note=functools.partial(make.capped, spec))
        out.writer.put(paths[0], atom)
        out.writer.put(paths[1], rss)
        out.cache.feeds[f"feeds/{spec.slug}"] = made
    out.writer.write_text("feeds.opml", _feeds.opml(opml_folders(site), fs))
    return []


def opml_folders(site: SiteData) -> list[tuple[str, list[_feeds.FeedSpec]]]:
    """feeds.opml's folders: the site's own feeds, its categories (the configured ones,
    the only ones with pages and feeds), topics and daily briefs."""
    s = site.strings
    folders: dict[str, list[_feeds.FeedSpec]] = {
        s["opml_site"]: [], s["categories"]: [], s["topics"]: [], s["briefs"]: [],
        s["opml_light"]: []}
    for spec in site.feeds:
        kind = spec.slug.removeprefix("brief/").partition("/")[0]
        folder = ("briefs" if spec.slug.startswith("brief/") else
                  "opml_light" if spec.slug.startswith(_feeds.LIGHT) else
                  {"category": "categories", "topic": "topics"}.get(kind, "opml_site"))
        folders[s[folder]].append(spec)
    return list(folders.items())


def window(site: SiteData) -> list[Paper]:
    """The papers every feed together holds: those first seen in the last [site] feed_days
    days (or the last that many days that had any), newest first."""
    return recent(site.newest["first_seen"], lambda p: p.first_seen, site.lib.now,
                  site.cfg.site.feed_days, site.lib.tz)


class _EntryBase:
    """What every feed's entries draw on: the site, the papers of a feed, the window of
    days; and the daily briefs' entries and a capped feed's last entry."""

    def __init__(self, site: SiteData, fs: _feeds.FeedSite,
                 contents: dict[tuple[str, str, bool], str]) -> None:
        self.site, self.fs, self.s = site, fs, site.strings
        self.contents = contents  # by (id, link prefix, has a page): kept across passes
        self.days = by_day(site)
        self.slugs = {spec.slug for spec in site.feeds}
        self.prefix = ""  # how this feed's content links a site page (see FeedSite.url)

    def _members(self, slug: str) -> list[Paper]:
        """The papers of a paper feed, newest first seen first."""
        site = self.site
        if slug.startswith("category/"):
            return newest(site.categories[slug.removeprefix("category/")], "first_seen")
        if slug.startswith("topic/"):
            topic = next(t for t in site.topics if f"topic/{t.slug}" == slug)
            return newest(topic.members, "first_seen")
        new = site.newest["first_seen"]
        return [p for p in new if p.ai_related] if slug == "ai" else new

    def _recent(self, items: Sequence[_T], when: Callable[[_T], dt.datetime]) -> list[_T]:
        site = self.site
        return recent(items, when, site.lib.now, site.cfg.site.feed_days, site.lib.tz)

    def _briefs(self, kind: str) -> list[Entry]:
        """One entry a day: the day's list, each title linked, with its one-line digest."""
        s, days = self.s, sorted(self.days, reverse=True)[:BRIEF_DAYS]
        if kind in BRIEF_KINDS:
            picked = [(day, self.days[day].get(kind, [])) for day in days]
            return [self._brief(kind, day, papers, f"brief/{day}/{kind}/", s[
                f"feed_day_{kind}"].format(date=self._date(day), n=len(papers),
                                           ai=len(self.days[day].get("ai", []))))
                    for day, papers in picked if papers]
        spec = next(f for f in self.site.feeds if f.slug == kind)  # a category's or topic's
        members = {id(p) for p in self._members(kind)}
        picked = [(day, [p for p in self.days[day].get("new", []) if id(p) in members])
                  for day in days]
        return [self._brief(kind, day, papers, spec.page, s["feed_day_of"].format(
            date=self._date(day), name=spec.title, n=len(papers)))
                for day, papers in picked if papers]

    def _brief(self, kind: str, day: str, papers: list[Paper], link: str, title: str
               ) -> Entry:
        return Entry(key=f"brief/{kind}/{day}", title=title, link=link,
                     updated=max(self._when(kind, p) for p in papers),
                     content=self._day_list(papers), day=day)

    def _day_list(self, papers: Iterable[Paper]) -> str:
        items = []
        for p in papers:
            link = self.prefix + p.path if self.site.pages.has(p) else p.abs_url
            tldr = (p.digest or {}).get("tldr")
            items.append(f'<li><a href="{escape(link)}">{escape(plain_tex(p.title))}</a>'
                         + (f" — {escape(plain_tex(tldr))}" if tldr else "") + "</li>")
        return f"<ol>{''.join(items)}</ol>"

    def _when(self, kind: str, p: Paper) -> dt.datetime:
        if kind == "digests":
            return p.digest_created or p.first_seen
        if kind == "revised":
            return p.version_seen_at
        return p.first_seen

    def capped(self, spec: FeedSpec, left_out: Sequence[Entry]) -> Entry:
        """The last entry of a feed past its byte cap: how many were left out, and where
        they are (the newest left-out day's brief)."""
        s, day = self.s, left_out[0].day
        slug = spec.slug.removeprefix(_feeds.LIGHT)
        brief = (f"brief/{day}/{_BRIEF_OF[slug]}/" if slug in _BRIEF_OF
                 else spec.page or "brief/")
        mb = f"{self.site.cfg.site.feed_max_mb:g}"
        note = escape(s["feed_capped_note"].format(date=self._date(day)))
        links = [f'<a href="{escape(self.prefix + brief)}">'
                 f'{escape(s["feed_brief_link"].format(date=self._date(day)))}</a>']
        brief_feed = f"brief/{_BRIEF_OF.get(slug, slug)}"
        if brief_feed in self.slugs:  # not every feed has a daily one (accepted, me, top)
            links.append(f'<a href="{escape(self.prefix + f"feeds/{brief_feed}.atom.xml")}">'
                         f'{escape(s["feed_brief_feed"])}</a>')
        # One id a day linked: as the cut moves within a day the note is updated, not new.
        return Entry(key=f"feed/{spec.slug}/capped/{day}",
                     title=s["feed_capped"].format(n=len(left_out), mb=mb), link=brief,
                     updated=left_out[0].updated,
                     content=f"<p>{note}</p><p>{' · '.join(links)}</p>", day=day)

    def _day(self, t: dt.datetime) -> str:
        return t.astimezone(self.site.lib.tz).strftime("%Y-%m-%d")

    def _date(self, day: str) -> str:
        return self.s["feed_day"].format(date=dt.date.fromisoformat(day))


class _Entries(_EntryBase):
    """The entries of every feed; a paper's content is made once per link prefix."""

    def feed(self, slug: str) -> list[Entry]:
        self.prefix = self.fs.url("", slug)
        site = self.site
        if slug.startswith(_feeds.LIGHT):  # the full feed's entries; their light content
            # has no link that depends on the prefix
            entries = self.feed(slug.removeprefix(_feeds.LIGHT))
            self.prefix = self.fs.url("", slug)  # for the cap's note
            return entries
        if slug.startswith("brief/"):
            return self._briefs(slug.removeprefix("brief/"))
        if slug == "me":
            return self._me()
        if slug == "top":
            return self._top()
        if slug == "revisions":
            return [self._revision(p, v, when) for p, v, when in self._recent(
                site.revisions, lambda r: r[2])]
        if slug == "digests":
            return [self._paper(p, _digested(p), f"v{p.version}/digest")
                    for p in self._recent(site.digested, _digested)]
        if slug == "accepted":
            return [self._accepted(p) for p in self._recent(site.accepted,
                                                            lambda p: p.at("venue"))]
        return [self._paper(p, p.first_seen) for p in self._recent(self._members(slug),
                                                                   lambda p: p.first_seen)]

    def _paper(self, p: Paper, when: dt.datetime, suffix: str = "", why: Why = (),
               title: str = "", before: str = "", lead: str = "") -> Entry:
        """`before`: what the entry says before the paper; `lead`, what its light form
        keeps of that (a pick's reasons, a venue)."""
        said = say(why, self.s)
        head = f"<p>{escape(self.s['feed_why'].format(why=said))}</p>" if why else ""
        return Entry(
            key=f"paper/{p.arxiv_id}{suffix}", title=title or plain_tex(p.title),
            link=p.path if self.site.pages.has(p) else p.abs_url, updated=when,
            content=head + before + self._content(p),
            authors=tuple(p.authors), categories=tuple(p.categories),
            related=(p.abs_url, p.pdf_url), day=self._day(when),
            light=head + lead + self._light(p))

    def _light(self, p: Paper) -> str:
        """The one-line digest, and how many authors the light entry does not name."""
        tldr = (p.digest or {}).get("tldr")
        more = len(p.authors) - _feeds.LIGHT_AUTHORS
        return ((f"<p>{escape(plain_tex(tldr))}</p>" if tldr else "")
                + (f"<p>{escape(self.s['feed_et_al'].format(n=more))}</p>" if more > 0 else ""))

    def _content(self, paper: Paper) -> str:
        """Made once a build per link prefix and page (a paper is in several feeds)."""
        p = self.site.lib.by_id[paper.arxiv_id]
        at = (p.arxiv_id, self.prefix, self.site.pages.has(p))
        if at not in self.contents:
            self.contents[at] = self._make_content(p, self.prefix)
        return self.contents[at]

    def _make_content(self, p: Paper, prefix: str) -> str:
        """The digest first (labelled machine-written, the model named), then the abstract
        with its math as Unicode, then what else is known."""
        s = self.s
        c = escape(s["colon"])
        parts = []
        if p.digest:
            parts.append(f"<p><strong>{escape(s['feed_machine'].format(model=p.digest_model))}"
                         "</strong></p>")
            parts += [f"<p><strong>{escape(s[k])}</strong>{c}{escape(plain_tex(text))}</p>"
                      for k in DIGEST_FIELDS if (text := p.digest.get(k))]
        parts.append(f"<p><strong>{escape(s['feed_abstract'])}</strong></p>"
                     f"<p>{escape(plain_tex(p.abstract_text))}</p>")
        facts = [f"{escape(s['authors'])}{c}{escape(', '.join(p.authors))}",
                 f"{escape(s['categories'])}{c}{escape(', '.join(p.categories))}"]
        for key in ("comment", "journal_ref", "doi"):
            if value := getattr(p, key):
                value = plain_tex(value) if key == "comment" else value  # authors' TeX
                facts.append(f"{escape(s[key])}{c}{escape(value)}")
        if p.hf_upvotes is not None:
            facts.append(escape(s["feed_upvotes"].format(n=p.hf_upvotes)))
        if p.repo_url:
            facts.append(f'{escape(s["feed_code"])}{c}<a href="{escape(p.repo_url)}">'
                         f"{escape(p.repo_url)}</a>")
        links = [f'<a href="{escape(u)}">{label}</a>' for u, label in (
            (prefix + p.path if self.site.pages.has(p) else "", self.site.cfg.site.title),
            (p.abs_url, "arXiv"), (p.pdf_url, "PDF")) if u]
        parts.append("<p>" + "<br>".join(facts) + "</p><p>" + " · ".join(links) + "</p>")
        return "".join(parts)

    def _revision(self, p: Paper, version: int, when: dt.datetime) -> Entry:
        return self._paper(p, when, f"v{version}", title=f"[v{version}] {plain_tex(p.title)}",
                           before=self._changes(p, version))

    def _changes(self, p: Paper, version: int) -> str:
        """What changed from the version before: the word diff in short, and the comment
        and journal-ref as arXiv showed them with each version."""
        s = self.s
        c = escape(s["colon"])
        items = []
        v = next((x for x in p.versions if x.version == version), None)
        for i, label in ((0, "feed_changed_title"), (1, "feed_changed_abstract")):
            items += [f"<li>{escape(s[label])}{c}{_change(removed, added)}</li>"
                      for removed, added in _text_changes(v, i)]
        for key, a, b in v.meta if v else []:
            items.append(f"<li>{escape(s[key])}{c}{_change(a or '—', b or '—')}</li>")
        out = ""
        if told := v.told(s) if v else None:
            out = f"<p><strong>{escape(told[0])}</strong>{c}{escape(told[1])}</p>"
        if items:
            heading = escape(s["feed_changes"].format(version=version))
            out += f"<p><strong>{heading}</strong></p><ul>{''.join(items)}</ul>"
        return out

    def _accepted(self, p: Paper) -> Entry:
        """Keyed by the venue: a paper that moves from a workshop to a journal is news again."""
        s, v = self.s, p.venue
        assert v is not None
        line = v.said(s) + s["venue_since"].format(version=p.venue_version,
                                                   date=self.site.local(p.venue_seen))
        key = hashlib.blake2b(v.name.encode(), digest_size=6).hexdigest()  # text, not an id
        said = f"<p><strong>{escape(s['venue'])}</strong>{escape(s['colon'])}{escape(line)}</p>"
        return self._paper(p, p.at("venue"), f"/venue/{key}", title=f"[{v.badge(s)}] "
                           f"{plain_tex(p.title)}", before=said, lead=said)

    def _event(self, e: Event) -> Entry:
        p, s = self.site.lib.by_id.get(e.arxiv_id), self.s
        if p is None:  # watched, but the paper itself is not stored (anymore)
            return Entry(key=e.item, title=e.arxiv_id,
                         link=f"https://arxiv.org/abs/{e.arxiv_id}", updated=e.seen,
                         content="", day=self._day(e.seen))
        said = s[f"watch_{e.kind}_note"].format(value=e.value, version=e.version)
        note = f"<p><strong>{escape(said)}</strong></p>"
        entry = self._paper(p, e.seen, title=s[f"watch_{e.kind}"].format(
            title=plain_tex(p.title), version=e.version),
            before=note + (self._changes(p, e.version) if e.kind == "version" else ""),
            lead=note)
        return dataclasses.replace(entry, key=e.item)

    def _top(self) -> list[Entry]:
        """Each day's picks, best first within the day, the newest day first."""
        days = sorted(self.days, reverse=True)[:self.site.cfg.site.feed_days]
        tops = top_of_days(self.site, {d: self.days[d] for d in days})
        return [self._pick(p, r, day) for day in days for p, r in tops[day]]

    def _pick(self, p: Paper, ranked: Ranked, day: str) -> Entry:
        s, names = self.s, self.site.topic_names
        said = [say_pick(r, s, names) + f" ({s['points'].format(points=f'{r.points:.1f}')})"
                for r in ranked.reasons]
        reasons = (f"<p><strong>{escape(s['reasons'])}</strong>{escape(s['colon'])}"
                   f"{escape(' · '.join(said))}</p>")
        entry = self._paper(p, p.version_seen_at, f"/top/{day}", title=s["feed_top_title"].format(
            date=self._date(day), title=plain_tex(p.title)), before=reasons, lead=reasons)
        return dataclasses.replace(entry, day=day)

    def _me(self) -> list[Entry]:
        site = self.site
        followed = site.followed
        papers = [self._paper(p, p.first_seen, why=why) for p, why in followed.recent(
            site.lib.now, site.cfg.site.feed_days, site.lib.tz)]
        return _newest([*papers, *(self._event(e) for e in followed.events)])


def _digested(p: Paper) -> dt.datetime:
    assert p.digest_created is not None  # SiteData.digested holds digested papers only
    return p.digest_created


def _newest(entries: Iterable[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: (e.updated, e.key), reverse=True)


def _text_changes(v: Version | None, i: int) -> list[tuple[str, str]]:
    if v is None or v.texts is None or v.previous is None:
        return []
    return changes(plain_tex(v.previous[i]), plain_tex(v.texts[i]))


def _change(removed: str, added: str) -> str:
    parts = []
    if removed:
        parts.append(f"<del>{escape(removed)}</del>")
    if added:
        parts.append(f"<ins>{escape(added)}</ins>")
    return " → ".join(parts)
