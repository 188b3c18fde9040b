"""The generator that renders every data page straight from the store.

Pelican's own article machinery never sees a paper: markdown is ~30× slower at
this scale, and its taxonomies have a quadratic step. Cards are rendered once
per paper and reused by every list; each list page only joins them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import gc
import hashlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape
from pelican.generators import Generator

from pipeline import config as config_mod
from pipeline import stats
from pipeline._ids import is_category
from pipeline.site import _diff, _feeds, _math, _search, _workers, i18n
from pipeline.site._feeds import FeedSpec
from pipeline.site._safe import clean
from pipeline.site._views import CLOCKS, Library, Paper, load
from pipeline.site._writer import SkipUnchangedWriter, read_record, stamp
from pipeline.store import Store

log = logging.getLogger(__name__)

PER_PAGE = 50
MAX_LIST_PAGES = 100  # older papers stay reachable by date (briefs), category and search
HOME_CARDS = 20
RANGES = {"24h": dt.timedelta(hours=24), "7d": dt.timedelta(days=7), "all": None}
BRIEF_KINDS = ("new", "ai", "revised", "digests")
_ROOT = "\ue000root\ue000"  # stands for the relative root in cards rendered once
_TITLE = "\ue000title\ue000"  # stands for the page title in the chrome rendered once
_MAIN = "\ue000main\ue000"  # stands for the main block in the chrome rendered once
PAPER_CHUNK = 1000  # paper pages per worker task
_PAGE_CACHE = ".papertrail/pages.json"  # per paper page: its inputs' key, the file's stamp


def _per_category(details: object) -> dict[str, object]:
    """A run's per-category counts from its stored details; none from details that are
    not the JSON object a run writes (a damaged row shows nothing, and fails no build)."""
    try:
        counts = json.loads(details).get("per_category", {})  # type: ignore[arg-type]
        return {clean(str(c)): n for c, n in counts.items()}
    except (TypeError, ValueError, AttributeError):
        return {}


def _set_aside(runs: pd.DataFrame, local: Callable[[dt.datetime], str],
               last: int = 30) -> list[tuple[str, str, str, str]]:
    """What the last runs of each source did not take as it came: (when, source, kind, what)
    for each entry rejected (its id is not arXiv's), dated ahead of the run, or carrying
    a category outside the taxonomy. From details a damaged row holds: nothing."""
    found = []
    for row in runs.tail(last).to_dict("records"):
        try:
            details = json.loads(row["details"])
            notes = [("rejected", f"{r['id']} — {r['why']}") for r in details.get("rejected", [])]
            notes += [("ahead", ", ".join(f"{k} {v}" for k, v in a.items()))
                      for a in details.get("anomalies", [])]
            notes += [("unknown_category", f"{c} × {n}")
                      for c, n in details.get("unknown_categories", {}).items()]
        except (TypeError, ValueError, AttributeError, KeyError):
            continue
        when = local(row["started"].to_pydatetime())
        found += [(when, clean(str(row["source"])), kind, clean(str(what)))
                  for kind, what in notes]
    return found


class PaperTrailGenerator(Generator):
    """Registered through the get_generators signal (see pipeline.site.register)."""

    def generate_output(self, writer: SkipUnchangedWriter) -> None:
        cfg = (self.settings.get("PAPERTRAIL_CONFIG_OBJECT")
               or config_mod.load(self.settings["PAPERTRAIL_CONFIG"]))
        now = self.settings.get("PAPERTRAIL_NOW")
        # The library is millions of objects and no cycles: the cyclic collector would
        # walk it again and again as it grows (a quarter of the load at 200k papers), and
        # in worker processes its walks would copy every page they share with this one.
        gc.disable()
        try:
            lib = load(cfg, Store(cfg.store_path), now)
        finally:
            gc.enable()
        gc.freeze()
        try:
            _Build(self, writer, cfg, lib).run()
        finally:
            gc.unfreeze()


class _Build:
    def __init__(self, gen: PaperTrailGenerator, writer: SkipUnchangedWriter,
                 cfg: config_mod.Config, lib: Library) -> None:
        self.gen, self.writer, self.cfg, self.lib = gen, writer, cfg, lib
        self.lang = cfg.site.language
        self.s = i18n.strings(self.lang)
        self.tz_label = i18n.tz_label(self.lang, cfg.site.timezone)
        self.pages: list[str] = []
        f = self.s
        self.site_feeds = [FeedSpec("all", f["feed_all"]), FeedSpec("ai", f["feed_ai"]),
                           FeedSpec("revisions", f["feed_revisions"]),
                           FeedSpec("digests", f["feed_digests"])]
        self.all_feeds = list(self.site_feeds)
        self.topic_names = {t.slug: t.name.zh if self.lang == "zh-CN" else t.name.en
                            for t in cfg.topics}
        self.card = gen.get_template("card")
        self.cards: dict[str, Markup] = {}

    # -- helpers --------------------------------------------------------------------------------

    def local(self, t: dt.datetime | None) -> str:
        return "—" if t is None else t.astimezone(self.lib.tz).strftime("%Y-%m-%d %H:%M")

    def page(self, path: str, template: str, feeds: Sequence[FeedSpec] = (), **ctx: object
             ) -> None:
        """Write `path` (a folder, 'x/' → x/index.html, or a file name) from a template."""
        name = path + "index.html" if path.endswith("/") or not path else path
        context = self._context("../" * name.count("/"), tuple(feeds) or tuple(self.site_feeds),
                                **ctx)
        self.writer.write_file(name, self.gen.get_template(template.removesuffix(".html")), context)
        self.pages.append(name)

    def _context(self, root: str, feeds: tuple[FeedSpec, ...], **ctx: object) -> dict:
        head, foot = self._feed_links(root, feeds)
        return {"s": self.s, "lang": self.lang, "root": root, "site_title": self.cfg.site.title,
                "feeds": feeds, "feed_head": head, "feed_foot": foot, "local": self.local,
                "tz_label": self.tz_label, "topic_names": self.topic_names, **ctx}

    @functools.cache  # noqa: B019 (one build object, a handful of (root, feeds) pairs)
    def _feed_links(self, root: str, feeds: tuple[FeedSpec, ...]) -> tuple[Markup, Markup]:
        """The feed links of a page's head and footer, rendered once per depth: the same
        on every paper page, and a sixth of the render time when redone each time."""
        ctx = {"root": root, "feeds": feeds, "s": self.s}
        return tuple(Markup(self.gen.get_template(name).render(ctx))
                     for name in ("_feeds_head", "_feeds_foot"))  # type: ignore[return-value]

    def card_of(self, paper: Paper, full: bool = False) -> Markup:
        """A paper's card, rendered once; lists show it compact (the abstract lives on the
        paper page), the home page in full."""
        if full:
            return Markup(self.card.render(p=paper, s=self.s, root=_ROOT, local=self.local,
                                           full=True))
        if paper.arxiv_id not in self.cards:
            self.cards[paper.arxiv_id] = Markup(self.card.render(
                p=paper, s=self.s, root=_ROOT, local=self.local, full=False))
        return self.cards[paper.arxiv_id]

    def cards_html(self, papers: Iterable[Paper], root: str,
                   notes: dict[str, str] | None = None, full: bool = False) -> Markup:
        parts = []
        for p in papers:
            html = str(self.card_of(p, full))
            if notes and p.arxiv_id in notes:
                note = f'<p class="reason">{escape(self.s["topic_reason"])}: ' \
                       f"{escape(notes[p.arxiv_id])}</p></article>"
                html = html.removesuffix("</article>\n").removesuffix("</article>") + note
            parts.append(html)
        return Markup("".join(parts).replace(_ROOT, root))

    def listing(self, path: str, title: str, papers: list[Paper], *, intro: str = "",
                feeds: Sequence[FeedSpec] = (), notes: dict[str, str] | None = None,
                **ctx: object) -> None:
        """A paginated list: path/, path/page/2/, …, capped at MAX_LIST_PAGES."""
        total = len(papers)
        pages = max(1, min(MAX_LIST_PAGES, -(-total // PER_PAGE)))
        for n in range(1, pages + 1):
            here = path if n == 1 else f"{path}page/{n}/"
            root = "../" * (here + "index.html").count("/")
            chunk = papers[(n - 1) * PER_PAGE:n * PER_PAGE]
            self.page(here, "list.html", feeds, title=title, intro=intro, count=total,
                      cards=self.cards_html(chunk, root, notes), page_n=n, pages=pages,
                      prev=None if n == 1 else (path if n == 2 else f"{path}page/{n - 1}/"),
                      next=None if n == pages else f"{path}page/{n + 1}/",
                      truncated=total > pages * PER_PAGE, **ctx)

    # -- the build ------------------------------------------------------------------------------

    def run(self) -> None:
        lib = self.lib
        f = lib.frames
        self.home = stats.home(f["papers"], f["versions"], f["digests"], f["runs"], lib.tz,
                               lib.now)
        self.revisions = self._revisions()
        # The index and the paper pages, most of the work, go to worker processes while
        # this one renders the lists; the index first, as the longest single part.
        workers = _workers.Workers(self, _workers.jobs(self.cfg.site.build_jobs))
        workers.start([("write_search_index", ()), *self.plan_papers()])
        self.build_library()
        self.build_briefs()
        self.build_categories()
        self.build_topics()
        self.build_sources()
        self.build_home()
        self.build_feeds()
        self.build_search_pages()
        self.copy_theme_static()
        _, *page_keys = workers.finish()  # the index's task returns nothing
        self.save_page_keys(page_keys)
        self.build_machine_files()
        log.info("papertrail: %d pages", len(self.pages))

    def _revisions(self) -> list[tuple[Paper, int, dt.datetime]]:
        """(paper, version, when we saw it) for every revision, newest first."""
        f = self.lib.frames
        rev = stats.revisions(f["versions"], f["papers"])
        by_id = self.lib.by_id  # keyed by the cleaned id, as the papers show it
        out = [(by_id[clean(r["arxiv_id"])], int(r["version"]), r["first_seen"].to_pydatetime())
               for r in rev.to_dict("records") if clean(r["arxiv_id"]) in by_id]
        return sorted(out, key=lambda x: (x[2], x[0].arxiv_id, x[1]), reverse=True)

    def sorted_by(self, clock: str, papers: Iterable[Paper] | None = None) -> list[Paper]:
        return sorted(self.lib.papers if papers is None else papers,
                      key=lambda p: (getattr(p, clock), p.arxiv_id), reverse=True)

    def plan_papers(self) -> list[_workers.Task]:
        """Paper pages as worker tasks over chunks of `self.paged`. Each task renders only
        the pages whose inputs (the paper's data, the templates, strings, site settings and
        the code that makes math and diffs) changed since the page was last rendered: on
        an ordinary day almost every page is unchanged."""
        self.old_keys: dict[str, list] = read_record(Path(self.writer.output_path) / _PAGE_CACHE)
        self.page_salt = self._salt("paper", "base", "_feeds_head", "_feeds_foot")
        self.paged = [p for p in self.lib.papers if p.has_page]
        self.pages += [p.path for p in self.paged]
        return [("render_papers", (a, a + PAPER_CHUNK))
                for a in range(0, len(self.paged), PAPER_CHUNK)]

    def save_page_keys(self, keys: Iterable[dict[str, list]]) -> None:
        """Written once every page is (and atomically): a build that fails midway must not
        record keys of pages it never wrote."""
        merged = {path: key for chunk in keys for path, key in chunk.items()}
        self.writer.put(Path(self.writer.output_path) / _PAGE_CACHE,
                        json.dumps(merged, sort_keys=True, indent=0).encode(), atomic=True)

    def render_papers(self, start: int, stop: int) -> dict[str, list]:
        """The pages of paged[start:stop] whose key changed; returns every page's
        [key, size, mtime]. A page is trusted only while its file is the one this cache
        saw written: a build killed after rewriting it (in another language, say) leaves
        a file with another stamp, and the page is made again."""
        out = Path(self.writer.output_path)
        keys = {}
        for paper in self.paged[start:stop]:
            key = hashlib.blake2b((self.page_salt + repr(vars(paper))).encode(),
                                  digest_size=16).hexdigest()
            target = out / paper.path
            seen = stamp(target)
            if seen and self.old_keys.get(paper.path) == [key, *seen]:
                self.writer.keep(target)
            else:
                self.render_paper(paper)
                seen = stamp(target)
            keys[paper.path] = [key, *(seen or [])]
        return keys

    def render_paper(self, paper: Paper) -> None:
        """The page's main block into the chrome of base.html rendered once (identical
        bytes to a full render; tests compare)."""
        if not paper.title:  # base.html leaves out the title's separator then
            self.page(paper.path, "paper.html", p=paper, title=paper.title)
            return
        template = self.gen.get_template("paper")
        before, after = self._chrome(paper.path.count("/"))
        ctx = template.new_context(self._context("../" * paper.path.count("/"),
                                                 tuple(self.site_feeds), p=paper))
        body = "".join(template.blocks["main"](ctx))
        html = before.replace(_TITLE, str(escape(paper.title)), 1) + body + after
        self.writer.put(Path(self.writer.output_path) / paper.path, html.encode("utf-8"))

    @functools.cache  # noqa: B019 (one build object, one or two depths)
    def _chrome(self, depth: int) -> tuple[str, str]:
        """What base.html renders before and after a page's main block, with a stand-in
        for the title: rendered through a child template exactly as paper.html extends it."""
        template = self.gen.env.from_string(
            '{% extends "base.html" %}{% block main %}' + _MAIN + "{% endblock %}")
        html = template.render(self._context("../" * depth, tuple(self.site_feeds), title=_TITLE))
        before, _, after = html.partition(_MAIN)
        return before, after

    def _salt(self, *templates: str) -> str:
        """What every page of a kind depends on besides its own data."""
        theme = Path(self.gen.theme) / "templates"
        parts = [(theme / f"{t}.html").read_text("utf-8") for t in templates]
        # Math and diffs are made while a page renders, from the texts in its data.
        parts += [Path(m.__file__).read_text("utf-8") for m in (_math, _diff)]
        # Where the site is written and by how many processes changes no page's bytes.
        site = dataclasses.replace(self.cfg.site, output=Path(), build_jobs=0)
        parts += [json.dumps(self.s, sort_keys=True), repr(site), repr(self.site_feeds)]
        return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()

    def build_library(self) -> None:
        now = self.lib.now
        for clock in CLOCKS:
            ordered = self.sorted_by(clock)
            for key, span in RANGES.items():
                # Up to now, not past it: a paper dated 2099 is in no "last 24 h".
                chosen = ordered if span is None else [
                    p for p in ordered if now - span < getattr(p, clock) <= now]
                self.listing(f"library/{clock}/{key}/", self.s["library"], chosen,
                             clock=clock, range_key=key, nav="library")

    def _days(self) -> dict[str, dict[str, list[Paper]]]:
        tz = self.lib.tz
        days: dict[str, dict[str, list[Paper]]] = defaultdict(lambda: defaultdict(list))

        def day(t: dt.datetime) -> str:
            return t.astimezone(tz).strftime("%Y-%m-%d")

        for p in self.sorted_by("first_seen"):
            days[day(p.first_seen)]["new"].append(p)
            if p.ai_related:
                days[day(p.first_seen)]["ai"].append(p)
        for p, _, when in self.revisions:
            days[day(when)]["revised"].append(p)
        for p in sorted((p for p in self.lib.papers if p.digest_created),
                        key=lambda p: (p.digest_created, p.arxiv_id), reverse=True):
            days[day(p.digest_created)]["digests"].append(p)
        return days

    def brief_24h(self) -> dict[str, list[Paper]]:
        start, end = self.home.window_start, self.home.now

        def inside(t: dt.datetime | None) -> bool:
            return t is not None and start < t <= end

        new = [p for p in self.sorted_by("first_seen") if inside(p.first_seen)]
        return {"new": new, "ai": [p for p in new if p.ai_related],
                "revised": list({p.arxiv_id: p for p, _, w in self.revisions
                                 if inside(w)}.values()),
                "digests": [p for p in self.sorted_by("updated") if inside(p.digest_created)]}

    def build_briefs(self) -> None:
        days = self._days()
        for kind, papers in self.brief_24h().items():
            title = self.s["brief_24h"].format(kind=self.s[f"brief_{kind}"])
            self.listing(f"brief/24h/{kind}/", title, papers, nav="briefs")
        for date, kinds in days.items():
            for kind in BRIEF_KINDS:
                title = self.s["brief_title"].format(date=date, kind=self.s[f"brief_{kind}"])
                self.listing(f"brief/{date}/{kind}/", title, kinds.get(kind, []), nav="briefs")
        archive = [(d, {k: len(days[d].get(k, [])) for k in BRIEF_KINDS})
                   for d in sorted(days, reverse=True)]
        self.page("brief/", "briefs.html", title=self.s["briefs"], archive=archive,
                  kinds=BRIEF_KINDS, nav="briefs")

    def build_categories(self) -> None:
        members: dict[str, list[Paper]] = defaultdict(list)
        for p in self.sorted_by("updated"):
            for c in p.categories:
                if is_category(c):  # a stored "../x" is shown as text, never made a path
                    members[c].append(p)
        self.categories = sorted(members)
        for cat in self.categories:
            spec = FeedSpec(f"category/{cat}", self.s["category"].format(name=cat))
            self.all_feeds.append(spec)
            self.listing(f"category/{cat}/", spec.title, members[cat], feeds=[spec],
                         nav="categories", feed=spec)
        self.category_members = members
        self.page("category/", "index_list.html", title=self.s["categories"],
                  entries=[(f"category/{c}/", c, len(members[c])) for c in self.categories],
                  nav="categories")

    def build_topics(self) -> None:
        self.topic_members: dict[str, list[Paper]] = {}
        entries = []
        # One pass over the papers for all topics (a scan per topic is quadratic in topics).
        members: dict[str, list[Paper]] = defaultdict(list)
        reasons: dict[str, dict[str, str]] = defaultdict(dict)
        for p in self.sorted_by("updated"):
            for slug, reason in p.topics:
                if p.arxiv_id not in reasons[slug]:
                    members[slug].append(p)
                reasons[slug][p.arxiv_id] = reason
        for topic in self.cfg.topics:
            name = self.topic_names[topic.slug]
            matched, notes = members[topic.slug], reasons[topic.slug]
            spec = FeedSpec(f"topic/{topic.slug}", self.s["topic"].format(name=name))
            self.all_feeds.append(spec)
            self.topic_members[topic.slug] = matched
            self.listing(f"topic/{topic.slug}/", spec.title, matched, intro=topic.description,
                         feeds=[spec], notes=notes, nav="topics", feed=spec)
            entries.append((f"topic/{topic.slug}/", name, len(matched)))
        self.page("topic/", "index_list.html", title=self.s["topics"], entries=entries,
                  nav="topics")

    def build_sources(self) -> None:
        runs = self.lib.frames["runs"]
        arxiv_runs = runs[runs["source"] == "arxiv"] if not runs.empty else runs
        details = arxiv_runs.iloc[-1]["details"] if not arxiv_runs.empty else None
        per_category = _per_category(details)
        ledger = []
        if not runs.empty:
            digest_runs = runs[runs["source"] == "digest"]
            ledger = [(self.local(r["started"].to_pydatetime()), int(r["tokens_in"] or 0),
                       int(r["tokens_out"] or 0))
                      for r in digest_runs.fillna({"tokens_in": 0, "tokens_out": 0})
                      .to_dict("records")][-30:]
        self.page("sources/", "sources.html", title=self.s["sources"],
                  sources=self.home.sources, per_category=sorted(per_category.items()),
                  ledger=ledger, set_aside=_set_aside(runs, self.local) if not runs.empty
                  else [], nav="sources")

    def build_home(self) -> None:
        h = self.home
        latest = self.sorted_by("updated")[:HOME_CARDS]
        last_arxiv = next((x for x in h.sources if x.source == "arxiv"), None)
        self.page("", "index.html", h=h, cards=self.cards_html(latest, "", full=True),
                  count=len(self.lib.papers), last_arxiv=last_arxiv, nav="home",
                  last_ingest=max((p.version_seen_at for p in self.lib.papers), default=None))

    def build_feeds(self) -> None:
        new = [(p, p.first_seen, "") for p in self.sorted_by("first_seen")]
        lists = {
            "all": new,
            "ai": [x for x in new if x[0].ai_related],
            "revisions": [(p, when, f"v{v}") for p, v, when in self.revisions],
            "digests": [(p, p.digest_created, f"v{p.version}/digest")
                        for p in sorted((p for p in self.lib.papers if p.digest_created),
                                        key=lambda p: (p.digest_created, p.arxiv_id),
                                        reverse=True)],
        }
        for cat in self.categories:
            lists[f"category/{cat}"] = [(p, p.first_seen, "") for p in
                                        self.sorted_by("first_seen", self.category_members[cat])]
        for slug, members in self.topic_members.items():
            lists[f"topic/{slug}"] = [(p, p.first_seen, "") for p in
                                      self.sorted_by("first_seen", members)]
        for spec in self.all_feeds:
            atom, rss = _feeds.render(spec, lists[spec.slug], site_title=self.cfg.site.title,
                                      base_url=self.cfg.site.base_url, strings=self.s,
                                      language=self.lang, as_of=self.lib.now)
            self.writer.write_text(f"feeds/{spec.slug}.atom.xml", atom)
            self.writer.write_text(f"feeds/{spec.slug}.rss.xml", rss)
        self.writer.write_text("feeds.opml", _feeds.opml(
            self.all_feeds, site_title=self.cfg.site.title, base_url=self.cfg.site.base_url))

    def write_search_index(self) -> None:
        _search.write_index(self)

    def build_search_pages(self) -> None:
        papers = self.lib.papers
        self.page("search/", "search.html", title=self.s["search"], nav="search",
                  categories=sorted({c for p in papers for c in p.categories}),
                  topics=sorted({s for p in papers for s, _ in p.topics}))
        self.page("follow/", "follow.html", title=self.s["follow"], nav="follow")

    def copy_theme_static(self) -> None:
        """The theme's css/js, through the writer so unchanged files keep their bytes and
        times (Pelican's own copy would touch them on every build)."""
        static = Path(self.gen.theme) / "static"
        for path in sorted(static.rglob("*")):
            if path.is_file():
                self.writer.put(Path(self.writer.output_path) / "theme" /
                                path.relative_to(static), path.read_bytes())

    def build_machine_files(self) -> None:
        h = self.home
        status = {
            "as_of": h.now.isoformat(), "window_start": h.window_start.isoformat(),
            "new_papers": h.new_papers, "new_ai": h.new_ai, "revised": h.revised,
            "new_digests": h.new_digests, "total_papers": h.total_papers,
            "total_ai": h.total_ai, "total_revised": h.total_revised, "total_hf": h.total_hf,
            "last_check": self.local(h.last_check),
            "last_new_version": self.local(h.last_new_version),
            "newest_updated": self.local(h.newest_updated), "degraded": h.degraded,
            "sources": [{**asdict(x), "last_attempt": self.local(x.last_attempt),
                         "last_success": self.local(x.last_success),
                         "watermark": self.local(x.watermark)} for x in h.sources],
        }
        self.writer.write_text("status.json", json.dumps(status, ensure_ascii=False, indent=1,
                                                         sort_keys=True) + "\n")
        # Sitemaps want absolute URLs: set [site] base_url; without it the paths are relative.
        base = self.cfg.site.base_url.rstrip("/")
        prefix = f"{base}/" if base else ""
        urls = "".join(f"  <url><loc>{escape(prefix)}{escape(p.removesuffix('index.html'))}"
                       "</loc></url>\n" for p in sorted(set(self.pages)))
        self.writer.write_text("sitemap.xml", '<?xml version="1.0" encoding="UTF-8"?>\n'
                               '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                               f"\n{urls}</urlset>\n")
        sitemap = f"Sitemap: {base}/sitemap.xml\n" if base else ""
        self.writer.write_text("robots.txt", f"User-agent: *\nAllow: /\n{sitemap}")
        counts = Counter(p.split("/")[0] for p in self.pages)
        log.info("papertrail pages by section: %s", dict(counts))
