"""Output: how pages reach the writer. Templates, the chrome and cards rendered once and
reused, paginated lists; every page kind in pipeline.site.pages writes through it."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, Template
from jinja2.runtime import Context
from markupsafe import Markup, escape

from pipeline.derive.rank import Ranked
from pipeline.site.i18n import NO_LINKS, Alternates, Links, say, say_pick
from pipeline.site.model.data import SiteData
from pipeline.site.model.views import Pages, Paper
from pipeline.site.render.feeds import FeedSpec
from pipeline.site.render.filters import time_element
from pipeline.site.writer import SkipUnchangedWriter
from pipeline.text.reasons import Why

PER_PAGE = 50
MAX_LIST_PAGES = 100  # older papers stay reachable by date (briefs), category and search
_ROOT = "\ue000root\ue000"  # stands for the relative root in cards rendered once
_TITLE = "\ue000title\ue000"  # stands for the page title in the chrome rendered once
_MAIN = "\ue000main\ue000"  # stands for the main block in the chrome rendered once
_META = "\ue000meta\ue000"  # stands for the head's per-page tags
_WHEN = "\ue000when\ue000"  # stands for a card's time in cards rendered once per version
_HEADING = "\ue000h\ue000"  # stands for a card's heading element, h2 or h3
_HREF = "\ue000href\ue000"  # stands for where a card's title links: its page, or arXiv
_ID = "\ue000id\ue000"  # stands for a paper's id in the light page rendered once
_ABS = "\ue000abs\ue000"  # stands for its arXiv link there
_TITLE_HTML = "\ue000title_html\ue000"  # stands for its title as HTML there
# stand for a paper page's links to itself in the other languages, in the chrome and the
# light page rendered once
_LANGS = Links(Markup("\ue000langs_head\ue000"), Markup("\ue000langs_switch\ue000"))


Cards = dict[tuple[str, int, bool], str]  # compact cards by (id, version, revision)


class BuildCache:
    """What a build's passes share (a build under [site] max_site_mb may make several, each
    with other pages light or left out): the compact cards, whether a paper has a page going
    in by substitution; the key of each feed a pass rendered, so the next renders only the
    feeds whose entries changed; and what a renderer makes once a build whatever pages
    there are (`once`: 为你推荐's vectors, the feeds' entry texts)."""

    def __init__(self) -> None:
        self.cards: Cards = {}
        self.feeds: dict[str, str] = {}
        self.once: dict[str, Any] = {}


def fingerprint(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class _Rendering:
    """What every page is rendered with: the templates, the site's part of each context,
    and the parts rendered once (the chrome at each depth, the light paper page)."""

    def __init__(self, site: SiteData, writer: SkipUnchangedWriter, env: Environment,
                 cache: BuildCache | None = None) -> None:
        self.site, self.writer, self.env = site, writer, env
        self.root = Path(writer.output_path)
        self.cache = BuildCache() if cache is None else cache
        self.cards = self.cache.cards
        self.feed_specs = {spec.slug: spec for spec in site.feeds}  # every feed, by slug
        # Rendered once per depth and feed set, kept with this Output (a build under
        # [site] max_site_mb makes one per pass; a cache on the method kept them all).
        self._chromes: dict[tuple[int, tuple[FeedSpec, ...]], tuple[str, str]] = {}
        self._site_contexts: dict[tuple[str, tuple[FeedSpec, ...]], tuple[dict[str, Any], str]] = {}
        self._lights: dict[tuple[int, tuple[FeedSpec, ...]], str] = {}
        self._globals: dict[Template, dict[str, Any]] = {}
        alternates = env.globals.get("alternates")  # settings.plain
        self.alternates = alternates if isinstance(alternates, Alternates) else None

    def langs(self, here: str) -> Links:
        """The page at `here` in the site's other languages (i18n.Alternates)."""
        if self.alternates is None:
            return NO_LINKS
        return self.alternates(here, "../" * here.count("/"))

    def template(self, name: str) -> Template:
        return self.env.get_template(name.removesuffix(".html") + ".html")

    def new_context(self, template: Template, ctx: dict[str, Any]) -> Context:
        """A context for one render of `template` (its blocks, or root_render_func): `ctx`
        over the environment's globals, flattened once per template. Template.render
        flattens them from a ChainMap at every call: a card took 47 µs that way, 31 so."""
        flat = self._globals.get(template)
        if flat is None:
            flat = self._globals[template] = dict(template.globals)
        return template.new_context({**flat, **ctx}, shared=True)

    def render(self, name: str, ctx: dict[str, Any]) -> str:
        """The template `name` rendered from `ctx` (and the globals): what
        Template.render(ctx) makes, for the templates rendered once a paper."""
        template = self.template(name)
        return self.env.concat(template.root_render_func(self.new_context(template, ctx)))

    def page(self, path: str, template: str, feeds: Sequence[FeedSpec] = (), **ctx: object
             ) -> str:
        """Write `path` (a folder, 'x/' → x/index.html, or a file name) from a template;
        returns the file's site path."""
        name = path + "index.html" if path.endswith("/") or not path else path
        # Rendered in every pass, with no key: a list page renders in ~0.6 ms and the writer
        # leaves its file alone when the bytes are the same, where the key, the repr of its
        # cards (and of a picks page's papers), took ~1.5 ms in every pass.
        self.writer.render(name, self.template(template),
                           self.context("../" * name.count("/"), tuple(feeds),
                                        langs=self.langs(name), **ctx))
        return name

    def context(self, root: str, feeds: tuple[FeedSpec, ...] = (), **ctx: object) -> dict[str, Any]:
        """What a template renders from (with the environment's globals): the site's part
        at this depth and with these feeds, and the page's own `ctx`."""
        return {**self._site_context(root, feeds or tuple(self.site.site_feeds))[0], **ctx}

    def _site_context(self, root: str, feeds: tuple[FeedSpec, ...]) -> tuple[dict[str, Any], str]:
        """The site's part of a context, with the fingerprint of its repr, made once per
        depth and feeds: the same on every paper page, and its feed links a sixth of the
        render time when redone each time (its repr, the catalogue's strings, is ~20 KB:
        hashed into each of 200,000 pages' keys, a tenth of their time)."""
        known = self._site_contexts.get((root, feeds))  # one lookup: the key hashes feeds
        if known is None:
            site = self.site
            head, foot = self._feed_links(root, feeds)
            made = {"s": site.strings, "lang": site.lang, "root": root,
                    "site_title": site.cfg.site.title, "brand": site.brand, "feeds": feeds,
                    "feed_head": head, "feed_foot": foot, "local": site.local,
                    "tz_label": site.tz_label, "topic_names": site.topic_names}
            known = self._site_contexts[root, feeds] = made, fingerprint(repr(made))
        return known

    def context_text(self, ctx: dict[str, Any]) -> str:
        """Everything a context made by context() holds, as text for a key: the repr of
        each value (a page's data by value, the site's part by its fingerprint). What a page
        renders from cannot change without its key: a value whose repr says less than
        it holds, or differs from build to build (an object's address), must not go in."""
        site, text = self._site_context(ctx["root"], ctx["feeds"])
        own = {name: value for name, value in ctx.items() if site.get(name) is not value}
        return text + repr(own)

    def _feed_links(self, root: str, feeds: tuple[FeedSpec, ...]) -> tuple[Markup, Markup]:
        """The feed links of a page's head and footer."""
        ctx = {"root": root, "feeds": feeds, "s": self.site.strings}
        head, foot = (Markup(self.template(name).render(ctx))
                      for name in ("_feeds_head", "_feeds_foot"))
        return head, foot

    def chrome(self, depth: int, feeds: tuple[FeedSpec, ...] = ()) -> tuple[str, str]:
        """What a full paper page renders before and after its main block, with a stand-in
        for the title: paper.html with that block replaced, so every other block is its
        own."""
        if (depth, feeds) not in self._chromes:
            template = self.env.from_string(
                f'{{% extends "paper.html" %}}{{% block main %}}{_MAIN}{{% endblock %}}'
                f"{{% block meta %}}{_META}{{% endblock %}}")
            html = template.render(self.context("../" * depth, feeds, title=_TITLE,
                                                langs=_LANGS))
            before, _, after = html.partition(_MAIN)
            self._chromes[depth, feeds] = before, after
        return self._chromes[depth, feeds]

    def _with_langs(self, html: str, path: str) -> str:
        head, switch = self.langs(path)
        return html.replace(_LANGS.head, head, 1).replace(_LANGS.switch, switch, 1)

    def in_chrome(self, path: str, title: str, meta: str, body: str,
                  feeds: tuple[FeedSpec, ...] = ()) -> str:
        """A full paper page from its meta and main blocks and the chrome rendered once
        (identical bytes to a full render of the template; tests compare)."""
        before, after = self.chrome(path.count("/"), feeds)
        before = before.replace(_TITLE, str(escape(title)), 1).replace(_META, meta, 1)
        return self._with_langs(before, path) + body + after

    def light_page(self, paper: Paper, feeds: tuple[FeedSpec, ...]) -> str:
        """A light page (pages.paper): light.html rendered once per depth and feeds with
        stand-ins for the paper's id, arXiv link, title and title as HTML, which go in by
        substitution (identical bytes to a full render; tests compare): at 200,000 papers
        190,000 pages, a tenth of their time when each was a render. Stand-ins are
        private-use characters, which no upstream text keeps (text.untrusted)."""
        root = "../" * paper.path.count("/")
        title = paper.title_text
        if not title:  # base.html leaves out the title's separator then
            return self.template("light").render(self.context(
                root, feeds, title="", arxiv_id=paper.arxiv_id, abs_url=paper.abs_url,
                title_html=paper.title_html, langs=self.langs(paper.path)))
        key = (len(root), feeds)
        if key not in self._lights:
            self._lights[key] = self.template("light").render(self.context(
                root, feeds, title=_TITLE, arxiv_id=_ID, abs_url=_ABS,
                title_html=Markup(_TITLE_HTML), langs=_LANGS))
        return (self._with_langs(self._lights[key], paper.path)
                .replace(_TITLE, str(escape(title)))
                .replace(_ID, str(escape(paper.arxiv_id)))
                .replace(_ABS, str(escape(paper.abs_url)))
                .replace(_TITLE_HTML, str(paper.title_html)))


