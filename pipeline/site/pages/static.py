"""The theme's css and js."""

from __future__ import annotations

from pipeline.site.data import SiteData
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    """Through the writer, so unchanged files keep their bytes and times (Pelican's own
    copy would touch them on every build). Not pages: the sitemap lists none."""
    static = site.theme / "static"
    for path in sorted(static.rglob("*")):
        if path.is_file():
            out.writer.put(out.root / "theme" / path.relative_to(static), path.read_bytes())
    return []
