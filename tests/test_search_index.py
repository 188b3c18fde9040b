"""The search index builder: normalisation, bigrams, prefixes, ranking, capping, bytes."""

from __future__ import annotations

import datetime as dt
import json
import random

import pyarrow as pa
import pyarrow.compute as pc
from markupsafe import Markup

from pipeline.site.index import search as _search
from pipeline.site.model.views import Paper
from pipeline.site.render.tex import plain_tex
from pipeline.text.venue import venue

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def paper(i: int, title: str = "A paper", abstract: str = "Nothing to see.",
          authors: tuple[str, ...] = ("Ann Author",), digest: str | None = None) -> Paper:
    when = T0 + dt.timedelta(hours=i)
    return Paper(arxiv_id=f"2606.{i:05d}", version=1, title=title, title_html=Markup(title),
                 abstract_text=abstract, authors=list(authors),
                 categories=["cs.LG"], primary="cs.LG", comment=None, journal_ref=None,
                 doi=None, published=when, updated=when, first_seen=when,
                 version_seen_at=when, ai_related=True, ai_reason=(), topics=[],
                 hf_upvotes=None, hf_repo=None, hf_day=None,
                 digest={"tldr": digest} if digest else None)


def lookup(index: _search.Index, term: str) -> tuple[list[int], list[int], int] | None:
    """(docs, scores, capped) of a term, read back the way search.js reads it."""
    shard = json.loads(index.files[f"search/t/{_search.fnv1a(term) % index.shards}.json"])
    row = shard["terms"].get(term)
    if row is None:
        return None
    entry = record(index, "term", row)
    flat, docs, doc = entry["postings"], [], 0
    for gap in flat[0::2]:
        doc += gap
        docs.append(doc)
    return docs, flat[1::2], entry["capped"]


def record(index: _search.Index, kind: str, row: list) -> dict:
    """A record by the names the manifest gives its fields, as search.js reads it."""
    fields = json.loads(index.files[_search.MANIFEST])["fields"][kind]
    assert len(fields) == len(row)
    return dict(zip(fields, row, strict=True))


def expansions(index: _search.Index, prefix: str) -> list[str]:
    shard = json.loads(index.files[f"search/t/{_search.fnv1a(prefix) % index.shards}.json"])
    return shard["prefixes"].get(prefix, [])


def test_latin_text_is_case_and_accent_insensitive():
    assert _search.normalise("Élan ÅNGSTRÖM ﬁne") == "elan angstrom fine"
    assert _search.tokens("Schrödinger's CAT-like naïve") == ["schrodinger", "cat", "like",
                                                             "naive"]


def test_cjk_runs_become_bigrams_and_ids_stay_whole():
    assert _search.tokens("扩散模型 for 2606.12345v2 我") == ["扩散", "散模", "模型", "for",
                                                              "2606.12345", "v2", "我"]
    assert _search.tokens("a b 7") == ["7"]  # single letters carry no meaning


# Texts where the index's fast cut and tokens() could part: ids at a text's edges and inside
# words, dots before and after digits, accents, dashes, a dotted capital I, other scripts.
WORDS_CASES = ["2401.12345", "x2401.12345", "2401.123456", "12401.1234", "2401.1234.5678",
               "e.g. 0.5 v1.2.3 end.", "A.B.C ...", ". .", "1.", ".1", "é.5 naïve—café",
               "İstanbul", "ﬁne Straße ǅ x²", "αβγ test", "深度学习 for 2606.12345v2",
               "Fig.1 and cs.LG, (2401.12345)", "", "a b 7", "Section 3.2. Results."]


def test_the_index_cuts_the_same_tokens_as_tokens():
    """A cut text, split as the index splits it (Arrow), gives tokens() in another order
    once what tokens() leaves out is dropped, on set cases and on random strings of the
    characters that matter (seeded)."""
    rnd = random.Random(5)
    texts = WORDS_CASES + ["".join(rnd.choice(chars) for _ in range(rnd.randint(0, 24)))
                           for chars in ("0123.. a", "12.aé I", "9 .xZ—α学\u0307")
                           for _ in range(5000)]
    split = pc.ascii_split_whitespace(pa.array([_search._cut(t) for t in texts], pa.string()))
    for text, words in zip(texts, split.to_pylist(), strict=True):
        kept = sorted(w for w in words if w not in _search._NOT_TERMS)
        assert kept == sorted(_search.tokens(text)), text


