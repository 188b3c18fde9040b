"""A list per configured topic (with why each paper matched), its feed, and the index."""

from __future__ import annotations

from pipeline.site.model.data import SiteData
from pipeline.site.output import Output


def render(site: SiteData, out: Output) -> list[str]:
    written = []
    specs = {spec.slug: spec for spec in site.feeds}
    for topic in site.topics:
        spec = specs[f"topic/{topic.slug}"]
        written += out.listing(f"topic/{topic.slug}/", spec.title, topic.members,
                               intro=topic.description, feeds=[spec], notes=topic.reasons,
                               nav="topics", feed=spec, brief=specs[f"brief/{spec.slug}"],
                               follow=("topic", topic.slug, topic.name))
    entries = [(f"topic/{t.slug}/", t.name, len(t.members)) for t in site.topics]
    written.append(out.page("topic/", "index_list.html", title=site.strings["topics"],
                            entries=entries, nav="topics"))
    return written
