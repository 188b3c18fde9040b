"""Values into the formats readers get, untrusted text escaped first; they know nothing of
the store or of pages.

- `tex`: arXiv's LaTeX-laden text as escaped HTML with MathML, or plain Unicode;
  `mathml` one formula as sanitised MathML.
- `safe`: the one gate stored text passes before any page, feed or JSON file shows it.
- `diff`: a word-level diff of two versions, as escaped HTML.
- `filters`: the Jinja filters that join a page's lists in one step.
- `feeds`: Atom, RSS and OPML from feed entries, within the byte cap.
"""