def test_prefixes():
    assert list(_search.prefixes("transformer"))[:3] == ["tr", "tra", "tran"]
    assert "transformer" not in list(_search.prefixes("transformer"))
    assert list(_search.prefixes("2606.12345")) == [] and list(_search.prefixes("2024")) == []
    assert list(_search.prefixes("模型")) == ["模"]


def test_fnv1a_matches_the_reference_vectors():
    assert _search.fnv1a("") == 0x811C9DC5 and _search.fnv1a("a") == 0xE40C292C


def test_title_and_author_hits_rank_above_abstract_hits():
    docs = [paper(0, abstract="We apply quantum annealing."),
            paper(1, title="Quantum annealing at scale"),
            paper(2, authors=("Quantum Smith",))]
    index = _search.build_index(docs, T0)
    found, scores, capped = lookup(index, "quantum")
    ranked = [d for _, d in sorted(zip(scores, found, strict=True), reverse=True)]
    assert ranked[-1] == 0 and set(ranked[:2]) == {1, 2} and capped == 0
    assert "quantum" in expansions(index, "qua") and "annealing" in expansions(index, "ann")
    assert lookup(index, "2606.00001")[0] == [1]


def test_digest_text_is_searchable_in_chinese():
    index = _search.build_index([paper(0), paper(1, digest="提出一种扩散模型。")], T0)
    assert lookup(index, "扩散")[0] == [1] and lookup(index, "模型")[0] == [1]
    assert "扩散" in expansions(index, "扩")


def test_common_terms_are_capped(monkeypatch):
    monkeypatch.setattr(_search, "CAP_DF", 5)
    monkeypatch.setattr(_search, "CAP_K", 3)
    docs = [paper(i, title="common" if i % 2 else "common rare" if i == 4 else "other",
                  abstract="common " * (i % 4 + 1)) for i in range(20)]
    docs += [paper(i) for i in range(20, 220)]  # so "common" keeps a real idf
    index = _search.build_index(docs, T0)
    found, scores, capped = lookup(index, "common")
    assert capped == 1 and len(found) == 3 and found == sorted(found)
    assert found == [3, 7, 11] and len(set(scores)) == 1  # title + most abstract hits; ties → older
    assert lookup(index, "rare") == ([4], lookup(index, "rare")[1], 0)
    manifest = json.loads(index.files["search/manifest.json"])
    assert manifest["docs"] == 220 and manifest["cap_df"] == 5


