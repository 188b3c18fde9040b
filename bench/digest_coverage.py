"""Bench: where the digests go. Every sample day is one `papertrail run` (sources, enrich,
similar, notes, digests) against the replays (arXiv, Hugging Face, the model server
answering with the sample's real digests) with the demo config's budget (the shipped
config's: pipeline/replay/demo.toml keeps its `[digest]` defaults)
(`[digest] max_per_run`, `token_budget_per_run`, `notes_share`). After each day's run it
prints, for that day's last announcement: how many of 今日精选's head have a digest
(target: all), how many of its AI-related papers have one, the digests the run made, and
the tokens a digest took (in and out, as the replay counts them). `--smoke`: two days.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

import pyarrow.compute as pc

from pipeline import config as config_mod
from pipeline import demo
from pipeline.derive import rank
from pipeline.digest import plan
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.hf import HFReplay
from pipeline.replay.openai import OpenAIReplay
from pipeline.run import update
from pipeline.store import Store

KEY_ENV = "PAPERTRAIL_BENCH_KEY"


def main() -> int:
    parser = argparse.ArgumentParser(description="Digest coverage of the ranked view.")
    parser.add_argument("--smoke", action="store_true", help="the first two sample days")
    smoke = parser.parse_args().smoke
    days = sample.days()[:2] if smoke else sample.days()
    root = Path(tempfile.mkdtemp(prefix="papertrail-coverage-"))
    shipped = config_mod.load(demo.CONFIG)
    os.environ[KEY_ENV] = "bench"
    heads, tokens = [], [0, 0, 0]
    with ArxivReplay(sample.entries()) as arxiv_api, HFReplay() as hf_api, \
            OpenAIReplay() as llm:
        sources = dataclasses.replace(
            shipped.sources,
            arxiv=dataclasses.replace(shipped.sources.arxiv, api_url=arxiv_api.url,
                                      oai_url=f"{arxiv_api.base}/oai",
                                      feed_url=f"{arxiv_api.base}/rss/", delay_seconds=0.0),
            hf=dataclasses.replace(shipped.sources.hf, endpoint=hf_api.endpoint,
                                   delay_seconds=0.0, backfill_days=1))
        cfg = dataclasses.replace(
            shipped, path=root / "papertrail.toml", sources=sources,
            store=dataclasses.replace(shipped.store, path=root / "data"),
            digest=dataclasses.replace(shipped.digest, base_url=llm.url, model="replay",
                                       api_key_env=KEY_ENV))
        store = Store(cfg.store_path)
        d = cfg.digest
        print(f"budget: max_per_run {d.max_per_run}, token_budget_per_run "
              f"{d.token_budget_per_run:,}, notes_share {d.notes_share}, selection "
              f"{d.selection}; [rank] top {cfg.rank.top}")
        for day in days:
            now = sample.run_at(day)
            arxiv_api.as_of = now
            update(cfg, store, lambda _: None, now=now)
            library, versions = store.library(), store.read("versions")
            digests = store.read("digests")
            ok = digests.filter(pc.equal(digests["status"], "ok"))
            has = set(ok["arxiv_id"].to_pylist())
            head = plan.head(cfg, library, versions)
            times = [(i, t.timestamp()) for i, t in zip(
                library["arxiv_id"].to_pylist(), library["version_seen_at"].to_pylist(),
                strict=True)]
            last = set(rank.last_announcement(times, cfg.rank))
            ai = {i for i, flag in zip(library["arxiv_id"].to_pylist(),
                                       library["ai_related"].to_pylist(), strict=True)
                  if flag and i in last}
            runs = store.read("runs").to_pylist()
            run = max((r for r in runs if r["source"] == "digest"), key=lambda r: r["started"])
            made = run["new"] or 0
            tokens = [tokens[0] + made, tokens[1] + (run["tokens_in"] or 0),
                      tokens[2] + (run["tokens_out"] or 0)]
            picked = set(plan.selected(library, d.selection))
            covered = sum(r.arxiv_id in has for r in head)
            eligible = sum(r.arxiv_id in picked for r in head)
            heads.append((covered, eligible))
            print(f"{day}: 今日精选 head {covered}/{len(head)} with a digest ({eligible} of "
                  f"them in [digest] selection {d.selection!r}) · AI-related of "
                  f"the announcement {len(ai & has)}/{len(ai)} · {len(last)} papers in it · "
                  f"{made} digests this run")
    if tokens[0]:
        print(f"tokens a digest: {tokens[1] / tokens[0]:,.0f} in, {tokens[2] / tokens[0]:,.0f}"
              f" out (mean of {tokens[0]} digests)")
    covered, total = sum(c for c, _ in heads), sum(t for _, t in heads)
    print(f"head coverage after each day's first run: {covered}/{total} of the selected")
    return 0 if covered == total else 1


if __name__ == "__main__":
    sys.exit(main())
