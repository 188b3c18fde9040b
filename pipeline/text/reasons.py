"""Why a paper was picked out, as codes with arguments: never a sentence to parse back.

classify (the AI flag), topics and a fork's follows say why a paper matched as a tuple
of `Reason`s; the site and notify say it in their language from the catalogue's
`why_<code>` strings (`site.i18n.say`). The store keeps `ai_reason` and `topic_reasons`
in the English form every release has written ("keyword 'VLA' in abstract; category
cs.RO", which `papertrail topics preview` prints and forks' own scripts may read):
`stored` writes it and `read`, its inverse, turns it back into codes when the store is
read, so the format has one definition and no stored file needs rewriting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Code(StrEnum):
    CATEGORY = "category"  # one of its categories is listed
    PHRASE = "phrase"  # one of [classify] ai_phrases is in its title or abstract
    KEYWORD = "keyword"  # one of a topic's or a follow's keywords is
    AUTHOR = "author"  # one of its authors is named, spelled as named
    AUTHOR_AS = "author_as"  # … spelled otherwise on the paper (initials, accents)
    ALL_OF = "all_of"  # every phrase of an `all` group is in it
    UPVOTES = "upvotes"  # its Hugging Face upvotes reach a topic's min_upvotes
    TOPIC = "topic"  # a follow's topic holds it
    WATCH = "watch"  # a follow watches it
    FOLLOW = "follow"  # the follow, by name, whose match the reasons after it are
    TEXT = "text"  # a stored part of no known shape, shown as it is


# The names of each code's arguments, as the catalogue's strings use them (ALL_OF: the
# phrases, any number; `where`: "title" or "abstract").
ARGS: dict[Code, tuple[str, ...]] = {
    Code.CATEGORY: ("category",), Code.PHRASE: ("phrase", "where"),
    Code.KEYWORD: ("phrase", "where"), Code.AUTHOR: ("name",),
    Code.AUTHOR_AS: ("name", "spelled"), Code.UPVOTES: ("count",), Code.TOPIC: ("slug",),
    Code.WATCH: ("arxiv_id",), Code.FOLLOW: ("name",), Code.TEXT: ("text",),
}


@dataclass(frozen=True)
class Reason:
    code: Code
    args: tuple[str, ...]


Why = tuple[Reason, ...]  # a paper's reasons for one flag, topic or follow, in order


def named(reason: Reason) -> dict[str, str]:
    return dict(zip(ARGS[reason.code], reason.args, strict=True))


# The stored form: parts joined by "; ", each one of these (ALL_OF and TEXT apart).
_STORED = {
    Code.CATEGORY: "category {}", Code.PHRASE: "phrase '{}' in {}",
    Code.KEYWORD: "keyword '{}' in {}", Code.AUTHOR: "author {}",
    Code.AUTHOR_AS: "author {} (as {})", Code.UPVOTES: "{} upvotes",
}
_SEP = "; "


def stored(why: Sequence[Reason]) -> str:
    """The column's text for `why` (codes of the store only: category, phrase, keyword,
    author, all of, upvotes)."""
    return _SEP.join(_stored(r) for r in why)


def _stored(r: Reason) -> str:
    if r.code is Code.ALL_OF:
        return "all of " + ", ".join(f"'{p}'" for p in r.args)
    if r.code is Code.TEXT:
        return r.args[0]
    return _STORED[r.code].format(*r.args)


def read(text: str | None) -> Why:
    """The codes of a stored reason (none for null or empty); a part of another shape is
    kept as TEXT."""
    return tuple(_read(part) for part in text.split(_SEP)) if text else ()


def _read(part: str) -> Reason:
    head, _, rest = part.partition(" ")
    if head == "category" and rest and " " not in rest:
        return Reason(Code.CATEGORY, (rest,))
    if head in ("phrase", "keyword") and rest.startswith("'"):
        phrase, found, where = rest[1:].rpartition("' in ")
        if found and phrase and where in ("title", "abstract"):
            return Reason(Code(head), (phrase, where))
    if head == "author" and rest:
        name, found, spelled = rest.removesuffix(")").rpartition(" (as ")
        if found and rest.endswith(")") and name and spelled:
            return Reason(Code.AUTHOR_AS, (name, spelled))
        return Reason(Code.AUTHOR, (rest,))
    if part.startswith("all of '") and part.endswith("'") and len(part) > len("all of ''"):
        return Reason(Code.ALL_OF, tuple(part[len("all of '"):-1].split("', '")))
    if rest == "upvotes" and head.isdecimal():
        return Reason(Code.UPVOTES, (head,))
    return Reason(Code.TEXT, (part,))
