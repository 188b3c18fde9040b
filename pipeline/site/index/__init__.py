"""What the pages' scripts read instead of a server: the search index (`search`, with the
Chinese names of common terms, `glossary`) and 为你推荐's vectors of the recent papers
(`recommend`)."""
