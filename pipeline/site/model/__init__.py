"""What the pages show, read from the store once and shaped into plain values; it renders
nothing but text (through `site.render`).

- `views`: the store read into the `Library` of `Paper`s and `Version`s the templates see.
- `data`: `SiteData`, everything every page kind reads, computed once.
- `history`: a paper's events and first venue, from what arXiv said reading by reading.
- `follows`: a fork's `[[follows]]` held against the library.
- `note`: a revision's change note made by rule.
- `brand`: the site's name and home-page lines from `[site]`.
"""
