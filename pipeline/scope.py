"""A fork's scope: the papers its config selects, which is all its site shows, counts,
digests and feeds, and all `data restore --seed-from` keeps of another store.

A paper is in scope when
  one of its categories is one of `[sources.arxiv] categories` (a cross-list into them
  counts), OR a `[[follows]]` names it (a watched id, or one of its authors: these are
  fetched from all of arXiv, so the owner asked for them), OR it is a Hugging Face pick and
  `[sources.hf] outside_categories` shows picks of every field.
A follow's keywords, categories and topics select among the papers in scope; they do not
widen it (nothing fetches them from outside the categories).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline._taxonomy import CS_CATEGORIES
from pipeline.classify import first_category
from pipeline.config import Config, Follow
from pipeline.topics import AuthorIndex

# The columns `in_scope` reads.
COLUMNS = ["arxiv_id", "categories", "authors", "hf_day"]


def picks_outside(cfg: Config) -> bool:
    """Whether Hugging Face picks in none of the categories are in scope."""
    choice = cfg.sources.hf.outside_categories
    if choice == "auto":
        return set(CS_CATEGORIES) <= set(cfg.sources.arxiv.categories)
    return choice == "show"


def followed(follows: tuple[Follow, ...], papers: pa.Table) -> np.ndarray:
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


def in_scope(cfg: Config, papers: pa.Table) -> np.ndarray:
    """Per row of a papers-shaped table (arxiv_id, categories, authors; hf_day when picks
    may count): whether the fork's config selects it."""
    mask = first_category(papers["categories"], cfg.sources.arxiv.categories).astype(bool)
    if "hf_day" in papers.column_names and picks_outside(cfg):
        mask |= np.asarray(pc.is_valid(papers["hf_day"]).to_numpy(zero_copy_only=False),
                           dtype=bool)
    return mask | followed(cfg.follows, papers)


def within(cfg: Config, papers: pa.Table) -> pa.Table:
    """The rows of `papers` in scope."""
    return papers.filter(pa.array(in_scope(cfg, papers)))
