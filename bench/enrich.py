"""Benchmark: re-classify and re-match a 200,000-paper store against 20 topics (not a test).

The synthetic store is drawn from the bundled sample's distributions: each row
takes the title, abstract, authors and categories of independently chosen real
sample papers (so the text is real and the mix is the sample's), and ~5% of rows
get HF upvotes drawn from the sample's real picks. Run: `python bench/enrich.py
[N]` (`--smoke`: 2,000 papers); prints timings and peak memory. `--keywords 100 1000
2000` instead times one topic of that many keywords (two-word phrases of the sample's
titles, most frequent first) over as many papers as the sample holds.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import itertools
import json
import re
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import config as config_mod
from pipeline import demo
from pipeline.config import Topic, TopicName
from pipeline.derive import classify, topics
from pipeline.derive.enrich import enrich
from pipeline.merge import merge_arxiv
from pipeline.replay import sample
from pipeline.store import Store
from pipeline.tables import ARXIV_SNAPSHOT, PAPERS, VERSIONS, empty, to_table
from pipeline.text.taxonomy import CS_CATEGORIES

EXTRA_TOPICS = [
    dict(keywords=("retrieval-augmented generation", "RAG"), exclude=("ragged",)),
    dict(keywords=("vision-language model", "VLM", "multimodal large language model")),
    dict(keywords=("graph neural network", "GNN"), categories=("cs.LG", "cs.SI", "cs.AI")),
    dict(keywords=("speech recognition", "text-to-speech", "ASR")),
    dict(keywords=("medical image", "radiology", "pathology"), all=(("clinical", "model"),)),
    dict(keywords=("federated learning",), exclude=("blockchain",)),
    dict(keywords=("autonomous driving", "trajectory prediction"), categories=("cs.CV",
                                                                               "cs.RO")),
    dict(keywords=("benchmark", "dataset"), min_upvotes=10),
    dict(authors=("Kaiming He", "Yann LeCun", "Fei-Fei Li", "J. Wang", "Y. Li"),
         match_initials=True),
    dict(keywords=("mathematical reasoning", "chain-of-thought", "theorem proving")),
    dict(keywords=("code generation", "program synthesis"), all=(("code", "LLM"),)),
    dict(keywords=("3D reconstruction", "Gaussian splatting", "NeRF")),
    dict(keywords=("recommendation", "recommender system"), categories=("cs.IR",)),
    dict(min_upvotes=20),
]


def synthetic_papers(n: int, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    """`n` papers, and the Hugging Face picks among them (5%, with real upvote counts)."""
    rows = [{**{k: v for k, v in e.__dict__.items() if k != "announced"},
             "authors": list(e.authors), "categories": list(e.categories),
             "primary_category": e.primary_category, "fetched_at": e.announced}
            for e in sample.entries()]
    base = merge_arxiv(empty(PAPERS), empty(VERSIONS),
                       pa.Table.from_pylist(rows, schema=ARXIV_SNAPSHOT), CS_CATEGORIES).papers
    rng = np.random.default_rng(seed)
    pick = lambda: pa.array(rng.integers(0, base.num_rows, n))  # noqa: E731
    cats = base["categories"].take(pick())
    upvotes = [it["paper"].get("upvotes", 0) for day in sample.days()
               for it in json.loads(sample.hf_daily(day) or b"[]")]
    picked = rng.random(n) < 0.05
    votes = np.where(picked, rng.choice(upvotes, n), 0)
    ids = pa.array([f"{2600 + i // 100000:04d}.{i % 100000:05d}" for i in range(n)])
    picks = pa.table({"arxiv_id": ids, "hf_upvotes": pa.array(votes, pa.int32())}).filter(
        pa.array(picked))
    return to_table(pa.table({
        "arxiv_id": ids,
        "version": pa.array(np.ones(n, dtype=np.int32)),
        "title": base["title"].take(pick()), "abstract": base["abstract"].take(pick()),
        "authors": base["authors"].take(pick()), "categories": cats,
        "primary_category": pc.list_element(cats, 0),
        "published": base["published"].take(pick()), "updated": base["updated"].take(pick()),
    }), PAPERS), picks


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def time_keywords(counts: list[int]) -> None:
    """One topic of each many keywords, matched over the sample's number of papers."""
    pairs: Counter[str] = Counter()
    for e in sample.entries():
        words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z\-]{3,}", e.title)]
        pairs.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    phrases = [p for p, _ in pairs.most_common()]
    papers, _ = synthetic_papers(len(sample.entries()))
    for n in counts:
        topic = Topic(slug="bench", name=TopicName(zh="基准", en="Bench"),
                      keywords=tuple(phrases[:n]))
        t = time.perf_counter()
        matched = topics.match(papers, (topic,))
        print(f"{len(topic.keywords):,} keywords over {papers.num_rows:,} papers: "
              f"{time.perf_counter() - t:.2f} s, {topics.counts(matched).get('bench', 0):,} "
              "matched")


