"""The site's name and home-page lines from [site], and the credit a site under a title of
its own gives PaperTrail (in the footer and on the about page)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from markupsafe import Markup, escape

from pipeline.config import SiteConfig

UPSTREAM = "PaperTrail"  # the project's name, said only in the credit
DEFAULT_TITLE = next(f.default for f in dataclasses.fields(SiteConfig) if f.name == "title")
# Where the prose pages (content/pages) name the site.
TITLE_MARK = "{site_title}"


@dataclass(frozen=True)
class Brand:
    title: str
    short: str  # the header's name in bold
    rest: str  # what the header shows after it ("" for nothing)
    tagline: str
    hero: str
    intro: str
    credit: bool  # the site has a title of its own: it credits PaperTrail
    source_url: str  # the credit's link ("" for none)
    upstream: str = UPSTREAM


def brand(site: SiteConfig, strings: dict[str, str]) -> Brand:
    short = site.short_name or (site.title.split() or [site.title])[0]
    rest = site.title.removeprefix(short).strip() if site.title.startswith(short) else site.title
    return Brand(title=site.title, short=short, rest=rest, tagline=site.tagline,
                 hero=site.hero or strings["hero"], intro=site.intro or strings["intro"],
                 credit=site.title != DEFAULT_TITLE, source_url=site.source_url)


def titled(html: str, title: str) -> Markup:
    """A prose page's HTML with the site's title, escaped, where it names the site."""
    return Markup(str(html).replace(TITLE_MARK, str(escape(title))))
