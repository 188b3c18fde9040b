"""What `papertrail notify` sends: the personal feed's items (the papers the fork's
`[[follows]]` match, in the feed's window, and every event of a watched paper), each under
the key of its feed entry, and optionally the newest papers of the last announcement.

Made from the same `site.model.follows.match` and `Followed.recent` the personal feed is made
from, so a channel says what the feed says. Text is plain (LaTeX as Unicode, untrusted):
each channel escapes it for its markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config import Config
from pipeline.site import i18n
from pipeline.site.model.data import last_announcement, ranked
from pipeline.site.model.follows import match as match_follows
from pipeline.site.model.history import Event
from pipeline.site.model.views import Library, Paper
from pipeline.site.render.tex import excerpt, plain_tex

AUTHORS_SHOWN = 5  # then "et al.": a message lists many papers
NOTE_CHARS = 300  # a digest's line or a journal-ref, shortened: a message is no abstract
TITLE_CHARS = 300  # arXiv titles stay far below; a longer one would not fit a chat message


@dataclass(frozen=True)
class Item:
    key: str  # what the ledger keys: paper/<id> or watch/<id>/<event>, as the me feed
    arxiv_id: str
    title: str
    authors: str
    url: str  # the paper on arXiv (its page on the site is one click further)
    why: str  # why it is sent: the follow that matched, the watch, the day's top
    note: str = ""  # the event (a new version, a DOI …) or the digest's one line


@dataclass(frozen=True)
class Selection:
    followed: list[Item]  # the personal feed's items, newest first
    top: list[Item]  # the day's top papers not among them, as many as a channel asks for
    retry: dict[str, Item]  # the items a failed try named that the library still holds

    def new(self, top: int) -> list[Item]:
        return [*self.followed, *self.top[:top]]


def select(cfg: Config, lib: Library, top: int, failed: set[str]) -> Selection:
    """`top`: the most top papers a channel asks for; `failed`: the keys of failed tries,
    resent while the library holds them, even past the feed's window."""
    s = i18n.strings(cfg.site.language)
    followed = match_follows(cfg.follows, lib)
    why = {p.arxiv_id: s["feed_why"].format(why=i18n.say(reason, s))
           for p, reason in followed.papers}
    dated = [(p.first_seen, _paper(p, why[p.arxiv_id])) for p, _ in
             followed.recent(lib.now, cfg.site.feed_days, lib.tz)]
    dated += [(e.seen, _event(e, lib, s)) for e in followed.events]
    items = [i for _, i in sorted(dated, key=lambda x: (x[0], x[1].key), reverse=True)]
    # 今日精选's first, past the papers the follows already bring
    picks = [p for p, _ in ranked(cfg, s, followed, last_announcement(cfg, lib.papers))
             if p.arxiv_id not in why][:top] if top else []
    tops = [_paper(p, s["notify_top"]) for p in picks]
    retry = {i.key: i for i in [*items, *tops] if i.key in failed}
    events = {e.item: e for e in followed.events}
    for key in failed - retry.keys():
        kind, _, arxiv_id = key.partition("/")
        if key in events:
            retry[key] = _event(events[key], lib, s)
        elif kind == "paper" and (p := lib.by_id.get(arxiv_id)) is not None:
            retry[key] = _paper(p, why.get(arxiv_id, s["notify_top"]))
    return Selection(items, tops, retry)


def _authors(names: list[str]) -> str:
    shown = ", ".join(plain_tex(a) for a in names[:AUTHORS_SHOWN])
    return shown + (" et al." if len(names) > AUTHORS_SHOWN else "")


def _paper(p: Paper, why: str) -> Item:
    line = (p.digest or {}).get("tldr") or ""
    return Item(f"paper/{p.arxiv_id}", p.arxiv_id, _one_line(excerpt(p.title_text, TITLE_CHARS)),
                _one_line(_authors(p.authors)), p.abs_url, _one_line(why),
                _one_line(plain_tex(excerpt(line, NOTE_CHARS))) if line else "")


def _event(e: Event, lib: Library, s: dict[str, str]) -> Item:
    p = lib.by_id.get(e.arxiv_id)
    named = excerpt(p.title_text, TITLE_CHARS) if p else e.arxiv_id
    title = s[f"watch_{e.kind}"].format(title=named, version=e.version)
    note = s[f"watch_{e.kind}_note"].format(value=e.value, version=e.version)
    return Item(e.item, e.arxiv_id, _one_line(title),
                _one_line(_authors(p.authors)) if p else "",
                p.version_url(e.version) if p else f"https://arxiv.org/abs/{e.arxiv_id}",
                s["notify_watch"], _one_line(excerpt(note, NOTE_CHARS)))


def _one_line(text: str) -> str:
    """Line breaks and runs of space as one space: no stored text starts a line of markup
    (a Markdown heading, a quote) or a header."""
    return " ".join(text.split())
