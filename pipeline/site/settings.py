"""Pelican's settings, made in code from the Config: the one way the Config reaches the site
(as the PAPERTRAIL_CONFIG setting). Papers come from the Parquet store through our generator
(pipeline.site); Pelican itself renders only the prose in content/."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pelican.settings import read_settings

import pipeline.site.i18n as i18n
from pipeline.config import SITE_LANGUAGES, Config
from pipeline.site.model.brand import brand, titled
from pipeline.site.model.views import DIGEST_FIELDS
from pipeline.site.pages.kinds import nav_links
from pipeline.site.render.feeds import SITE_FEEDS
from pipeline.site.render.filters import bdi, meta_tags, slashed, time_element
from pipeline.site.render.safe import clean
from pipeline.site.render.tex import render_tex
from pipeline.sources import SOURCES
from pipeline.sources import facts as source_facts
from pipeline.text.ids import is_category

REPO = Path(__file__).resolve().parents[2]
THEME = REPO / "theme"

# The stock taxonomies, direct templates and feeds are off (their author/tag step is
# quadratic at 20k papers); pipeline.site renders ours. Papers never become articles.
_FIXED: dict[str, object] = {
    "RELATIVE_URLS": True, "PATH": str(REPO / "content"),
    "THEME": str(THEME), "THEME_STATIC_DIR": "theme",
    "THEME_STATIC_PATHS": [],  # pipeline.site copies theme/static itself
    # Pelican's default is autoescape off: a <script> in a title would run.
    # Templates do not change during a build: no stat of the template file on every
    # render (a card is rendered ~50,000 times at 20k papers). The cache of templates a
    # plain dict (cache_size -1, a few dozen templates, never evicted), not Jinja's LRU
    # with its lock: the build forks workers from a pool's thread while its own thread
    # renders, and a lock held at that moment would stay held in the worker forever.
    "JINJA_ENVIRONMENT": {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True,
                          "auto_reload": False, "cache_size": -1},
    # `text | tex`: untrusted text with LaTeX in it (comments) as safe HTML; `text | tex(links)`
    # a model's text (digests), linking only the paper's own URLs;
    # `names | bdi(12)` and `names | meta_tags(name)`: lists joined in one step (render.filters).
    # `time | slashed`: 2025/11/03, a citation tag's date; `time | time_element(local)`: its
    # <time> element, shown in the site's zone.
    # `page.content | titled(brand.title)`: the site's title where the prose names it.
    # `p.ai_reason | why(s)`: a paper's reasons (pipeline/text/reasons.py) in the site's language.
    "JINJA_FILTERS": {"tex": render_tex, "bdi": bdi, "meta_tags": meta_tags, "titled": titled,
                      "why": i18n.say, "slashed": slashed,
                      "time_element": time_element},
    "ARTICLE_PATHS": [], "STATIC_PATHS": [],
    "PAGE_URL": "{slug}/", "PAGE_SAVE_AS": "{slug}/index.html", "DIRECT_TEMPLATES": [],
    **dict.fromkeys(("ARTICLE_SAVE_AS", "AUTHOR_SAVE_AS", "CATEGORY_SAVE_AS", "TAG_SAVE_AS",
                     "AUTHORS_SAVE_AS", "CATEGORIES_SAVE_AS", "TAGS_SAVE_AS",
                     "ARCHIVES_SAVE_AS", "DRAFT_SAVE_AS", "DRAFT_PAGE_SAVE_AS"), ""),
    **dict.fromkeys(("FEED_ALL_ATOM", "FEED_ALL_RSS", "CATEGORY_FEED_ATOM", "AUTHOR_FEED_ATOM",
                     "AUTHOR_FEED_RSS", "TRANSLATION_FEED_ATOM")),
    "PAGINATION_PATTERNS": ((1, "{url}", "{save_as}"), (2, "{base_name}/page/{number}/",
                                                        "{base_name}/page/{number}/index.html")),
    "DELETE_OUTPUT_DIRECTORY": False,  # unchanged files keep their bytes and times
    "CACHE_CONTENT": False,
}


@dataclass(frozen=True)
class _HasPage:
    """`c is category`, a value (settings compare equal when their configs do)."""

    categories: frozenset[str]

    def __call__(self, code: str) -> bool:
        return code in self.categories and is_category(code)


def plain(cfg: Config, *, publish: bool = False, now: dt.datetime | None = None,
          writer_plugin: bool = True, alternates: i18n.Alternates | None = None,
          days: int = 0) -> dict[str, object]:
    """The settings as a pelicanconf.py would hold them. `publish`: absolute URLs from
    [site] base_url. `now`: the build's clock (tests and the demo pin a simulated one).
    `writer_plugin`: whether the plugin that supplies the writer is loaded too (a caller
    that supplies its own writer through the get_writer signal leaves it out).
    `alternates`: where the pages are in the site's other languages (build.py; none: this
    language alone). `days`: the papers first seen in the last that many days only (a
    language other than the default, [site] other_language_days); 0: every paper."""
    s = i18n.strings(cfg.site.language)
    alternates = alternates or i18n.Alternates(cfg.site.language)
    return {
        **_FIXED, "SITENAME": cfg.site.title, "TIMEZONE": cfg.site.timezone,
        "DEFAULT_LANG": cfg.site.language, "OUTPUT_PATH": str(cfg.output_path),
        # The prose pages (about) are written in each site language: content/pages/<lang>/.
        "PAGE_PATHS": [f"pages/{cfg.site.language}"],
        "SITEURL": cfg.site.base_url.rstrip("/") if publish else "",
        "PLUGINS": ["pipeline.site", *(["pipeline.site.writer"] if writer_plugin else [])],
        "PAPERTRAIL_CONFIG": cfg, "PAPERTRAIL_NOW": now, "PAPERTRAIL_DAYS": days,
        # `c is category`: only the fork's own categories have a page to link to (and
        # only a code of arXiv's taxonomy: a stored "../x" is text).
        "JINJA_TESTS": {"category": _HasPage(frozenset(cfg.sources.arxiv.categories))},
        # What theme/templates (Pelican's prose pages among them) need from our catalogue.
        "JINJA_GLOBALS": {"s": s, "lang": cfg.site.language, "site_title": cfg.site.title,
                          "brand": brand(cfg.site, s),
                          "simulated": simulated(cfg.site.simulated, s),
                          "digest_fields": DIGEST_FIELDS, "alternates": alternates,
                          # what a language other than the default carries (base.html)
                          "window_days": days,
                          "language_names": {language: s[i18n.name_key(language)]
                                             for language in SITE_LANGUAGES},
                          "default_language": s[i18n.name_key(
                              (*alternates.languages, cfg.site.language)[0])],
                          # a source's fact's label (`Source.facts`), by its column
                          "fact_labels": {f.column: clean(f.label[cfg.site.language])
                                          for f in source_facts()},
                          "nav_links": nav_links(s, cfg.site.language),
                          # what pages call each run's `source`: a source's own label, a
                          # job's (digest, notes, notify) from the catalogue
                          "run_names": {**{k.removeprefix("source_"): v for k, v in s.items()
                                           if k.startswith("source_")},
                                        **{name: source.label[cfg.site.language]
                                           for name, source in SOURCES.items()}},
                          "feeds": [{"slug": kind, "title": s[f"feed_{kind}"]}
                                    for kind in SITE_FEEDS]},
    }


def simulated(kinds: tuple[str, ...], s: dict[str, str]) -> str:
    """The banner every page of a site of made-up data carries, naming what is made up;
    empty for real data."""
    what = s["note_list_sep"].join(s[f"simulated_{k}"] for k in kinds)
    return s["simulated_banner"].format(what=what) if kinds else ""


def for_pelican(cfg: Config, **options: object) -> dict[str, Any]:
    """The settings, completed with Pelican's defaults as Pelican(settings) takes them."""
    return cast("dict[str, Any]",
                read_settings(override=plain(cfg, **options)))  # type: ignore[arg-type]