def main() -> None:
    parser = argparse.ArgumentParser(description="Time enrich over a synthetic store.")
    parser.add_argument("n", nargs="?", type=int, default=200_000, metavar="N")
    parser.add_argument("--smoke", action="store_true", help="2,000 papers")
    parser.add_argument("--keywords", type=int, nargs="+", metavar="K",
                        help="time one topic of K keywords instead")
    args = parser.parse_args()
    if args.keywords:
        time_keywords(args.keywords)
        return
    n = 2_000 if args.smoke else args.n
    cfg = config_mod.load(demo.CONFIG)
    extra = tuple(Topic(slug=f"bench-{i}", name=TopicName(zh="基准", en="Bench"), **spec)
                  for i, spec in enumerate(EXTRA_TOPICS))
    cfg = dataclasses.replace(cfg, topics=(*cfg.topics, *extra)[:20])
    began = time.perf_counter()
    papers, picks = synthetic_papers(n)
    text_mb = (pc.sum(pc.utf8_length(papers["abstract"])).as_py()
               + pc.sum(pc.utf8_length(papers["title"])).as_py()) / 1e6
    print(f"synthetic store: {n:,} papers, {text_mb:,.0f} MB of title+abstract text, "
          f"built in {time.perf_counter() - began:.1f} s; {len(cfg.topics)} topics")

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "data")
        store.write("papers", papers)
        store.write("hf", picks)
        del papers  # so the peak below is enrich's own: it reads the store itself
        gc.collect()
        base_mb = peak_mb()
        t = time.perf_counter()
        result = enrich(cfg, store)
        t_enrich = time.perf_counter() - t
        enrich_mb = peak_mb()
        papers = store.library()
    print(f"enrich (read + classify + topics + atomic write): {t_enrich:.2f} s, "
          f"written={result['written']}; peak RSS {enrich_mb:,.0f} MB "
          f"(before: {base_mb:,.0f} MB)")

    t = time.perf_counter()
    flag = classify.classify(papers, cfg.classify)
    t_classify = time.perf_counter() - t
    t = time.perf_counter()
    matched = topics.match(papers, cfg.topics)
    t_topics = time.perf_counter() - t
    share = pc.mean(pc.cast(flag.ai_related, pa.int8())).as_py()
    per_row = pc.list_value_length(matched.topics)
    print(f"classify: {t_classify:.2f} s ({share:.1%} AI-related)")
    print(f"topics:   {t_topics:.2f} s ({pc.mean(per_row).as_py():.2f} topics per paper, "
          f"{pc.sum(pc.greater(per_row, 0)).as_py():,} papers in ≥1 topic)")
    verdict = "OK" if t_classify + t_topics < 30 else "TOO SLOW"
    print(f"{verdict}: classify + topics = {t_classify + t_topics:.1f} s (target < 30 s)")


if __name__ == "__main__":
    main()
