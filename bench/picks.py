"""Bench: 今日精选's calibration on the bundled sample (pipeline/replay/sample/), before and
after a change of `[rank]` weights.

Each sample day's announcement (its new papers and simulated revisions) is ranked as the
site ranks it (pipeline/derive/rank.py, the demo config's topics, every cs.* category), once
with the weights as they were (one flat venue weight, project pages as code, no category
cap) and once with the shipped defaults. For each it prints, over the days:

- the venue tiers among each day's top 50 and the share of its largest primary category;
- how well the order made WITHOUT upvotes (`hf_upvotes = 0`) foretells the Hugging Face
  upvotes the papers went on to get (the sample's hf-*.json.gz, 2026-06-22..26): AUC of
  the score for "has upvotes" against "has none" over every paper, Spearman's rho of score
  and upvotes, and nDCG@50 of each day's view with gain log2(1 + upvotes);
- whether the most upvoted paper a day shows outranks every paper with none but a venue.

`--smoke`: the first two days. A full run appends its figures to bench/results/picks.csv.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import pyarrow as pa
from _results import machine_load, record

from pipeline import config as config_mod
from pipeline import demo
from pipeline.config import RankConfig
from pipeline.derive import rank
from pipeline.derive import topics as topic_match
from pipeline.replay import sample
from pipeline.sources import signal
from pipeline.text.taxonomy import CS_CATEGORIES
from pipeline.text.venue import Tier, tier, venue

# The weights before tiers: one venue weight for all, a project page as code, no cap.
BEFORE = RankConfig(hf_upvotes=1.0, venue_main=3.0, venue_findings=3.0, venue_workshop=3.0,
                    venue_journal=3.0, venue_other=3.0, project_page=1.5,
                    topic=2.0, max_category_share=1.0)
AFTER = RankConfig()


def _upvotes() -> dict[str, tuple[int, str | None, str | None]]:
    """arXiv id → (most upvotes seen, its repo, its project page) over the sample's boards."""
    seen: dict[str, tuple[int, str | None, str | None]] = {}
    for day in sample.days():
        raw = sample.hf_daily(day)
        for item in json.loads(raw) if raw else ():
            p = item["paper"]
            votes = max(int(p.get("upvotes") or 0), seen.get(p["id"], (0, None, None))[0])
            seen[p["id"]] = (votes, p.get("githubRepo"), p.get("projectPage"))
    return seen


def _signals(days: Sequence[str]) -> dict[str, list[rank.Signals]]:
    """Each day's announcement as rank.Signals, upvotes as the boards had them."""
    cfg = config_mod.load(demo.CONFIG)
    hf = _upvotes()
    entries = [e for e in sample.entries() if e.announced.date().isoformat() in days]
    first = {e.arxiv_id: e for e in sample.entries() if e.version == 1}
    table = pa.table({
        "arxiv_id": [e.arxiv_id for e in entries], "title": [e.title for e in entries],
        "abstract": [e.abstract for e in entries],
        "authors": pa.array([list(e.authors) for e in entries], pa.list_(pa.string())),
        "categories": pa.array([list(e.categories) for e in entries], pa.list_(pa.string())),
        "primary_category": [e.categories[0] for e in entries]})
    tagged = topic_match.match(table, cfg.topics).topics.to_pylist()
    out: dict[str, list[rank.Signals]] = defaultdict(list)
    for e, slugs in zip(entries, tagged, strict=True):
        took = venue(e.comment, e.journal_ref, e.doi)
        votes, repo, page = hf.get(e.arxiv_id, (0, None, None))
        before = first.get(e.arxiv_id)
        changed = (rank.changed_words(f"{before.title} {before.abstract}",
                                      f"{e.title} {e.abstract}")
                   if e.version > 1 and before else 0)
        out[e.announced.date().isoformat()].append(rank.Signals(
            e.arxiv_id, counts=((signal("upvotes"), votes),) if votes else (),
            venue=took.short if took else None,
            tier=tier(took, CS_CATEGORIES) if took else Tier.MAIN,
            code=rank.code_host(e.comment, e.abstract, repo, page),
            page=rank.page_host(e.comment, e.abstract, project=page),
            category=e.categories[0], changed_words=changed, topics=tuple(slugs or ())))
    return out


