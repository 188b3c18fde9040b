"""The generator that renders every data page straight from the store.

Pelican's own article machinery never sees a paper: markdown is ~30× slower at
this scale, and its taxonomies have a quadratic step. The flow is one way: the store
→ Library (_views) → SiteData (data) → the page kinds (pages.*) → Output → the writer.
"""

from __future__ import annotations

import gc
import logging
from collections import Counter
from pathlib import Path

from pelican.generators import Generator

import pipeline.site._workers as _workers
import pipeline.site.data as data
from pipeline.config import Config
from pipeline.site._budget import PaperPages
from pipeline.site._views import load
from pipeline.site._writer import SkipUnchangedWriter
from pipeline.site.output import Output
from pipeline.site.pages import (
    accepted,
    briefs,
    categories,
    feeds,
    hf,
    home,
    lists,
    me,
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
               static.render, accepted.render)


class PaperTrailGenerator(Generator):
    """Registered through the get_generators signal (see pipeline.site.register)."""

    def generate_output(self, writer: SkipUnchangedWriter) -> None:
        cfg: Config = self.settings["PAPERTRAIL_CONFIG"]  # see pipeline.site.settings
        # The library is millions of objects and no cycles: the cyclic collector would
        # walk it again and again as it grows (a quarter of the load at 200k papers), and
        # in worker processes its walks would copy every page they share with this one.
        gc.disable()
        try:
            lib = load(cfg, Store(cfg.store_path), self.settings.get("PAPERTRAIL_NOW"))
            site = data.compute(cfg, lib, Path(self.theme))
        finally:
            gc.enable()
        # Pages render from has_page as the papers hold it when they render, so a second
        # pass under [site] max_site_mb needs no second SiteData.
        pages = PaperPages.of(lib.papers, cfg, paper.salt(site))
        others = writer.files()  # Pelican's own pages (about), made before this generator
        while True:
            gc.freeze()
            try:
                render_site(Output(site, writer, self.env))
            finally:
                gc.unfreeze()
            if pages.fit(writer):
                break
            writer.restart(others)



def render_site(out: Output) -> None:
    site = out.site
    # The index and the paper pages, most of the work, go to worker processes while
    # this one renders the rest; the index first, as the longest single part.
    workers = _workers.Workers(out, _workers.jobs(site.cfg.site.build_jobs))
    workers.start([(search.render_index, ()), *paper.tasks(site, out)])
    pages = [path for render in _IN_PROCESS for path in render(site, out)]
    _, *page_keys = workers.finish()  # the index's task writes no page
    paper.save_keys(out, page_keys)
    pages += [p.path for p in site.paged]
    sitemap.render(site, out, pages)
    log.info("papertrail pages by section: %s", dict(Counter(p.split("/")[0] for p in pages)))
    log.info("papertrail: %d pages", len(pages))
