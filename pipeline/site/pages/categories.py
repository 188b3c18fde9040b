"""A list per arXiv category, each with its feed, and the index of categories."""

from __future__ import annotations

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    written = []
    specs = {spec.slug: spec for spec in site.feeds}
    for cat, members in site.categories.items():
        spec = specs[f"category/{cat}"]
        written += out.listing(f"category/{cat}/", spec.title, members, feeds=[spec],
                               nav="categories", feed=spec, brief=specs[f"brief/{spec.slug}"],
                               follow=("category", cat, cat))
    written.append(out.page(
        "category/", "index_list.html", title=site.strings["categories"],
        entries=[(f"category/{c}/", c, len(m)) for c, m in site.categories.items()],
        nav="categories"))
    return written
