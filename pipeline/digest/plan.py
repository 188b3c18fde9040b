"""Which paper versions need a digest this run, and what the store already holds.

A digest is keyed by (paper, version, language, model, prompt hash). Only each paper's
newest stored version is a candidate: digesting a version that has been replaced
would be paying for a page nobody reads.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa

from pipeline import scope
from pipeline.config import Config
from pipeline.digest.prompt import PaperText
from pipeline.store import Store

Key = tuple[str, int, str, str, str]  # arxiv_id, version, language, model, prompt_hash


def key_of(row: dict) -> Key:
    return (row["arxiv_id"], int(row["version"]), row["language"], row["model"],
            row["prompt_hash"])


@dataclass
class Plan:
    selected: int = 0
    todo: list[tuple[PaperText, dict | None]] = field(default_factory=list)  # newest first
    cached: list[Key] = field(default_factory=list)
    backoff: int = 0  # failed recently; retried once next_attempt_after has passed
    exhausted: int = 0  # failed max_attempts times; waits for the paper's next version


SCOPED = list(dict.fromkeys(["arxiv_id", "ai_related", "topics", *scope.COLUMNS]))


def scoped(cfg: Config, store: Store) -> pa.Table:
    """The papers of the fork's scope, with what `selected` reads: the model is spent on
    nothing its site does not show."""
    return scope.within(cfg, store.library(SCOPED))


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


def due(row: dict | None, max_attempts: int, now: dt.datetime) -> str:
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


def plan(candidates: pd.DataFrame, existing: dict[Key, dict], language: str, model: str,
         phash: str, max_attempts: int, now: dt.datetime) -> Plan:
    """What to do this run: the todo list newest first, except that a new version of a
    paper with a digest of an older one comes before every new paper (its page shows the
    older digest, and says so, until then)."""
    out = Plan(selected=len(candidates))
    digested: dict[str, int] = {}  # the newest version with a digest, by paper
    for k, stored in existing.items():
        if stored["status"] == "ok" and k[2] == language:
            digested[k[0]] = max(digested.get(k[0], 0), k[1])
    for c in candidates.itertuples(index=False):
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
    out.todo.sort(key=lambda t: not 0 < digested.get(t[0].arxiv_id, 0) < t[0].version)  # stable
    return out
