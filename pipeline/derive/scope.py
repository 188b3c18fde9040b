"""A fork's scope: the papers its config selects, which is all its site shows, counts,
digests and feeds, and all `data restore --seed-from` keeps of another store.

A paper is in scope when
  one of its categories is one of `[sources.arxiv] categories` (a cross-list into them
  counts), OR a `[[follows]]` names it (a watched id, or one of its authors: these are
  fetched from all of arXiv, so the owner asked for them), OR a source picked it
  (`Source.picks`: Hugging Face's daily list) and shows its picks of every field
  (`[sources.hf] outside_categories`).
A follow's keywords, categories and topics select among the papers in scope; they do not
widen it (nothing fetches them from outside the categories).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.config import Config, Follow
from pipeline.derive.classify import first_category
from pipeline.derive.topics import AuthorIndex
from pipeline.sources import picks


def columns() -> list[str]:
    """The columns `in_scope` reads: the papers' own, and the day of each source's picks."""
    return ["arxiv_id", "categories", "authors", *(p.day for p in picks().values())]


def followed(follows: tuple[Follow, ...], papers: pa.Table) -> npt.NDArray[np.bool_]:
    """Per row: a follow watches it or names one of its authors."""
    watched = [i for f in follows for i in f.watch]
    hit = np.asarray(pc.is_in(papers["arxiv_id"], pa.array(watched, pa.string()))
                     .to_numpy(zero_copy_only=False), dtype=bool)
    named = [f for f in follows if f.authors]
    if named and papers.num_rows:
        index = AuthorIndex(papers["authors"])
        for follow in named:
            hit |= ~np.asarray(pd.isna(index.match(follow.authors, follow.match_initials,
                                                   papers.num_rows)), dtype=bool)
    return hit


def in_scope(cfg: Config, papers: pa.Table) -> npt.NDArray[np.bool_]:
    """Per row of a papers-shaped table (arxiv_id, categories, authors; the days of the
    sources' picks when they may count): whether the fork's config selects it."""
    mask = first_category(papers["categories"], cfg.sources.arxiv.categories).astype(bool)
    for chosen in picks().values():
        if chosen.day in papers.column_names and chosen.outside(cfg):
            mask |= np.asarray(pc.is_valid(papers[chosen.day]).to_numpy(
                zero_copy_only=False), dtype=bool)
    return mask | followed(cfg.follows, papers)


def within(cfg: Config, papers: pa.Table) -> pa.Table:
    """The rows of `papers` in scope: the table itself when all are (a fork of all cs.*),
    as filtering copies every column (0.2-0.5 s at 200,000 papers)."""
    mask = in_scope(cfg, papers)
    return papers if mask.all() else papers.filter(pa.array(mask))


def unserved(cfg: Config, stored: set[str]) -> list[str]:
    """What each `[[follows]]` asks that the fork cannot bring (`topics check` says it):
    look-ups turned off or beyond the run's bound, categories outside the fork's, watched
    papers the store still lacks (`stored`: its ids)."""
    acfg = cfg.sources.arxiv
    out = []
    fetching = acfg.enabled and acfg.lookups_per_run > 0
    why_not = ("[sources.arxiv] enabled = false" if not acfg.enabled
               else "[sources.arxiv] lookups_per_run = 0")
    for i, follow in enumerate(cfg.follows):
        key = f"follows[{i}]" + (f" ({follow.name})" if follow.name else "")
        if (follow.authors or follow.watch) and not fetching:
            out.append(f"{key}: its authors and watched papers are not fetched from outside "
                       f"the categories ({why_not}); only papers in them match")
        if outside := [c for c in follow.categories if c not in acfg.categories]:
            out.append(f"{key}: categories {', '.join(outside)} are not in [sources.arxiv] "
                       "categories: nothing fetches them, so only papers its authors or "
                       "watched ids bring match")
        if fetching and (missing := [w for w in follow.watch if w not in stored]):
            out.append(f"{key}: watched {', '.join(missing)} not in the store yet (no run "
                       "has looked it up since it was added, or arXiv has no such paper)")
    authors = {(a, f.match_initials) for f in cfg.follows for a in f.authors}
    ids = {w for f in cfg.follows for w in f.watch}
    left = acfg.lookups_per_run - math.ceil(len(ids) / acfg.id_batch_size)
    if fetching and authors and left < len(authors):
        out.append(f"follows: {len(authors)} authors to look up and room for "
                   + (f"{left} a run ([sources.arxiv] lookups_per_run = "
                      f"{acfg.lookups_per_run}): each is looked up every "
                      f"{math.ceil(len(authors) / left)} runs" if left > 0 else
                      f"none (the watched ids take all {acfg.lookups_per_run} look-ups of "
                      "a run): no author is looked up; raise [sources.arxiv] lookups_per_run"))
    return out