def test_output_is_deterministic_and_carries_no_markup():
    docs = [paper(i, title=f"Paper {i} on <script>graphs</script>",
                  abstract=f"We study topic{i % 7} and graphs.") for i in range(200)]
    first = _search.build_index(docs, T0).files
    shuffled = docs[:]
    random.Random(1).shuffle(shuffled)
    assert _search.build_index(shuffled, T0).files == first
    assert all("<" not in text for text in first.values())
    assert all(json.loads(text) is not None for text in first.values())
    chunks = [n for n in first if n.startswith("search/d/")]
    assert len(chunks) == -(-200 // _search.CHUNK)


def test_docs_recent_entries_and_facets_are_read_by_the_names_the_manifest_gives():
    docs = [paper(0), paper(1, title="Second", digest="一句话")]
    docs[1].ai_related, docs[1].version = True, 2
    index = _search.build_index(docs, T0)
    manifest = json.loads(index.files[_search.MANIFEST])
    second = record(index, "doc", json.loads(index.files["search/d/0.json"])[1])
    assert (second["id"], second["title"], second["version"], second["tldr"]) == (
        docs[1].arxiv_id, "Second", 2, "一句话")
    flags = {name for i, name in enumerate(manifest["fields"]["flag"])
             if second["flags"] & 1 << i}
    assert flags == {"ai", "revised", "page"}
    newest = record(index, "recent", json.loads(index.files["search/recent.json"])[0])
    assert (newest["doc"], newest["id"]) == (1, docs[1].arxiv_id)
    block = json.loads(index.files["search/f/0.json"])
    assert sorted(block) == sorted(manifest["fields"]["facet"])
    assert block["first_seen"] == [_search.minutes(p.first_seen) for p in docs]


def test_the_glossary_holds_the_topics_names_and_the_built_in_terms():
    from pipeline import config as config_mod
    from pipeline import demo
    from pipeline.site.index.glossary import BUILT_IN, glossary

    cfg = config_mod.load(demo.CONFIG)
    terms = glossary(cfg.topics)
    assert terms["大模型智能体"] == "LLM agents"
    assert terms["扩散模型"] == "diffusion model"
    assert len(terms) == len(BUILT_IN | {t.name.zh: t.name.en for t in cfg.topics})
    assert all(k and v and k != v for k, v in terms.items())


def test_a_long_digest_line_is_cut_at_a_word_with_an_ellipsis():
    line = "We propose " + "a careful method " * 20
    index = _search.build_index([paper(0, digest=line)], T0)
    tldr = record(index, "doc", json.loads(index.files["search/d/0.json"])[0])["tldr"]
    assert tldr.endswith(" …") and len(tldr) <= _search.TLDR_CHARS + 2
    assert line.startswith(tldr.removesuffix(" …"))
    assert tldr.removesuffix(" …").split()[-1] in ("a", "careful", "method")


def test_every_papers_similar_list_is_found_by_its_id_page_or_not():
    """search/s/ maps an id (by its hash, as term shards) to its own doc number, then its
    similar papers' in order; a paper without a page has its list too, and a neighbour
    the library no longer holds is left out."""
    docs = [paper(i) for i in range(1000)]
    for i, p in enumerate(docs):
        p.similar = [docs[(i + k) % 1000].arxiv_id for k in (1, 5, 2)]
        p.pageable = i % 2 == 0
    docs[7].similar = []
    docs[8].similar = [docs[9].arxiv_id, "2606.99999", docs[3].arxiv_id]  # one has gone
    index = _search.build_index(docs[::-1], T0)  # any order in, doc numbers by first_seen
    shards = json.loads(index.files[_search.MANIFEST])["similar_shards"]
    assert shards > 1 and shards & shards - 1 == 0  # a power of two, as term shards

    def listed(arxiv_id: str) -> list[int] | None:
        part = json.loads(index.files[f"search/s/{_search.fnv1a(arxiv_id) % shards}.json"])
        return part.get(arxiv_id)

    for i in (0, 1, 998, 999):
        assert listed(docs[i].arxiv_id) == [i, *((i + k) % 1000 for k in (1, 5, 2))]
    assert listed(docs[7].arxiv_id) is None
    assert listed(docs[8].arxiv_id) == [8, 9, 3]
    assert sum(len(json.loads(index.files[f"search/s/{k}.json"])) for k in range(shards)) == 999
    assert _search.build_index(docs, T0).files == index.files


def test_an_index_without_similar_lists_says_so():
    index = _search.build_index([paper(0), paper(1)], T0)
    assert json.loads(index.files[_search.MANIFEST])["similar_shards"] == 0
    assert not [n for n in index.files if n.startswith("search/s/")]


def test_the_key_an_index_makes_along_the_way_is_the_one_made_on_its_own(monkeypatch):
    # A build keeps the last index when its key is unchanged; a new index makes the key
    # from the texts and records it makes anyway (batches of docs: BATCH made small).
    monkeypatch.setattr(_search, "BATCH", 7)
    names = {"graphs": "图学习"}
    docs = [paper(i, title=f"Paper {i}", abstract=f"We study topic{i % 5}.",
                  digest="一句话" if i % 3 else None) for i in range(40)]
    for i, p in enumerate(docs):
        p.topics = [("graphs", "title")] if i % 2 else []
        p.similar = [docs[(i + 1) % 40].arxiv_id]
    key = _search.build_index(docs[::-1], T0, names).key  # sorted into index order inside
    in_order = sorted(docs, key=lambda p: (p.first_seen, p.arxiv_id))
    assert key == _search.fingerprint(in_order, names)
    docs[5].similar = []
    assert _search.build_index(docs, T0, names).key != key
    docs[5].similar = [docs[6].arxiv_id]
    assert _search.build_index(docs, T0, names).key == key
    assert _search.build_index(docs, T0, {"graphs": "图"}).key != key
    docs[9].title = "Paper nine"
    assert _search.fingerprint(in_order, names) != key


def test_the_index_is_the_same_in_small_batches_and_joins(monkeypatch):
    # Postings are gathered batch by batch and joined every _Column.JOIN_ROWS rows, and
    # words are marked as found outside author names as their numbers come.
    docs = [paper(i, title=f"Paper {i} on graph{i % 11}", authors=(f"Name{i % 5} Smith",),
                  abstract=f"We study topic{i % 7} and words{i}.") for i in range(60)]
    whole = _search.build_index(docs, T0)  # one batch
    assert lookup(whole, "smith")[0] == list(range(60))
    assert "smith" not in expansions(whole, "smi") and "graph10" in expansions(whole, "graph1")
    monkeypatch.setattr(_search, "BATCH", 7)
    monkeypatch.setattr(_search._Column, "JOIN_ROWS", 100)  # a join every two batches or so
    assert _search.build_index(docs, T0).files == whole.files


def test_a_word_found_only_in_author_names_completes_no_prefix():
    # "VLA" being typed finds VLA papers first, not Vladislav's (an author is found by
    # the whole name, or by au:)
    docs = [paper(0, title="VLA models for robots"), paper(1, authors=("Vladislav Rosov",)),
            paper(2, title="Ports of Vladivostok", authors=("Vladislav Rosov",))]
    index = _search.build_index(docs, T0)
    assert "vladislav" not in expansions(index, "vla")
    assert "vladivostok" in expansions(index, "vla")
    assert lookup(index, "vladislav")[0] == [1, 2]


def test_a_venue_is_searched_by_its_name_and_listed_for_the_filter():
    docs = [paper(i) for i in range(5)]
    for p, taken in zip(docs, ("Accepted to ECCV 2026", "ECCV 2026 Workshop on Robots",
                               "Accepted at ICML 2026", None, None), strict=True):
        p.venue = venue(taken, None, None)
    docs[3].venue = venue(None, None, "10.1145/1")  # known by its DOI alone: no group
    index = _search.build_index(docs, T0)
    assert lookup(index, "eccv")[0] == [0, 1]
    assert lookup(index, "icml")[0] == [2]
    assert [_search.venue_of(p) for p in docs] == ["ECCV", "ECCV", "ICML", None, None]
    manifest = json.loads(index.files[_search.MANIFEST])
    assert manifest["venues"] == ["ECCV"]  # ICML has one paper: found by words, not listed
    assert json.loads(index.files["search/f/0.json"])["venue"] == [0, 0, -1, -1, -1]


def test_pairs_are_neighbouring_words_of_two_papers_or_more(sample_papers: pa.Table):
    """The index's pair terms are exactly pairs(tokens(…)) of the titles and abstracts as
    plain text, kept when two papers or more hold them, each with its papers."""
    rows = sample_papers.to_pylist()[:400]
    papers = [paper(i, title=r["title"], abstract=r["abstract"]) for i, r in enumerate(rows)]
    index = _search.build_index(papers, T0)
    holders: dict[str, set[int]] = {}
    for doc, r in enumerate(rows):
        for pair in {*_search.pairs(_search.tokens(plain_tex(r["title"]))),
                     *_search.pairs(_search.tokens(plain_tex(r["abstract"], math=False)))}:
            holders.setdefault(pair, set()).add(doc)
    indexed = {t for k in range(index.shards)
               for t in json.loads(index.files[f"search/t/{k}.json"])["terms"] if "_" in t}
    assert indexed == {p for p, docs in holders.items() if len(docs) >= 2}
    for pair in sorted(indexed)[:50]:
        found = lookup(index, pair)
        assert found is not None and set(found[0]) == holders[pair]
    assert "_" not in "".join(expansions(index, "la") + expansions(index, "lang"))


def test_a_result_says_its_venues_tier(sample_papers: pa.Table):
    kinds = {"CVPR 2026": "main", "CVPR 2026 Workshop": "workshop", "ACL 2026 Findings":
             "findings", "IEEE Transactions on Robotics": "journal"}
    papers = []
    for i, said in enumerate(kinds):
        p = paper(i)
        papers.append(Paper(**{**p.__dict__, "comment": f"Accepted at {said}",
                               "venue": venue(f"Accepted at {said}", None, None)}))
    index = _search.build_index(papers, T0)
    docs = [record(index, "doc", r) for r in json.loads(index.files["search/d/0.json"])]
    assert [d["tier"] for d in docs] == list(kinds.values())
