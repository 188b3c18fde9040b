"""The theme's css and js, and ui.js: what paper pages show only through their scripts, in
the site's language (theme/templates/ui.js)."""

from __future__ import annotations

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output

ROOT = "\ue000"  # stands for a page's relative root in ui.js's links (app.js puts it in)


def render(site: SiteData, out: Output) -> list[str]:
    """Through the writer, so unchanged files keep their bytes and times (Pelican's own
    copy would touch them on every build). Not pages: the sitemap lists none."""
    static = site.theme / "static"
    for path in sorted(static.rglob("*")):
        if path.is_file():
            out.writer.put(out.root / "theme" / path.relative_to(static), path.read_bytes())
    by = site.lib.similar_by  # what the similar lists were made with: the reader is told
    how = (site.strings["similar_how_meaning"].format(model=by) if by
           else site.strings["similar_how"])
    ui = out.env.get_template("ui.js").render(s=site.strings, lang=site.lang, root=ROOT,
                                              similar_how=how)
    out.writer.put(out.root / "theme" / "ui.js", ui.encode("utf-8"))
    return []