def _votes(s: rank.Signals) -> int:
    """The paper's upvotes (its only signal here)."""
    return sum(n for _, n in s.counts)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    rx, ry = _ranks(x), _ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (sx * sy) if sx and sy else 0.0


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """The chance a paper with upvotes scores above one without (ties count half)."""
    r = _ranks(scores)
    pos = sum(positive)
    neg = len(positive) - pos
    if not pos or not neg:
        return 0.5
    return (sum(ri for ri, p in zip(r, positive, strict=True) if p) - pos * (pos + 1) / 2) / (
        pos * neg)


def ndcg(view: Sequence[str], gain: dict[str, float], k: int) -> float:
    dcg = sum(gain.get(i, 0.0) / math.log2(n + 2) for n, i in enumerate(view[:k]))
    ideal = sorted(gain.values(), reverse=True)[:k]
    best = sum(g / math.log2(n + 2) for n, g in enumerate(ideal))
    return dcg / best if best else 0.0


def measure(name: str, w: RankConfig, days: dict[str, list[rank.Signals]]) -> dict[str, float]:
    blind = dataclasses.replace(w, hf_upvotes=0.0)
    tiers: Counter[str] = Counter()
    shares, gains, wins = [], [], []
    scores, votes = [], []
    for signals in days.values():
        view = rank.ranked(signals, w)
        by_id = {s.arxiv_id: s for s in signals}
        for r in view:
            if by_id[r.arxiv_id].venue:
                tiers[str(by_id[r.arxiv_id].tier)] += 1
        top = Counter(by_id[r.arxiv_id].category for r in view).most_common(1)
        shares.append(top[0][1] / len(view) if view else 0.0)
        gain = {s.arxiv_id: math.log2(1 + (_votes(s))) for s in signals if _votes(s)}
        gains.append(ndcg([r.arxiv_id for r in rank.ranked(signals, blind)], gain, w.top))
        place = {r.arxiv_id: n for n, r in enumerate(view)}
        if (best := max((s for s in signals if _votes(s)), key=lambda s: _votes(s),
                        default=None)) is not None:
            bare = [place[s.arxiv_id] for s in signals
                    if s.venue and not _votes(s) and s.arxiv_id in place]
            wins.append(all(place.get(best.arxiv_id, w.top) < p for p in bare))
        for s in signals:
            scores.append(rank.score(s, blind).score)
            votes.append(float(_votes(s)))
    figures = {
        "auc_upvoted": auc(scores, [v > 0 for v in votes]),
        "spearman_upvotes": spearman(scores, votes),
        "ndcg50_upvotes": sum(gains) / len(gains),
        "top_category_share_max": max(shares),
        "top_category_share_mean": sum(shares) / len(shares),
        "most_upvoted_above_bare_venues": sum(wins) / len(wins) if wins else 0.0,
    }
    figures |= {f"tier_{t}": tiers[t] / len(days) for t in Tier}
    print(f"{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    return figures


def _unit(metric: str) -> str:
    """A figure's unit, as bench/results/ keeps one for each."""
    if metric.startswith("tier_"):
        return "papers"  # per day's picks, mean over the days
    shares = ("top_category_share_mean", "top_category_share_max",
              "most_upvoted_above_bare_venues")
    return "share" if metric in shares else "score"


def main() -> int:
    parser = argparse.ArgumentParser(description="今日精选's calibration on the sample.")
    parser.add_argument("--smoke", action="store_true", help="the first two sample days")
    smoke = parser.parse_args().smoke
    days = _signals(sample.days()[:2] if smoke else sample.days())
    print(f"{len(days)} days, {sum(map(len, days.values()))} papers, "
          f"{sum(bool(s.counts) for d in days.values() for s in d)} with upvotes")
    load = machine_load()
    papers = sum(map(len, days.values()))
    for name, w in (("before", BEFORE), ("after", AFTER)):
        figures = [(metric, value, _unit(metric))
                   for metric, value in measure(name, w, days).items()]
        if not smoke:
            record("picks", papers, figures, load, f"{name}: {_weights(w)}")
    return 0


def _weights(w: RankConfig) -> str:
    return " ".join(f"{f.name}={getattr(w, f.name)}" for f in dataclasses.fields(w)
                    if f.name not in ("top", "window_hours", "min_changed_words"))


if __name__ == "__main__":
    raise SystemExit(main())