class Output(_Rendering):
    """One per process: a forked worker gets a copy, with its copy of the writer. Writes
    pages, and the cards and lists they are made of."""

    def with_pages(self, pages: Pages) -> Output:
        """An Output for the site with these pages light and left out (a pass of the build
        under [site] max_site_mb), sharing this one's writer and BuildCache."""
        return Output(dataclasses.replace(self.site, pages=pages), self.writer, self.env,
                      self.cache)

    def card(self, paper: Paper, full: bool = False, clock: str = "updated",
             heading: str = "h3") -> Markup:
        """A paper's card showing the time its list is sorted by, its title a `heading`
        (h2 right under a page's h1, h3 under a section's h2); lists show it compact (the
        abstract lives on the paper page), the home page in full. A compact card is
        rendered once per version (a list of revisions adds the change note: once more)
        and takes each list's time and heading by substitution: at 200,000 papers the
        briefs, categories and library lists ask ~350,000 times for the cards of ~210,000
        versions."""
        revision = clock == "revision"
        if full:
            return Markup(self._render_card(paper, full, revision, self._when(paper, clock),
                                            heading, self._href(paper)))
        key = (paper.arxiv_id, paper.version, revision)
        if key not in self.cards:
            self.cards[key] = self._render_card(paper, False, revision, _WHEN, _HEADING,
                                                _HREF)
        return Markup(self.cards[key].replace(_WHEN, self._when(paper, clock), 1)
                      .replace(_HEADING, heading).replace(_HREF, self._href(paper), 1))

    def _render_card(self, paper: Paper, full: bool, revision: bool, when: str,
                     heading: str, href: str) -> str:
        return self.render("card", {"p": paper, "s": self.site.strings, "root": _ROOT,
                                    "full": full, "when": when, "revision": revision,
                                    "heading": heading, "href": href})

    def _href(self, paper: Paper) -> Markup:
        return escape(_ROOT + paper.path if self.site.pages.has(paper) else paper.abs_url)

    def _when(self, paper: Paper, clock: str) -> Markup:
        """What a card says of the time its list is sorted by: the clock's name and the
        time, local and machine-readable."""
        t = paper.at(clock)
        s = self.site.strings
        label = s[clock if clock in ("updated", "first_seen", "published") else f"at_{clock}"]
        return Markup(f"{escape(label)} {time_element(t, self.site.local)}")

    def cards_html(self, papers: Iterable[Paper], root: str,
                   notes: dict[str, Why] | None = None, full: bool = False,
                   clock: str = "updated", heading: str = "h3") -> Markup:
        parts = []
        for p in papers:
            html = str(self.card(p, full, clock, heading))
            if notes and p.arxiv_id in notes:
                strings = self.site.strings
                note = f'<p class="reason">{escape(strings["topic_reason"])}' \
                       f'{escape(strings["colon"])}{escape(say(notes[p.arxiv_id], strings))}' \
                       '</p></article>'
                html = html.removesuffix("</article>\n").removesuffix("</article>") + note
            parts.append(html)
        return Markup("".join(parts).replace(_ROOT, root))

    def ranked_html(self, top: Sequence[tuple[Paper, Ranked]], root: str) -> Markup:
        """今日精选's cards, best first, each with its reasons as chips (made here, never in
        a template: a venue's badge is the authors' text)."""
        items = []
        for paper, ranked in top:
            card = str(self.card(paper, clock="revision")).rstrip("\n").removesuffix("</article>")
            items.append(f"<li>{card}{self.chips(ranked)}</article></li>")
        return Markup("".join(items).replace(_ROOT, root))

    def chips(self, ranked: Ranked) -> str:
        s, names = self.site.strings, self.site.topic_names
        items = []
        for r in ranked.reasons:
            text = say_pick(r, s, names)
            points = s["points"].format(points=f"{r.points:.1f}")
            items.append(f'<li class="reason-{r.kind}">{escape(text)} '
                         f"<small>{escape(points)}</small></li>")
        return (f'<ul class="reasons" aria-label="{escape(s["reasons"])}">'
                f'{"".join(items)}</ul>')

    def listing(self, path: str, title: str, papers: list[Paper], *, intro: str = "",
                feeds: Sequence[FeedSpec] = (), notes: dict[str, Why] | None = None,
                picks: tuple[str, str, int] | None = None, **ctx: object) -> list[str]:
        """A paginated list: path/, path/page/2/, …, capped at MAX_LIST_PAGES. `picks`: the
        (title, page, count) of the 今日精选 its first page links to above its own list."""
        total = len(papers)
        pages = max(1, min(MAX_LIST_PAGES, -(-total // PER_PAGE)))
        clock = str(ctx.get("order") or ctx.get("clock") or "updated")  # what cards show
        written = []
        for n in range(1, pages + 1):
            here = path if n == 1 else f"{path}page/{n}/"
            root = "../" * (here + "index.html").count("/")
            chunk = papers[(n - 1) * PER_PAGE:n * PER_PAGE]
            written.append(self.page(
                here, "list.html", feeds, title=title, intro=intro, count=total,
                cards=self.cards_html(chunk, root, notes, clock=clock, heading="h2"),
                page_n=n, pages=pages,
                prev=None if n == 1 else (path if n == 2 else f"{path}page/{n - 1}/"),
                next=None if n == pages else f"{path}page/{n + 1}/",
                truncated=total > pages * PER_PAGE, picks=picks if n == 1 else None, **ctx))
        return written
