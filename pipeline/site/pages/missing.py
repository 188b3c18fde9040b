"""404.html: what GitHub Pages (and `papertrail demo`) serve for an address the site lacks.
A paper page's address names its paper, so search.js shows that paper from the index when
its page is gone ([site] max_site_mb, paper_pages_days): a link to it never dead-ends."""

from __future__ import annotations

from urllib.parse import urlsplit

from pipeline.site.i18n import NO_LINKS
from pipeline.site.model.data import SiteData
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    """Not a page for the sitemap. It is served at any depth, so its links start from the
    site's root on its host: base_url's path ("/" for the demo, "/<repo>/" on Pages)."""
    root = urlsplit(site.cfg.site.base_url).path.rstrip("/") + "/"
    # served at any address: no counterpart in the other languages to link
    context = out.context(root, title=site.strings["missing_title"], langs=NO_LINKS)
    out.writer.render("404.html", out.template("missing"), context)
    return []
