"""What is derived from the library, above the store and below the site and the digests.

- `enrich`: re-derives the derived columns (the AI flag, topics) and writes only those.
- `classify`: the AI flag, an explainable rule (pure).
- `topics`: which `[[topics]]` a paper belongs to, and why (pure).
- `scope`: the papers a fork's config selects, and what its follows ask that it cannot
  fetch (pure).
- `similar`: the similar-papers table; `neighbours` finds them by TF-IDF (pure),
  `embeddings` asks an OpenAI-compatible server.
- `rank`: 今日精选, a paper's score from its signals (pure).
- `readings`: what arXiv said of a paper reading by reading, from the snapshots.
- `stats`: the numbers the site and the job summary state (pure).
"""
