"""The registry of page kinds, PAGE_KINDS: the generator renders those with a `render`
beside the workers, the nav lists those with a `nav` label (in registry order), the
accessibility test checks each one's `samples`. A new page kind is a module, one entry
here, and its template.
"""


from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output
from pipeline.site.pages import (
    accepted,
    briefs,
    categories,
    feeds,
    foryou,
    hf,
    home,
    lists,
    me,
    missing,
    search,
    static,
    topics,
)

Render = Callable[[SiteData, Output], list[str]]


@dataclass(frozen=True)
class PageKind:
    """What the build, the nav and the tests know of a kind of page."""

    name: str  # the `nav=` its pages pass: the nav marks its link as the current page
    path: str  # its first page, site-relative: what the nav links
    # Site paths the accessibility test opens, `{paper}` a paper with a page, `{revised}` a
    # revised one; () for a kind that writes no HTML page of its own (feeds, static files).
    samples: tuple[str, ...]
    render: Render | None = None  # None: rendered by the generator's own steps (below)
    # Its label in the nav: a catalogue key, or its words by language ({"zh-CN": …, "en":
    # …}: a kind that brings its own); None: not in the nav.
    nav: str | Mapping[str, str] | None = None


# In nav order first (a nav entry's order is its place here). `paper` (the workers),
# `sources` (after them: it says which pages are light) and `sitemap` (last, of every
# page's path) are rendered by the generator itself.
PAGE_KINDS: dict[str, PageKind] = {k.name: k for k in (
    PageKind("library", "library/updated/all/", (), lists.render, nav="library"),
    PageKind("briefs", "brief/", ("brief/top/",), briefs.render, nav="briefs"),
    PageKind("topics", "topic/", (), topics.render, nav="topics"),
    PageKind("categories", "category/", (), categories.render, nav="categories"),
    PageKind("sources", "sources/", ("sources/",), nav="sources"),
    PageKind("foryou", "for-you/", ("for-you/?seed={paper}",), foryou.render, nav="foryou"),
    PageKind("hf", "hf/", ("hf/",), hf.render),
    PageKind("home", "", ("index.html",), home.render),
    PageKind("feeds", "feeds.opml", (), feeds.render),
    PageKind("follow", "follow/", ("follow/",), me.render),
    PageKind("search", "search/", ("search/?q=diffusion",), search.render_pages),
    PageKind("static", "theme/", (), static.render),
    PageKind("accepted", "accepted/", ("accepted/",), accepted.render),
    # 404.html at a paper's address: the paper is not held
    PageKind("missing", "404.html", ("paper/2101.00001.html",), missing.render),
    PageKind("paper", "paper/", ("paper/{paper}.html", "paper/{revised}.html")),
    PageKind("sitemap", "sitemap.xml", ()),
)}

def in_process() -> list[Render]:
    """What the generator renders in its own process while the workers run."""
    return [k.render for k in PAGE_KINDS.values() if k.render is not None]


def nav_links(s: Mapping[str, str], language: str) -> tuple[tuple[str, str, str], ...]:
    """The nav's links as plain data (a template global goes into pages' keys by its
    repr): (path, label in `language`, name)."""
    return tuple((k.path, s[k.nav] if isinstance(k.nav, str) else k.nav[language], k.name)
                 for k in PAGE_KINDS.values() if k.nav is not None)
