"""Search ranking against judged queries: what the site's search shows first for queries of
the kinds readers type (topics, methods, venues, an author, misspellings, phrases), scored
against graded papers of the bundled sample. Prints figures; asserts nothing.

The judgements (bench/judgements/search.csv; method in docs/SEARCH.md, "How ranking is
measured"): per query, the sample's papers graded 2 (what the query asks for) or 1
(related); a query no paper answers has one row with no id. The site is the demo's, built
by the real pipeline (as `papertrail demo`), its search/ files searched by the site's own
engine.js under node (bench/_search.mjs), each query as submitted.

Per query: nDCG@10 (gain = grade) and P@10 (grade ≥ 1); their means; for a query no paper
answers, how many results it still shows. The pipeline measured is the one imported: run
with PYTHONPATH pointing at another checkout (and its engine.js, the default) to measure
that one. `--site OUTPUT` reuses a built site; `--record` appends the figures to
bench/results/search_quality.csv. `--smoke`: three queries over an index made straight from
the sample's papers (no demo run; no topics, digests nor similar papers).

Run: .venv/bin/python bench/search_quality.py [--site OUTPUT] [--record]   (--smoke)
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import re
import subprocess
import tempfile
from pathlib import Path

from _results import machine_load
from _results import record as results_record
from markupsafe import Markup

import pipeline
from pipeline import config as config_mod
from pipeline import demo
from pipeline.replay import sample
from pipeline.site.index import search as _search
from pipeline.site.model.views import Paper
from pipeline.text.venue import venue

REPO = Path(__file__).resolve().parent.parent
JUDGED = REPO / "bench" / "judgements" / "search.csv"
SEARCH_JS = REPO / "bench" / "_search.mjs"
K = 10


def judged() -> dict[str, dict[str, int]]:
    """Grades per query, in the file's order; every id a paper of the sample."""
    known = {e.arxiv_id for e in sample.entries()}
    out: dict[str, dict[str, int]] = {}
    with JUDGED.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            grades = out.setdefault(row["query"], {})
            if row["arxiv_id"]:
                if row["arxiv_id"] not in known or row["grade"] not in ("1", "2"):
                    raise SystemExit(f"search.csv: {row}: not a sample paper, or grade not 1/2")
                grades[row["arxiv_id"]] = int(row["grade"])
    return out


def ndcg(ranked: list[str], grades: dict[str, int]) -> float:
    dcg = sum(grades.get(a, 0) / math.log2(i + 2) for i, a in enumerate(ranked[:K]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(grades.values(),
                                                                  reverse=True)[:K]))
    return dcg / ideal if ideal else 0.0


def searched(output: Path, engine: Path, queries: list[str]) -> dict[str, dict[str, object]]:
    got = subprocess.run(["node", str(SEARCH_JS), str(output), str(engine)],
                         input=json.dumps(queries), capture_output=True, text=True, check=True)
    result: dict[str, dict[str, object]] = json.loads(got.stdout)
    return result


def sample_index(output: Path) -> Path:
    """The search index of the sample's papers as views, written as the site writes it."""
    papers = []
    for e in sample.entries():
        when = e.announced
        papers.append(Paper(
            arxiv_id=e.arxiv_id, version=e.version, title=e.title, title_html=Markup(""),
            abstract_text=e.abstract, authors=list(e.authors), categories=list(e.categories),
            primary=e.primary_category, comment=e.comment, journal_ref=e.journal_ref,
            doi=e.doi, published=when, updated=when, first_seen=when, version_seen_at=when,
            ai_related=True, ai_reason=(), topics=[],
            venue=venue(e.comment, e.journal_ref, e.doi)))
    latest = {p.arxiv_id: p for p in sorted(papers, key=lambda p: p.version)}
    index = _search.build_index(list(latest.values()), dt.datetime.now(dt.UTC))
    for name, text in index.files.items():
        path, data = _search.stored(name, text)
        (output / path).parent.mkdir(parents=True, exist_ok=True)
        (output / path).write_bytes(data)
    return output


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, help="a built demo site's output folder")
    ap.add_argument("--engine", type=Path,
                    default=Path(pipeline.__file__).resolve().parent.parent / "theme" / "static"
                    / "engine.js", help="engine.js (default: the imported pipeline's)")
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="three queries, no demo run")
    args = ap.parse_args()
    load = machine_load()
    grades = judged()
    if args.smoke:
        grades = dict(list(grades.items())[:3])
    with tempfile.TemporaryDirectory() as tmp:
        output = args.site or (sample_index(Path(tmp)) if args.smoke else demo.run(
            config_mod.load(demo.CONFIG), Path(tmp), lambda line: None).output_path)
        found = searched(output, args.engine, list(grades))
        size = sum(f.stat().st_size for f in (output / "search").rglob("*") if f.is_file())
    rows = []
    print(f"engine: {args.engine}\n{'query':34} {'nDCG@10':>8} {'P@10':>6}  suggests")
    for query, g in grades.items():
        ids, suggest = found[query]["ids"], found[query]["suggest"]
        assert isinstance(ids, list)
        if g:
            n, p = ndcg(ids, g), sum(1 for a in ids[:K] if a in g) / K
            rows.append((query, n, p))
            print(f"{query:34} {n:8.2f} {p:6.2f}  {suggest or ''}")
        else:
            print(f"{query:34} {'—':>8} {'—':>6}  none relevant; shows {len(ids)}")
    mean_n = sum(r[1] for r in rows) / len(rows)
    mean_p = sum(r[2] for r in rows) / len(rows)
    print(f"{'mean of ' + str(len(rows)) + ' queries':34} {mean_n:8.3f} {mean_p:6.3f}")
    worst = sorted(rows, key=lambda r: r[1])[:3]
    print("worst: " + ", ".join(f"{q} {n:.2f}" for q, n, _ in worst))
    print(f"search/ files: {size:,} bytes")
    if args.record and not args.smoke:
        figures = [("ndcg10.mean", mean_n, "score"), ("p10.mean", mean_p, "share"),
                   ("search_bytes", size, "B"),
                   *((f"ndcg10.{re.sub(r'[^a-z0-9]+', '-', q.lower()).strip('-')}", n, "score")
                     for q, n, _ in rows)]
        engine = args.engine.resolve()
        said = (f"{engine.relative_to(REPO)} of this commit" if engine.is_relative_to(REPO)
                else str(engine))
        print(results_record("search_quality", len({e.arxiv_id for e in sample.entries()}),
                             figures, load, note=said))


if __name__ == "__main__":
    main()
