"""Paper pages, the bulk of the site: rendered in chunks by worker processes, each page
only when its inputs changed since it was last rendered (the key cache, pages.json)."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from collections.abc import Callable, Iterable
from pathlib import Path

import pipeline.site._diff as _diff
import pipeline.site._html as _html
import pipeline.site._math as _math
import pipeline.site._note as _note
import pipeline.site._tex as _tex
from pipeline.site._feeds import FeedSpec
from pipeline.site._views import Paper
from pipeline.site._writer import read_record, stamp
from pipeline.site.data import SiteData
from pipeline.site.output import Output

CHUNK = 1000  # paper pages per worker task
CACHE = ".papertrail/pages.json"  # per paper page: its inputs' key, the file's stamp
_TEMPLATES = ("paper", "base", "_feeds_head", "_feeds_foot", "_venue")


def tasks(site: SiteData, out: Output, papers: list[Paper], rendered: dict[str, list],
          salt: str) -> list[tuple[Callable, tuple]]:
    """render_chunk over spans of `papers`, with what every chunk reads: the keys of pages
    rendered before (by the last build, or by an earlier pass of this one) and what every
    page depends on besides its own data."""
    old = {**read_record(out.root / CACHE), **rendered}
    return [(render_chunk, (papers[a:a + CHUNK], old, salt))
            for a in range(0, len(papers), CHUNK)]


def render_chunk(site: SiteData, out: Output, papers: list[Paper], old: dict[str, list],
                 salt: str) -> dict[str, list]:
    """The pages of `papers` whose key changed; returns every page's [key, size, mtime].
    A page is trusted only while its file is the one the cache saw written: a build killed
    after rewriting it (in another language, say) leaves a file with another stamp, and
    the page is made again."""
    keys = {}
    for paper in papers:
        # The page says whether it has similar papers, not which (search.js lists them).
        state = {**vars(paper), "similar": bool(paper.similar)}
        key = hashlib.blake2b((salt + repr(state)).encode(), digest_size=16).hexdigest()
        target = out.root / paper.path
        seen = stamp(target)
        if seen and old.get(paper.path) == [key, *seen]:
            out.writer.keep(target)
        else:
            render_one(site, out, paper)
            seen = stamp(target)
        keys[paper.path] = [key, *(seen or [])]
    return keys


def render_one(site: SiteData, out: Output, paper: Paper) -> None:
    out.writer.put(out.root / paper.path, html(site, out, paper).encode("utf-8"))


def html(site: SiteData, out: Output, paper: Paper) -> str:
    """The page: its main block in the chrome rendered once."""
    feeds = page_feeds(out, paper)
    template = out.template("paper")
    ctx = out.context("../" * paper.path.count("/"), feeds, p=paper)
    if not paper.title:  # base.html leaves out the title's separator then
        return template.render({**ctx, "title": paper.title_text})
    blocks = template.new_context(ctx)
    meta, main = ("".join(template.blocks[b](blocks)) for b in ("meta", "main"))
    return out.in_chrome(paper.path, paper.title_text, meta, main, feeds)


def sizes(site: SiteData, out: Output, papers: list[Paper]) -> list[int]:
    """The bytes of these papers' pages, rendered in memory (see _budget.PaperPages.sample)."""
    return [len(html(site, out, p).encode("utf-8")) for p in papers]


def page_feeds(out: Output, paper: Paper) -> tuple[FeedSpec, ...]:
    """The feeds a paper page links: all new papers, and its primary category's when the
    site has one (a code outside arXiv's taxonomy has no feed). Two, not the site's
    eight: on 20,000 pages the other six cost megabytes."""
    everything, primary = out.feed_specs["all"], out.feed_specs.get(f"category/{paper.primary}")
    return (everything,) if primary is None else (everything, primary)


def save_keys(out: Output, keys: Iterable[dict[str, list]]) -> None:
    """Written once every page is (and atomically): a build that fails midway must not
    record keys of pages it never wrote."""
    merged = {path: key for chunk in keys for path, key in chunk.items()}
    out.writer.put(out.root / CACHE, json.dumps(merged, sort_keys=True, indent=0).encode(),
                   atomic=True)


def salt(site: SiteData) -> str:
    """What every paper page depends on besides its own data."""
    parts = [(site.theme / "templates" / f"{t}.html").read_text("utf-8") for t in _TEMPLATES]
    # TeX, math, diffs, change notes and name lists are made while a page renders, from its
    # data.
    parts += [inspect.getsource(m) for m in (_tex, _math, _diff, _note, _html)]
    # Where the site is written, by how many processes, what its feeds hold and how large
    # it may grow change no paper page's bytes.
    settings = dataclasses.replace(site.cfg.site, output=Path(), build_jobs=0, feed_days=0,
                                   feed_max_mb=0, max_site_mb=0)
    parts += [json.dumps(site.strings, sort_keys=True), repr(settings), repr(site.site_feeds)]
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()
