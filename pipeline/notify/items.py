"""What `papertrail notify` sends: the personal feed's items (the papers the fork's
`[[follows]]` match, in the feed's window, and every event of a watched paper), each under
the key of its feed entry, and optionally the newest papers of the last announcement.
Each carries what the site shows of its paper: its page there, the digest's line (else the
abstract's first sentence), its topics by name, and why it came.

Made from the same `site.model.follows.match` and `Followed.recent` the personal feed is made
from, so a channel says what the feed says. Text is plain (LaTeX as Unicode, untrusted):
each channel escapes it for its markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pipeline.config import Config
from pipeline.derive import rank
from pipeline.site import i18n
from pipeline.site.model.data import last_announcement, ranked, topic_names
from pipeline.site.model.follows import match as match_follows
from pipeline.site.model.history import Event
from pipeline.site.model.views import Library, Paper
from pipeline.site.render.tex import excerpt, plain_tex
from pipeline.text.reasons import Code, Why

AUTHORS_SHOWN = 5  # then "et al.": a message lists many papers
NOTE_CHARS = 300  # a digest's line or a journal-ref, shortened: a message is no abstract
TITLE_CHARS = 300  # arXiv titles stay far below; a longer one would not fit a chat message
# A sentence's end, as the abstract's first sentence is cut (a "3.5" or "e.g. a" runs on)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])|(?<=[。！？])")


@dataclass(frozen=True)
class Item:
    key: str  # what the ledger keys: paper/<id> or watch/<id>/<event>, as the me feed
    arxiv_id: str
    title: str  # the paper's (its id while the library lacks it)
    authors: str
    url: str  # the paper on arXiv (a watched paper's news: the version it is about)
    why: str  # why it is sent: the follow that matched, the watch, the day's top and why
    note: str = ""  # a watched paper's news: a new version, a DOI …
    page: str = ""  # the paper's page on the site; "" without [site] base_url
    line: str = ""  # the digest's one line, else the abstract's first sentence
    topics: tuple[str, ...] = ()  # the site's topics it is in, named in the site's language
    group: str = ""  # what a weekly digest files it under: the follow, topic or top pick


WEEK_DAYS = 7  # a weekly digest's span


@dataclass(frozen=True)
class Selection:
    followed: list[Item]  # the personal feed's items and the past week's, newest first
    top: list[Item]  # the day's top papers not among them, as many as a channel asks for
    retry: dict[str, Item]  # the items a failed try named that the library still holds
    feed: frozenset[str]  # the keys the personal feed holds (its window; every event)
    week: frozenset[str]  # the keys of the past week (a weekly digest's)

    def new(self, top: int, weekly: bool = False) -> list[Item]:
        window = self.week if weekly else self.feed
        return [*(i for i in self.followed if i.key in window), *self.top[:top]]


def select(cfg: Config, lib: Library, top: int, failed: set[str]) -> Selection:
    """`top`: the most top papers a channel asks for; `failed`: the keys of failed tries,
    resent while the library holds them, even past the feed's window."""
    s = i18n.strings(cfg.site.language)
    made = _Maker(cfg, lib, s)
    followed = match_follows(cfg.follows, lib)
    why = {p.arxiv_id: (s["feed_why"].format(why=i18n.say(reason, s)), _group(reason, made))
           for p, reason in followed.papers}
    windows = [{p.arxiv_id: p for p, _ in followed.recent(lib.now, days, lib.tz)}
               for days in (cfg.site.feed_days, WEEK_DAYS)]
    papers = windows[0] | windows[1]
    dated = [(p.first_seen, made.paper(p, *why[i])) for i, p in papers.items()]
    dated += [(e.seen, made.event(e, followed.events)) for e in followed.events]
    items = [i for _, i in sorted(dated, key=lambda x: (x[0], x[1].key), reverse=True)]
    events = {e.item: e for e in followed.events}
    feed, week = ({f"paper/{i}" for i in w} | events.keys() for w in windows)
    # 今日精选's first, past the papers the follows already bring
    picks = [(p, r) for p, r in ranked(cfg, s, followed, last_announcement(cfg, lib.papers))
             if p.arxiv_id not in why][:top] if top else []
    tops = [made.paper(p, made.top(r), s["notify_top"]) for p, r in picks]
    retry = {i.key: i for i in [*items, *tops] if i.key in failed}
    for key in failed - retry.keys():
        kind, _, arxiv_id = key.partition("/")
        if key in events:
            retry[key] = made.event(events[key], followed.events)
        elif kind == "paper" and (p := lib.by_id.get(arxiv_id)) is not None:
            retry[key] = made.paper(p, *why.get(arxiv_id, (s["notify_top"], s["notify_top"])))
    return Selection(items, tops, retry, frozenset(feed), frozenset(week))


