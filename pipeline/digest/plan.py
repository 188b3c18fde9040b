"""Which paper versions need a digest this run, in what order, and what the store holds.

A digest is keyed by (paper, version, language, model, prompt hash). Only each paper's
newest stored version is a candidate: digesting a version that has been replaced
would be paying for a page nobody reads.

The queue serves where readers look (`queue`): 今日精选's head of the last announcement
(pipeline.derive.rank; its papers that `[digest] selection` picks), then the sources'
picks (`Source.picks`: Hugging Face's, the most upvoted first), then the papers a fork's
`[[follows]]` and `[[topics]]` match, then new versions of digested papers, then the rest
newest first. A run's `max_per_run` takes the queue from its front.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import sources
from pipeline.config import Config, Follow
from pipeline.derive import rank, scope
from pipeline.derive import topics as topic_match
from pipeline.digest.prompt import PaperText
from pipeline.store import Store
from pipeline.text.venue import Tier, tier, venue

Key = tuple[str, int, str, str, str]  # arxiv_id, version, language, model, prompt_hash
Place = tuple[int, float]  # (tier, order within it): the queue serves the smallest first
HEAD, PICKS, FOLLOWED, NEW_VERSION, REST = range(5)  # the tiers, in the order they are served


class _Candidate(Protocol):
    """A row of the candidates frame as itertuples gives it."""

    arxiv_id: str
    version: int
    title: str | None
    abstract: str


def key_of(row: dict[str, Any]) -> Key:
    return (row["arxiv_id"], int(row["version"]), row["language"], row["model"],
            row["prompt_hash"])


@dataclass
class Plan:
    selected: int = 0
    # newest first
    todo: list[tuple[PaperText, dict[str, Any] | None]] = field(default_factory=list)
    cached: list[Key] = field(default_factory=list)
    backoff: int = 0  # failed recently; retried once next_attempt_after has passed
    exhausted: int = 0  # failed max_attempts times; waits for the paper's next version


def scoped(cfg: Config, store: Store) -> pa.Table:
    """The papers of the fork's scope, with what `selected` reads: the model is spent on
    nothing its site does not show."""
    return scope.within(cfg, store.library(list(dict.fromkeys(
        ["arxiv_id", "ai_related", "topics", *scope.columns()]))))


def selected(papers: pa.Table, selection: str) -> pd.Series:
    """The ids of the papers `[digest] selection` picks for the model."""
    flags = papers.select(["arxiv_id", "ai_related", "topics"]).to_pandas()
    if selection == "ai":
        # ai_related is filled by the classify step; not yet classified counts as not AI.
        flags = flags[flags["ai_related"].fillna(False).astype(bool)]
    elif selection == "topics":
        # A bool Series, not a bare .map(): on no rows that is an object Series (or a list,
        # empty), and indexing by it selects columns.
        flags = flags[flags["topics"].map(lambda t: t is not None and len(t) > 0).astype(bool)]
    return flags["arxiv_id"]


def due(row: dict[str, Any] | None, max_attempts: int, now: dt.datetime) -> str:
    """What to do with an item given its stored row: "cached" (made), "exhausted" (failed
    max_attempts times), "backoff" (failed lately; tried again once next_attempt_after has
    passed) or "ask"."""
    if row is None:
        return "ask"
    if row["status"] == "ok":
        return "cached"
    if (row["attempts"] or 0) >= max_attempts:
        return "exhausted"
    wait = row["next_attempt_after"]
    return "backoff" if wait is not None and wait > now else "ask"


def select(papers: pa.Table, versions: pa.Table, selection: str) -> pd.DataFrame:
    """The newest version of each selected paper that has an abstract, newest first."""
    df = versions.select(["arxiv_id", "version", "updated", "title", "abstract"]).to_pandas()
    df = df[df["arxiv_id"].isin(selected(papers, selection))]
    df = df.sort_values("version").drop_duplicates("arxiv_id", keep="last")
    df = df[df["abstract"].fillna("").str.strip() != ""]
    return df.sort_values(["updated", "arxiv_id"], ascending=False).reset_index(drop=True)


def plan(candidates: pd.DataFrame, existing: dict[Key, dict[str, Any]], language: str, model: str,
         phash: str, max_attempts: int, now: dt.datetime,
         places: dict[str, Place] | None = None) -> Plan:
    """What to do this run: the todo list in the queue's order (`places`, from `queue`);
    a new version of a paper with a digest of an older one comes before the rest (its page
    shows the older digest, and says so, until then); the rest newest first."""
    out = Plan(selected=len(candidates))
    digested: dict[str, int] = {}  # the newest version with a digest, by paper
    for k, stored in existing.items():
        if stored["status"] == "ok" and k[2] == language:
            digested[k[0]] = max(digested.get(k[0], 0), k[1])
    for c in cast("Iterator[_Candidate]", candidates.itertuples(index=False)):
        key: Key = (c.arxiv_id, int(c.version), language, model, phash)
        row = existing.get(key)
        state = due(row, max_attempts, now)
        if state == "cached":
            out.cached.append(key)
        elif state == "exhausted":
            out.exhausted += 1
        elif state == "backoff":
            out.backoff += 1
        else:
            out.todo.append((PaperText(c.arxiv_id, int(c.version), c.title or "", c.abstract),
                             row))
    places = places or {}

    def place(item: tuple[PaperText, dict[str, Any] | None]) -> Place:
        paper = item[0]
        if paper.arxiv_id in places:
            return places[paper.arxiv_id]
        return (NEW_VERSION if 0 < digested.get(paper.arxiv_id, 0) < paper.version else REST, 0)

    out.todo.sort(key=place)  # stable: newest first within a tier
    return out


def queue(cfg: Config, library: pa.Table, versions: pa.Table) -> dict[str, Place]:
    """The place in the queue of each paper that is not among "the rest": 今日精选's head
    in its order, the sources' picks (`Source.picks`: Hugging Face's, by upvotes), the
    papers follows and topics match."""
    places: dict[str, Place] = {}
    ids = cast(list[str], library["arxiv_id"].to_pylist())
    for i in _followed(library, cfg.follows) | _in_topics(library):
        places[ids[i]] = (FOLLOWED, 0)
    for picks in sources.picks().values():
        order = library[picks.order].to_pylist()
        for i, day in enumerate(library[picks.day].to_pylist()):
            if day is not None:
                places[ids[i]] = (PICKS, -(order[i] or 0))
    for n, ranked in enumerate(head(cfg, library, versions)):
        places[ranked.arxiv_id] = (HEAD, n)
    return places


def head(cfg: Config, library: pa.Table, versions: pa.Table) -> list[rank.Ranked]:
    """今日精选 of the last announcement, from the library view as the site ranks it."""
    seen = library["version_seen_at"].to_pylist()
    ids = cast(list[str], library["arxiv_id"].to_pylist())
    recent = set(rank.last_announcement(
        [(i, t.timestamp()) for i, t in zip(ids, seen, strict=True) if t is not None],
        cfg.rank))
    rows = library.filter(pc.is_in(library["arxiv_id"], pa.array(sorted(recent), pa.string())))
    followed = {rows["arxiv_id"][i].as_py() for i in _followed(rows, cfg.follows)}
    texts = _last_two(versions, recent)
    signals = []
    for r in rows.select(["arxiv_id", "abstract", "comment", "journal_ref", "doi",
                          *sources.source_columns(), "primary_category",
                          "topics"]).to_pylist():
        took = venue(r["comment"], r["journal_ref"], r["doi"])
        before, after = texts.get(r["arxiv_id"], ("", ""))
        signals.append(rank.Signals(
            r["arxiv_id"], rank.weighed(r), took.short if took else None,
            tier(took, cfg.sources.arxiv.categories) if took else Tier.MAIN,
            *rank.link_hosts(r["comment"], r["abstract"], r), r["primary_category"],
            rank.changed_words(before, after) if before else 0, tuple(r["topics"] or ()),
            ("follow",) if r["arxiv_id"] in followed else ()))
    return rank.ranked(signals, cfg.rank)


def _last_two(versions: pa.Table, ids: set[str]) -> dict[str, tuple[str, str]]:
    """(the version before's, the latest's) title and abstract of each revised paper."""
    rows = (versions.select(["arxiv_id", "version", "title", "abstract"])
            .filter(pc.is_in(versions["arxiv_id"], pa.array(sorted(ids), pa.string())))
            .sort_by([("arxiv_id", "ascending"), ("version", "ascending")]).to_pylist())
    out: dict[str, tuple[str, str]] = {}
    # Pairs of neighbours of one paper, in version order: its last pair is what stays.
    for a, b in itertools.pairwise(rows):
        if a["arxiv_id"] == b["arxiv_id"]:
            out[b["arxiv_id"]] = (f"{a['title'] or ''} {a['abstract'] or ''}",
                                  f"{b['title'] or ''} {b['abstract'] or ''}")
    return out


def _in_topics(library: pa.Table) -> set[int]:
    return {i for i, t in enumerate(library["topics"].to_pylist()) if t}


def _followed(papers: pa.Table, follows: tuple[Follow, ...]) -> set[int]:
    """The rows any of `follows` matches, as the site's follows page matches them."""
    if not follows:
        return set()
    names = (topic_match.AuthorIndex(papers["authors"])
             if any(f.authors for f in follows) else None)
    ids, slugs = papers["arxiv_id"].to_pylist(), papers["topics"].to_pylist()
    rows: set[int] = set()
    for f in follows:
        rows |= {i for i, _ in topic_match.follow_matches(papers, f, names)}
        rows |= {i for i, (arxiv_id, own) in enumerate(zip(ids, slugs, strict=True))
                 if arxiv_id in f.watch or set(own or ()) & set(f.topics)}
    return rows
