"""The generator that renders every data page straight from the store.

Pelican's own article machinery never sees a paper: markdown is ~30× slower at
this scale, and its taxonomies have a quadratic step. The flow is one way: the store
→ Library (_views) → SiteData (data) → the page kinds (pages.*) → Output → the writer.
"""

from __future__ import annotations

import gc
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pelican.generators import Generator

import pipeline.site._workers as _workers
import pipeline.site.data as data
from pipeline.config import Config
from pipeline.site._budget import PaperPages
from pipeline.site._views import load
from pipeline.site._writer import SkipUnchangedWriter
from pipeline.site.output import Cards, Output
from pipeline.site.pages import (
    accepted,
    briefs,
    categories,
    feeds,
    hf,
    home,
    lists,
    me,
    missing,
    paper,
    search,
    sitemap,
    sources,
    static,
    topics,
)
from pipeline.store import Store

log = logging.getLogger(__name__)

# Rendered in this process while the workers run; each reads only the SiteData.
_IN_PROCESS = (lists.render, briefs.render, categories.render, topics.render, hf.render,
               sources.render, home.render, feeds.render, me.render, search.render_pages,
               static.render, accepted.render, missing.render)


class PaperTrailGenerator(Generator):
    """Registered through the get_generators signal (see pipeline.site.register)."""

    def generate_output(self, writer: SkipUnchangedWriter) -> None:
        cfg: Config = self.settings["PAPERTRAIL_CONFIG"]  # see pipeline.site.settings
        # The library is millions of objects and no cycles: the cyclic collector would
        # walk it again and again as it grows (a quarter of the load at 200k papers), and
        # in worker processes its walks would copy every page they share with this one.
        # So it is left out of every collection while the build lasts (frozen).
        gc.disable()
        try:
            lib = load(cfg, Store(cfg.store_path), self.settings.get("PAPERTRAIL_NOW"))
            site = data.compute(cfg, lib, Path(self.theme))
            gc.freeze()
        finally:
            gc.enable()
        try:
            self._render(site, writer)
        finally:
            gc.unfreeze()

    def _render(self, site: data.SiteData, writer: SkipUnchangedWriter) -> None:
        """Pass after pass until the site fits under [site] max_site_mb. Pages render from
        has_page as the papers hold it when they render, so a pass needs no SiteData of its
        own; the cards, the paper pages and the search index carry over (Carried)."""
        pages = PaperPages.of(site.lib.papers, site.cfg, paper.salt(site))
        others = writer.files()  # Pelican's own pages (about), made before this generator
        cards: Cards = {}
        carried = Carried()
        while True:
            if render_site(Output(site, writer, self.env, cards), pages, carried) \
                    and pages.fit(writer):
                break
            writer.restart(others)


@dataclass
class Carried:
    """What a pass hands the next, none of it depending on which pages are kept: the keys
    of the paper pages and of the search index it rendered."""

    pages: dict[str, list] = field(default_factory=dict)
    index: str | None = None


def render_site(out: Output, pages: PaperPages, carried: Carried) -> bool:
    """The site, its paper pages only when they would fit even if nothing else took any
    room; False when the pages kept, as estimated, do not fit in what the rest leaves, and
    the oldest gave way: the site is to be rendered again without them (see _budget)."""
    site = out.site
    sample = pages.sample()
    sizes = paper.sizes(site, out, sample)  # 2,000 pages at most: ~0.5 s
    # The index and the paper pages, newest first, go to worker processes while this one
    # renders the rest; the index first, as the longest single part.
    rendering = pages.to_render(sizes)
    workers = _workers.Workers(out, _workers.jobs(site.cfg.site.build_jobs))
    workers.start([(search.render_index, (carried.index,)),
                   *paper.tasks(site, out, rendering or [], carried.pages, pages.salt)])
    names = [path for render in _IN_PROCESS for path in render(site, out)]
    names += [p.path for p in site.paged]
    sitemap.render(site, out, names)
    if rendering is None and workers.running():
        # The pages wait for the rest to be measured, the index too. Until it is, this
        # process renders the newest of those that may be kept: those the boundary keeps
        # carry over to the next pass, any other is removed as stale when the build ends.
        ahead = pages.ahead(out.writer, sizes)
        for fn, args in paper.tasks(site, out, ahead, carried.pages, pages.salt):
            if not workers.running():
                break
            carried.pages.update(fn(site, out, *args))
    carried.index, *keys = workers.finish()
    for chunk in keys:
        carried.pages.update(chunk)
    if rendering is None:
        pages.give_way(out.writer, sizes)
        return False
    paper.save_keys(out, keys)
    log.info("papertrail pages by section: %s", dict(Counter(p.split("/")[0] for p in names)))
    log.info("papertrail: %d pages", len(names))
    return True
