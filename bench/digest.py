"""Bench: 500 digests against the local OpenAI replay at 200 ms a response, concurrency 8.

Ideal: 500 / 8 × 0.2 s = 12.5 s; the target is within 1.3× of that. The timed span is
the whole step (reading the store, planning, the requests, checkpoints, the final
writes and the run record), not the requests alone. `--smoke`: 12 digests at 10 ms, in
seconds, checking only that every digest was made.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

from pipeline import config as config_mod
from pipeline.digest import run_digest
from pipeline.ingest import ingest_arxiv
from pipeline.replay import sample
from pipeline.replay.arxiv import ArxivReplay
from pipeline.replay.openai import OpenAIReplay
from pipeline.store import Store

N, LATENCY, CONCURRENCY = 500, 0.2, 8


def main() -> int:
    parser = argparse.ArgumentParser(description="Time a digest step against the replay.")
    parser.add_argument("--smoke", action="store_true", help="12 digests at 10 ms a response")
    smoke = parser.parse_args().smoke
    n, latency = (12, 0.01) if smoke else (N, LATENCY)
    root = Path(tempfile.mkdtemp(prefix="papertrail-bench-"))
    (root / "papertrail.toml").write_text('[store]\npath = "data"\n', encoding="utf-8")
    cfg = config_mod.load(root / "papertrail.toml")
    store = Store(cfg.store_path)
    with ArxivReplay(sample.entries()) as api:
        api.as_of = sample.run_at(sample.days()[-1])
        arxiv = dataclasses.replace(cfg.sources.arxiv, api_url=api.url, delay_seconds=0.0)
        ingest_arxiv(dataclasses.replace(cfg, sources=dataclasses.replace(cfg.sources,
                                                                          arxiv=arxiv)),
                     store, now=api.as_of, since=dt.datetime(2026, 6, 1, tzinfo=dt.UTC))
    os.environ["PAPERTRAIL_BENCH_KEY"] = "bench"
    with OpenAIReplay(latency=latency) as llm:
        digest = dataclasses.replace(
            cfg.digest, base_url=llm.url, model="replay", api_key_env="PAPERTRAIL_BENCH_KEY",
            selection="all", concurrency=CONCURRENCY, max_per_run=n,
            token_budget_per_run=10**9, timeout_seconds=10.0)
        clock = time.monotonic()
        report = run_digest(dataclasses.replace(cfg, digest=digest), store)
        seconds = time.monotonic() - clock
    ideal = n / CONCURRENCY * latency
    print(report.line())
    print(f"digest bench: {report.counts['made']} digests in {seconds:.2f} s at concurrency "
          f"{CONCURRENCY}, {latency * 1000:.0f} ms a response (ideal {ideal:.2f} s): "
          f"{seconds / ideal:.2f}× ideal; server saw at most {llm.max_in_flight} at once")
    return 0 if report.counts["made"] == n and (smoke or seconds <= 1.3 * ideal) else 1


if __name__ == "__main__":
    sys.exit(main())
