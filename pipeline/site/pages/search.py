"""The search and follow pages, and the client-side index they read (pipeline.site.index.search
makes its files; this writes them, or keeps them when its inputs are unchanged)."""

from __future__ import annotations

import json

import pipeline.site.index.search as _search
from pipeline.site.budget import pages_from
from pipeline.site.index.glossary import glossary
from pipeline.site.model.data import SiteData
from pipeline.site.output import Output
from pipeline.site.writer import read_record, stamp
from pipeline.text.taxonomy import ALL_CATEGORIES

CACHE = ".papertrail/search.json"  # the key of the last index's inputs, its files' stamps


def render_pages(site: SiteData, out: Output) -> list[str]:
    papers, s = site.lib.papers, site.strings
    return [out.page("search/", "search.html", title=s["search"], nav="search",
                     categories=sorted({c for p in papers for c in p.categories}),
                     topics=sorted({t for p in papers for t, _ in p.topics}),
                     venues=_search.venues(papers),
                     more_like=site.cfg.similar.enabled),  # search/s/ holds the lists
            # The export writes only categories the fork's config accepts (arXiv's taxonomy).
            out.page("follow/", "follow.html", title=s["follow"], nav="follow",
                     known_categories=" ".join(sorted(ALL_CATEGORIES)))]


def render_index(site: SiteData, out: Output, made: str | None = None) -> str:
    """When the index's inputs are those of the last build and its files are still the
    ones it wrote (a build killed while writing the index leaves other stamps), keep them:
    only the manifest's as_of and pages_from move. The key is made only then, on its own
    (~16 s at 200,000 papers); a new index makes it along the way. `made`: the key of the
    index an earlier pass of this build made, from the same inputs, so it is not made
    again. Returns the key."""
    w, root = out.writer, out.root
    docs = sorted(site.lib.papers, key=lambda p: (p.first_seen, p.arxiv_id))
    old = read_record(root / CACHE)
    stamps = old.get("stamps")
    if not isinstance(stamps, dict):
        stamps = {}
    intact = bool(stamps) and all(stamp(root / name) == seen for name, seen in stamps.items())
    key = (made or _search.fingerprint(docs, site.topic_names)) if intact else ""
    if intact and old.get("key") == key:
        manifest = old["manifest"]
        for name in stamps:
            w.keep(root / name)
    else:
        index = _search.build_index(docs, site.lib.now, site.topic_names)
        key = index.key
        manifest = json.loads(index.files.pop(_search.MANIFEST))
        stamps = {}
        for name in sorted(index.files):
            path, data = _search.stored(name, index.files[name])
            stamps[path] = w.put(root / path, data)
    # The site's zone, for the times search.js and follow.js show; the badge of a venue
    # known by its DOI alone (the index says "DOI"); how a result says its venue's tier
    # ("{value} · 主会"); the oldest paper page kept; the
    # glossary, for the English form of a Chinese query.
    w.write_text(_search.MANIFEST, _search.dumps({
        **manifest, "as_of": _search.minutes(site.lib.now),
        "timezone": site.cfg.site.timezone, "tz_label": site.tz_label,
        "published": site.strings["venue_published"],
        "tiers": {t: site.strings[f"reason_venue_{t}"] for t in _search.TIERS},
        "pages_from": pages_from(site.paged),
        "glossary": glossary(site.cfg.topics)}))
    w.put(root / CACHE, json.dumps({"key": key, "stamps": stamps, "manifest": manifest},
                                   sort_keys=True).encode(), atomic=True)
    return key
