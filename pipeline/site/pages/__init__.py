"""One module per page kind: `render(site, out) -> list[path]` writes the kind's files
through `out` (pipeline.site.output) from the SiteData alone, in any order and process,
and returns the site paths of the pages among them (what the sitemap lists). `kinds` is
their registry."""