def _group(why: Why, made: _Maker) -> str:
    """The follow's name, else what matched: a topic by its name, a watch, an author …"""
    if why and why[0].code is Code.FOLLOW:
        return why[0].args[0]
    if why and why[0].code is Code.TOPIC:
        return made.topic_names.get(why[0].args[0], why[0].args[0])
    return i18n.say(why[:1], made.s)


class _Maker:
    """Items of one run: a paper's page, line and topics as the site shows them."""

    def __init__(self, cfg: Config, lib: Library, s: i18n.Strings) -> None:
        self.s, self.lib = s, lib
        self.base = cfg.site.base_url.rstrip("/")
        self.topic_names = topic_names(cfg)

    def top(self, ranked_as: rank.Ranked) -> str:
        """Why a top pick is one, as 今日精选 says it: "Top pick today: Accepted: ICRA 2026"."""
        said = self.s["semicolon"].join(i18n.say_pick(r, self.s, self.topic_names)
                                        for r in ranked_as.reasons)
        return f"{self.s['notify_top']}: {said}" if said else self.s["notify_top"]

    def page(self, p: Paper) -> str:
        """The paper's page on the site, as its feeds link it (Paper.path under base_url):
        a page past paper_pages_days still shows the paper (404.html finds it)."""
        return f"{self.base}/{p.path}" if self.base and p.pageable else ""

    def paper(self, p: Paper, why: str, group: str) -> Item:
        return replace(self._of(p), key=f"paper/{p.arxiv_id}", why=_one_line(why),
                       group=_one_line(group))

    def event(self, e: Event, events: list[Event]) -> Item:
        """A watched paper's news; its first reading is the paper coming in, not news of
        a version."""
        s, p = self.s, self.lib.by_id.get(e.arxiv_id)
        first = min((x for x in events if x.arxiv_id == e.arxiv_id),
                    key=lambda x: (x.seen, x.version))
        kind = "first" if e == first else e.kind
        note = s[f"watch_{kind}_note"].format(value=e.value, version=e.version)
        base = self._of(p) if p else Item("", e.arxiv_id, e.arxiv_id, "",
                                          f"https://arxiv.org/abs/{e.arxiv_id}", "")
        return replace(base, key=e.item,
                       url=p.version_url(e.version) if p else base.url,
                       why=s["notify_watch"], group=s["notify_watch"],
                       note=_one_line(excerpt(note, NOTE_CHARS)))

    def _of(self, p: Paper) -> Item:
        line = (p.digest or {}).get("tldr") or _first_sentence(p.abstract_text)
        return Item("", p.arxiv_id, _one_line(excerpt(p.title_text, TITLE_CHARS)),
                    _one_line(_authors(p.authors)), p.abs_url, "", page=self.page(p),
                    line=_one_line(plain_tex(excerpt(line, NOTE_CHARS))) if line else "",
                    topics=tuple(_one_line(self.topic_names.get(slug, slug))
                                 for slug, _ in p.topics))


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]


def _authors(names: list[str]) -> str:
    shown = ", ".join(plain_tex(a) for a in names[:AUTHORS_SHOWN])
    return shown + (" et al." if len(names) > AUTHORS_SHOWN else "")


def _one_line(text: str) -> str:
    """Line breaks and runs of space as one space: no stored text starts a line of markup
    (a Markdown heading, a quote) or a header."""
    return " ".join(text.split())
