"""The generator that renders every data page straight from the store.

Pelican's own article machinery never sees a paper: markdown is ~30× slower at
this scale, and its taxonomies have a quadratic step. The flow is one way: the store
→ Library (model.views) → SiteData (model.data) → the page kinds (pages.*) → Output → the writer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment
from pelican.generators import Generator

import pipeline.site.model.data as data
import pipeline.site.workers as _workers
from pipeline.config import Config
from pipeline.site.budget import PaperPages, Rank
from pipeline.site.model.views import Library, load
from pipeline.site.output import BuildCache, Output
from pipeline.site.pages import paper, search, sitemap, sources
from pipeline.site.pages.kinds import in_process
from pipeline.site.writer import PelicanWriter, SkipUnchangedWriter
from pipeline.store import Store

log = logging.getLogger(__name__)



class PaperTrailGenerator(Generator):  # type: ignore[misc]  # pelican ships no type information
    """Registered through the get_generators signal (see pipeline.site.register). Pelican
    runs every generator's generate_context, then every generate_output with the writer
    the get_writer signal supplied (pipeline.site.writer)."""

    site: data.SiteData | None = None

    def generate_context(self) -> None:
        """The store, read once (one commit whole), as the SiteData every page renders
        from."""
        cfg: Config = self.settings["PAPERTRAIL_CONFIG"]  # see pipeline.site.settings
        # The library is millions of objects and no cycles: the cyclic collector would
        # walk it again and again as it grows (a quarter of the load at 200k papers), and
        # in worker processes its walks would copy every page they share with this one.
        # So it is left out of every collection until generate_output ends (frozen).
        gc.disable()
        try:
            store = Store(cfg.store_path)
            with store.snapshot():  # one commit whole, whatever a writer commits meanwhile
                lib = load(cfg, store, self.settings.get("PAPERTRAIL_NOW"))
            if days := self.settings.get("PAPERTRAIL_DAYS"):
                lib = newest(lib, days)
            self.site = data.compute(cfg, lib, Path(self.theme))
            gc.freeze()
        finally:
            gc.enable()

    def generate_output(self, writer: PelicanWriter) -> None:
        """Every page of ours, written through the writer Pelican's pages were written
        through, so one record holds the whole build."""
        site, self.site = self.site, None  # freed when the pages are written
        assert site is not None  # Pelican.run calls every generate_context first
        try:
            render_fitting(site, writer.ours, self.env)
        finally:
            gc.unfreeze()


def newest(lib: Library, days: int) -> Library:
    """The papers first seen in the last `days` days (what a language other than the
    default carries, [site] other_language_days); the site's numbers stay the store's."""
    since = lib.now - dt.timedelta(days=days)
    papers = [p for p in lib.papers if p.first_seen >= since]
    return dataclasses.replace(lib, papers=papers, by_id={p.arxiv_id: p for p in papers})


def render_fitting(site: data.SiteData, writer: SkipUnchangedWriter, env: Environment
                   ) -> None:
    """Pass after pass until the site fits under [site] max_site_mb, each rendering a
    SiteData with the pass's Pages (which are light, which left out); the estimate of the
    pages' bytes (from a sample that does not depend on where the boundaries are), the
    paper pages and the search index carry over (Carried), and the cards, the keys of the
    other pages and what is made once a build (BuildCache)."""
    others = writer.files()  # Pelican's own pages (about), made before this generator
    carried = Carried()
    out = Output(site, writer, env, BuildCache())
    pages = PaperPages.of(site.lib.papers, site.cfg, paper.salt(out))
    pages.estimate(paper.sizes(site, out, pages.sample(), pages.per_shard()))
    while not (render_site(out.with_pages(pages.pages), pages, carried)
               and pages.fit(writer)):
        writer.restart(others)


@dataclass
class Carried:
    """What a pass hands the next, none of it depending on which pages are light: the keys
    of the paper pages and of the search index it rendered, and the files the rest of the
    site made (but the sources page) with the pages the sitemap lists, while the same
    papers have a page."""

    pages: dict[str, paper.PageKey] = field(default_factory=dict)
    index: str | None = None
    rest: tuple[Rank | None, dict[str, int], list[str]] | None = None


def render_rest(site: data.SiteData, out: Output, pages: PaperPages, carried: Carried
                ) -> list[str]:
    """Everything but the paper pages and the search index; returns the pages the sitemap
    lists. A later pass that only turned more pages light makes again only the sources
    page, which says which are; one that left pages out (or gave some back) renders the
    rest again, and writes again only the pages whose links changed, the oldest days'
    briefs and lists (the writer keeps a file whose bytes are the same), and renders again
    only the feeds whose entries changed (pages.feeds)."""
    writer = out.writer
    said = sources.render(site, out)
    if carried.rest is None or carried.rest[0] != pages.paged:
        made = writer.files()
        # Each of these reads only the SiteData, and none depends on which paper pages are
        # light but the sources page (which says so).
        names = [*said, *(path for render in in_process() for path in render(site, out))]
        names += [p.path for p in site.paged]
        sitemap.render(site, out, names)
        carried.rest = pages.paged, {p: size for p, size in writer.files().items()
                                     if p not in made}, names
    else:
        for path, size in carried.rest[1].items():
            writer.keep(Path(path), size)
    return carried.rest[2]


def render_site(out: Output, pages: PaperPages, carried: Carried) -> bool:
    """The site, its paper pages only when the full ones would fit beside the rest
    (PaperPages.to_render); False when they, as estimated, do not fit in what the rest
    leaves, and the oldest turned light: the site is to be rendered again so (see
    site.budget)."""
    # The index and the paper pages, the light ones with their shards and then the full ones
    # newest first, go to worker processes while this one renders the rest; the index
    # first, as the longest single part.
    rendering = pages.to_render()
    if rendering is None:
        # The pages wait for the rest to be measured, but the oldest turn light whatever
        # it takes: they go to the workers now, beside the index, so none idles while the
        # rest renders (at 200,000 papers the index is done first).
        pages.light_at_least()
        out = out.with_pages(pages.pages)
    site = out.site
    workers = _workers.Workers(out, _workers.jobs(site.cfg.site.build_jobs))
    early = pages.shards()
    workers.start([(search.render_index, (carried.index,)),
                   *paper.tasks(site, out, rendering or [], carried.pages, pages.salt, early)])
    names = render_rest(site, out, pages, carried)
    if rendering is None and workers.running():
        # Until the workers are done, the oldest turn light for what the rest takes, and
        # this process renders them with their shards (those the workers do not), then
        # the newest that may stay full: the index can only turn more light, and a
        # shard's bytes do not depend on which of its papers are. What another pass does
        # not make again is removed as stale when the build ends.
        pages.give_way(out.writer)
        out = out.with_pages(pages.pages)
        site = out.site
        shards = {name: members for name, members in pages.shards().items()
                  if name not in early}
        for fn, args in paper.tasks(site, out, pages.full[::-1], carried.pages, pages.salt,
                                    shards):
            if not workers.running():
                break
            carried.pages.update(fn(site, out, *args))
    carried.index, *keys = workers.finish()
    for chunk in keys:
        carried.pages.update(chunk)
    if rendering is None:
        pages.give_way(out.writer)
        return False
    paper.save_keys(out, keys)
    log.info("papertrail pages by section: %s", dict(Counter(p.split("/")[0] for p in names)))
    log.info("papertrail: %d pages", len(names))
    return True
