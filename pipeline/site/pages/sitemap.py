"""The machine-readable files: status.json, sitemap.xml of every page, robots.txt."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict

from markupsafe import escape

import pipeline.site.i18n as i18n
from pipeline.site.model.data import SiteData
from pipeline.site.output import Output
from pipeline.site.writer import gzipped

# The sitemap protocol's limit per file; past it sitemap.xml is an index of gzipped parts,
# sitemap/1.xml.gz … (a year of cs.* is ~170,000 pages; gzip makes 14 MB of them 1 MB).
URLS_PER_FILE = 50_000
_XML = '<?xml version="1.0" encoding="UTF-8"?>\n'
_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def render(site: SiteData, out: Output, pages: Iterable[str]) -> list[str]:
    """`pages`: the site paths of every page the other renderers wrote, and those of them
    the site's other languages made too (i18n.Alternates: they are built first)."""
    # Sitemaps want absolute URLs: set [site] base_url; without it the paths are relative.
    base = site.cfg.site.base_url.rstrip("/")
    prefix = f"{base}/" if base else ""
    pages = set(pages)
    made = out.alternates.made if out.alternates else {}
    pages |= {i18n.prefix(language) + p for language, files in made.items()
              for p in pages & files}
    urls = [f"  <url><loc>{escape(prefix)}{escape(p.removesuffix('index.html'))}</loc></url>\n"
            for p in sorted(pages)]
    sitemap = f"Sitemap: {base}/sitemap.xml\n" if base else ""
    w = out.writer
    w.write_text("status.json", json.dumps(_status(site), ensure_ascii=False, indent=1,
                                           sort_keys=True) + "\n")
    parts = [urls[i:i + URLS_PER_FILE] for i in range(0, len(urls), URLS_PER_FILE)]
    if len(parts) <= 1:
        w.write_text("sitemap.xml", f"{_XML}<urlset {_NS}>\n{''.join(urls)}</urlset>\n")
    else:
        for n, part in enumerate(parts, 1):
            xml = f"{_XML}<urlset {_NS}>\n{''.join(part)}</urlset>\n"
            # The same URLs make the same bytes, so an unchanged part is not rewritten.
            w.put(out.root / f"sitemap/{n}.xml.gz", gzipped(xml.encode()))
        index = "".join(f"  <sitemap><loc>{escape(prefix)}sitemap/{n}.xml.gz</loc></sitemap>\n"
                        for n in range(1, len(parts) + 1))
        w.write_text("sitemap.xml", f"{_XML}<sitemapindex {_NS}>\n{index}</sitemapindex>\n")
    w.write_text("robots.txt", f"User-agent: *\nAllow: /\n{sitemap}")
    return []


def _status(site: SiteData) -> dict[str, object]:
    h, local = site.home, site.local
    return {
        "as_of": h.now.isoformat(), "window_start": h.window_start.isoformat(),
        "new_papers": h.new_papers, "new_ai": h.new_ai, "revised": h.revised,
        "new_digests": h.new_digests, "total_papers": h.total_papers,
        "total_ai": h.total_ai, "total_revised": h.total_revised, "total_hf": h.total_hf,
        "last_check": local(h.last_check), "last_new_version": local(h.last_new_version),
        "newest_updated": local(h.newest_updated), "degraded": h.degraded,
        "sources": [{**asdict(x), "last_attempt": local(x.last_attempt),
                     "last_success": local(x.last_success),
                     "watermark": local(x.watermark)} for x in h.sources],
    }
