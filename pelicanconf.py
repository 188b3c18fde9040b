"""Pelican settings, driven by papertrail.toml. Papers come from the Parquet store through
our generator (pipeline.site); Pelican renders only the prose in content/."""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # pelican imports this file by path; make `pipeline` importable

from pipeline import config as _config  # noqa: E402

PAPERTRAIL_CONFIG = os.environ.get("PAPERTRAIL_CONFIG", str(HERE / "papertrail.toml"))
_cfg = _config.load(PAPERTRAIL_CONFIG)

SITENAME = _cfg.site.title
SITEURL = ""
RELATIVE_URLS = True
TIMEZONE = _cfg.site.timezone
DEFAULT_LANG = _cfg.site.language
PATH = str(HERE / "content")
OUTPUT_PATH = str(_cfg.output_path)
THEME = str(HERE / "theme")
THEME_STATIC_DIR = "theme"
THEME_STATIC_PATHS: list[str] = []  # pipeline.site copies theme/static itself
PLUGINS = ["pipeline.site"]

# Pelican's default is autoescape off: a <script> in a title would run.
JINJA_ENVIRONMENT = {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True}
# `c is category`: only a code of arXiv's taxonomy links to a category page.
from pipeline._ids import is_category as _is_category  # noqa: E402

JINJA_TESTS = {"category": _is_category}

# Prose pages only; papers never become articles.
ARTICLE_PATHS: list[str] = []
PAGE_PATHS = ["pages"]
STATIC_PATHS: list[str] = []
PAGE_URL = "{slug}/"
PAGE_SAVE_AS = "{slug}/index.html"

# The stock taxonomies, direct templates and feeds are off (their author/tag step is
# quadratic at 20k papers); pipeline.site renders ours.
DIRECT_TEMPLATES: list[str] = []
ARTICLE_SAVE_AS = AUTHOR_SAVE_AS = CATEGORY_SAVE_AS = TAG_SAVE_AS = ""
AUTHORS_SAVE_AS = CATEGORIES_SAVE_AS = TAGS_SAVE_AS = ARCHIVES_SAVE_AS = ""
DRAFT_SAVE_AS = DRAFT_PAGE_SAVE_AS = ""
FEED_ALL_ATOM = FEED_ALL_RSS = CATEGORY_FEED_ATOM = AUTHOR_FEED_ATOM = None
AUTHOR_FEED_RSS = TRANSLATION_FEED_ATOM = None
PAGINATION_PATTERNS = ((1, "{url}", "{save_as}"), (2, "{base_name}/page/{number}/",
                                                    "{base_name}/page/{number}/index.html"))
DELETE_OUTPUT_DIRECTORY = False  # unchanged files keep their bytes and times
CACHE_CONTENT = False
PAPERTRAIL_NOW = None  # the build's own clock; tests and the demo pin a simulated one

# What theme/templates/page.html (Pelican's prose pages) needs from our catalogue.
from pipeline.site import i18n as _i18n  # noqa: E402

_s = _i18n.strings(_cfg.site.language)
JINJA_GLOBALS = {
    "s": _s, "lang": _cfg.site.language, "site_title": SITENAME,
    "feeds": [{"slug": slug, "title": _s[f"feed_{slug}"]}
              for slug in ("all", "ai", "revisions", "digests")],
}
