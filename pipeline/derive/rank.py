"""今日精选: the papers of an announcement ranked by what the store already knows of them.

No model and nothing hidden: a paper's score is the sum of the points of its reasons, each
weighted by `[rank]` (docs/CONFIG.md says why the defaults are what they are), and every
reason is shown with the paper as a chip:

- hf: its Hugging Face upvotes, points per doubling (1 vote is 1 point, 45 votes 5.5): a
  board's votes are heavy-tailed, and the 50th vote says less than the 5th;
- venue: a venue took it (`text.venue`: journal-ref, an acceptance in the comment, a DOI);
- code: it links code or a project page (its comment, abstract or Hugging Face's links);
- revised: its latest version changed at least `min_changed_words` words of the title and
  abstract (a typo fix is not news; a new method section is);
- topic, follow: a fork's `[[topics]]` and `[[follows]]` match it.

A paper with no reason is not in the view: the rest of the day follows it by category.
The site ranks each day's papers with it, the digest queue serves the last
announcement's head first (digest/plan.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pipeline.config import RankConfig


class Kind(StrEnum):
    """A reason's kind, in the order of a paper's chips; each is said by the catalogue's
    `reason_<kind>` with the reason's value."""

    FOLLOW = "follow"
    HF = "hf"
    VENUE = "venue"
    CODE = "code"
    REVISED = "revised"
    TOPIC = "topic"


# Code or a project page: the hosts papers link them on (a bare "github.io" is a project
# page). Dataset-only hubs are left out: data is not code.
_CODE = re.compile(
    r"https?://(?:www\.)?(?:(?:github|gitlab|bitbucket|codeberg)\.(?:com|org)/[\w.-]+/[\w.-]+"
    r"|huggingface\.co/(?!datasets/|papers/)[\w.-]+/[\w.-]+|[\w-]+\.github\.io\b)",
    re.IGNORECASE)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Reason:
    kind: Kind
    value: str  # what the chip says: the votes, the venue's badge, the host, the words, a name
    points: float


@dataclass(frozen=True)
class Ranked:
    arxiv_id: str
    score: float
    reasons: tuple[Reason, ...]  # in Kind's order


@dataclass(frozen=True)
class Signals:
    """What the store says of one paper that the score reads, as plain values."""

    arxiv_id: str
    upvotes: int | None = None
    venue: str | None = None  # the badge of the venue that took it
    code: str | None = None  # the host of its code or project page
    changed_words: int = 0  # of its latest version against the one before; 0 for a v1
    topics: tuple[str, ...] = ()  # the slugs of the topics it is in
    follows: tuple[str, ...] = ()  # what its chip says of the follows it matches (the
    # site: why, in its language)


def code_host(*texts: str | None) -> str | None:
    """The host of the first code or project link in `texts` (github.com, …), if any."""
    for text in texts:
        if text and (found := _CODE.search(text)):
            host = found.group(0).split("//", 1)[1].removeprefix("www.").split("/", 1)[0]
            return "github.io" if host.endswith(".github.io") else host.lower()
    return None


def changed_words(before: str, after: str) -> int:
    """Words removed plus words added between two texts, order aside: a count as cheap as a
    read of both (a word diff of every revision of a year takes a minute)."""
    old, new = Counter(_WORD.findall(before.lower())), Counter(_WORD.findall(after.lower()))
    return sum(((old - new) + (new - old)).values())


def score(s: Signals, w: RankConfig) -> Ranked:
    reasons = []
    for follow in s.follows[:1]:  # one follow says it: more would count one wish twice
        reasons.append(Reason(Kind.FOLLOW, follow, w.follow))
    if s.upvotes:
        reasons.append(Reason(Kind.HF, str(s.upvotes), w.hf_upvotes * math.log2(1 + s.upvotes)))
    if s.venue:
        reasons.append(Reason(Kind.VENUE, s.venue, w.venue))
    if s.code:
        reasons.append(Reason(Kind.CODE, s.code, w.code))
    if s.changed_words >= w.min_changed_words:
        reasons.append(Reason(Kind.REVISED, str(s.changed_words), w.revision))
    for slug in s.topics[:1]:  # as for follows: a paper in three topics is not three times news
        reasons.append(Reason(Kind.TOPIC, slug, w.topic))
    kept = tuple(r for r in reasons if r.points > 0)
    return Ranked(s.arxiv_id, round(sum(r.points for r in kept), 6), kept)


def ranked(signals: Iterable[Signals], w: RankConfig) -> list[Ranked]:
    """The papers with a reason, best first (ties: the newer id first), at most `w.top`."""
    scored = [r for r in (score(s, w) for s in signals) if r.reasons]
    scored.sort(key=lambda r: (r.score, r.arxiv_id), reverse=True)
    return scored[:w.top]


def last_announcement(times: Sequence[tuple[str, float]], w: RankConfig) -> list[str]:
    """The ids whose version came in within `w.window_hours` of the newest one (times as
    POSIX seconds): the last announcement, however many runs it took to read, and still
    there on a weekend with none."""
    newest = max((t for _, t in times), default=0.0)
    return [i for i, t in times if t > newest - w.window_hours * 3600]
