"""今日精选: the papers of an announcement ranked by what the store already knows of them.

No model and nothing hidden: a paper's score is the sum of the points of its reasons, each
weighted by `[rank]` (docs/CONFIG.md says why the defaults are what they are), and every
reason is shown with the paper as a chip:

- a source's signal (`Source.signals`: Hugging Face's upvotes, chip "hf"): points per
  doubling, as its weight says (1 vote is 1 point, 45 votes 5.5): a board's votes are
  heavy-tailed, and the 50th vote says less than the 5th;
- venue: a venue took it (`text.venue`: journal-ref, an acceptance in the comment, a DOI),
  worth what its tier is: a main conference the fork's categories count among their top
  venues, findings, a workshop, a journal, or another conference;
- code: it links code on a code host (its comment, abstract or the links sources report of
  it, `Source.links`);
- page: it links a project page (a github.io site, a source's project page) but no code;
- revised: its latest version changed at least `min_changed_words` words of the title and
  abstract (a typo fix is not news; a new method section is);
- topic, follow: a fork's `[[topics]]` and `[[follows]]` match it.

One primary category takes at most `max_category_share` of the view while other papers
with a reason are left: a busy field's day does not crowd out the rest of the fork's.
A paper with no reason is not in the view: the rest of the day follows it by category.
The site ranks each day's papers with it, the digest queue serves the last
announcement's head first (digest/plan.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pipeline.config import RankConfig
from pipeline.sources import Signal, links, signals
from pipeline.text.venue import Tier


class Kind(StrEnum):
    """A reason's kind, in the order of a paper's chips (the sources' signals, each its own
    `chip`, after FOLLOW); each is said by the catalogue's `reason_<kind>` with the reason's
    value."""

    FOLLOW = "follow"
    VENUE = "venue"
    CODE = "code"
    PAGE = "page"
    REVISED = "revised"
    TOPIC = "topic"


# Code: the hosts papers link it on, a repository's path. Dataset-only hubs are left out:
# data is not code.
_CODE = re.compile(
    r"https?://(?:www\.)?(?:(?:github|gitlab|bitbucket|codeberg)\.(?:com|org)/[\w.-]+/[\w.-]+"
    r"|huggingface\.co/(?!datasets/|papers/)[\w.-]+/[\w.-]+)",
    re.IGNORECASE)
# A project page in the text: a site on GitHub's or GitLab's pages (no code by itself).
_PAGE = re.compile(r"https?://[\w-]+\.(github|gitlab)\.io\b", re.IGNORECASE)
_URL = re.compile(r"https?://(?:www\.)?([\w.-]+\.[a-z]{2,})", re.IGNORECASE)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Reason:
    kind: Kind | str  # a source signal's chip is its own
    value: str  # what the chip says: the votes, the venue's badge, the host, the words, a name
    points: float
    tier: Tier | None = None  # a venue's: said on its chip


@dataclass(frozen=True)
class Ranked:
    arxiv_id: str
    score: float
    reasons: tuple[Reason, ...]  # in Kind's order


@dataclass(frozen=True)
class Signals:
    """What the store says of one paper that the score reads, as plain values."""

    arxiv_id: str
    counts: tuple[tuple[Signal, int], ...] = ()  # the sources' signals it has (`weighed`)
    venue: str | None = None  # the badge of the venue that took it
    tier: Tier = Tier.MAIN  # that venue's, for the fork's categories (text.venue.tier)
    code: str | None = None  # the host of its code
    page: str | None = None  # the host of its project page
    category: str | None = None  # its primary category
    changed_words: int = 0  # of its latest version against the one before; 0 for a v1
    topics: tuple[str, ...] = ()  # the slugs of the topics it is in
    follows: tuple[str, ...] = ()  # what its chip says of the follows it matches (the
    # site: why, in its language)


def code_host(*texts: str | None) -> str | None:
    """The host of the first code link in `texts` (github.com, …), if any."""
    for text in texts:
        if text and (found := _CODE.search(text)):
            return found.group(0).split("//", 1)[1].removeprefix("www.").split("/")[0].lower()
    return None


def page_host(*texts: str | None, project: str | None = None) -> str | None:
    """The host of a project page: a github.io (gitlab.io) site in `texts` or `project`
    ("github.io"), else `project`'s (Hugging Face's project page field: any site but a
    code host)."""
    for text in (*texts, project):
        if text and (found := _PAGE.search(text)):
            return found[1].lower() + ".io"
    if project and not code_host(project) and (site := _URL.match(project.strip())):
        return site[1].lower()
    return None


def weighed(values: Mapping[str, object]) -> tuple[tuple[Signal, int], ...]:
    """The sources' signals of a paper, from its columns' values (a library view's row)."""
    return tuple((s, v) for s in signals() if isinstance(v := values.get(s.column), int))


def link_hosts(comment: str | None, abstract: str | None, values: Mapping[str, object]
               ) -> tuple[str | None, str | None]:
    """The hosts of a paper's code and of its project page (`code_host`, `page_host`), from
    its text and the links sources report of it (its columns' values)."""
    code = [v for c in links("code") if isinstance(v := values.get(c), str)]
    pages = [v for c in links("page") if isinstance(v := values.get(c), str)]
    return (code_host(comment, abstract, *code, *pages),
            page_host(comment, abstract, project=pages[0] if pages else None))


def changed_words(before: str, after: str) -> int:
    """Words removed plus words added between two texts, order aside: a count as cheap as a
    read of both (a word diff of every revision of a year takes a minute)."""
    old, new = Counter(_WORD.findall(before.lower())), Counter(_WORD.findall(after.lower()))
    return sum(((old - new) + (new - old)).values())


def score(s: Signals, w: RankConfig) -> Ranked:
    reasons = []
    for follow in s.follows[:1]:  # one follow says it: more would count one wish twice
        reasons.append(Reason(Kind.FOLLOW, follow, w.follow))
    for signal, value in s.counts:
        if value:
            reasons.append(Reason(signal.chip, str(value),
                                  signal.weight(w) * math.log2(1 + value)))
    if s.venue:
        reasons.append(Reason(Kind.VENUE, s.venue, w.venue(s.tier), s.tier))
    if s.code:
        reasons.append(Reason(Kind.CODE, s.code, w.code))
    elif s.page:  # a page beside the code says no more than the code
        reasons.append(Reason(Kind.PAGE, s.page, w.project_page))
    if s.changed_words >= w.min_changed_words:
        reasons.append(Reason(Kind.REVISED, str(s.changed_words), w.revision))
    for slug in s.topics[:1]:  # as for follows: a paper in three topics is not three times news
        reasons.append(Reason(Kind.TOPIC, slug, w.topic))
    kept = tuple(r for r in reasons if r.points > 0)
    return Ranked(s.arxiv_id, round(sum(r.points for r in kept), 6), kept)


def ranked(signals: Iterable[Signals], w: RankConfig) -> list[Ranked]:
    """The papers with a reason, best first (ties: the newer id first), at most `w.top`; a
    primary category's papers past `w.max_category_share` of them go after the others (so
    a one-category fork still fills its view)."""
    category: dict[str, str | None] = {}
    scored = []
    for s in signals:
        r = score(s, w)
        if r.reasons:
            scored.append(r)
            category[s.arxiv_id] = s.category
    scored.sort(key=lambda r: (r.score, r.arxiv_id), reverse=True)
    cap = max(1, math.floor(w.max_category_share * w.top))
    taken: Counter[str | None] = Counter()
    within: list[Ranked] = []
    past: list[Ranked] = []
    for r in scored:
        c = category[r.arxiv_id]
        taken[c] += 1
        (within if c is None or taken[c] <= cap else past).append(r)
    return (within + past)[:w.top]


def last_announcement(times: Sequence[tuple[str, float]], w: RankConfig) -> list[str]:
    """The ids whose version came in within `w.window_hours` of the newest one (times as
    POSIX seconds): the last announcement, however many runs it took to read, and still
    there on a weekend with none."""
    newest = max((t for _, t in times), default=0.0)
    return [i for i, t in times if t > newest - w.window_hours * 3600]
