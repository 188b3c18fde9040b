"""The digest step: plan → ask the model → the digests table → one run record.

Like ingest, a failing model server is data, not an exception: failures are stored
per digest (retried on later runs with backoff) and summed up in the run ledger. Only
an unusable store or our own bug raises.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pipeline.config import Config
from pipeline.derive import scope
from pipeline.digest.generate import Asking, Budget, Dispatch, Outcome, generate
from pipeline.digest.plan import Key, key_of, plan, queue, select
from pipeline.digest.prompt import PaperText, messages, prompt_hash, validate
from pipeline.report import RunReport, RunStatus
from pipeline.runs import Run, recorded
from pipeline.store import Store
from pipeline.tables import DIGESTS, to_table

CHECKPOINT_EVERY = 20  # outcomes between writes, so a killed run keeps what it paid for


@dataclass
class DigestReport(RunReport):
    tokens_in: int = 0
    tokens_out: int = 0
    spent: tuple[int, int] = (0, 0)  # of the run's limits: items sent, tokens charged

    def line(self) -> str:
        if self.status == "skipped":
            return f"{self.source}: skipped ({self.error})"
        parts = [f"{k} {v}" for k, v in self.counts.items()]
        parts.append(f"{self.requests} requests, {self.retries} corrective retries")
        parts.append(f"tokens {self.tokens_in:,} in / {self.tokens_out:,} out")
        text = f"{self.source}: {self.status} · " + " · ".join(parts)
        return text + (f" · ERROR {self.error}" if self.error else "")


class _Rows:
    """The digests table in memory, keyed, with the superseded flags kept consistent."""

    def __init__(self, rows: Iterable[dict[str, Any]]) -> None:
        self.rows: dict[Key, dict[str, Any]] = {key_of(r): r for r in rows}
        self.by_paper: dict[tuple[str, str], set[Key]] = defaultdict(set)  # (id, language)
        for key in self.rows:
            self.by_paper[key[0], key[2]].add(key)
        self.changed = False

    def table(self) -> pa.Table:
        # In key order: answers arrive in any order, the table should not depend on it.
        rows = [self.rows[key] for key in sorted(self.rows)]
        return to_table(pa.Table.from_pylist(rows, schema=DIGESTS), DIGESTS)

    def make_current(self, key: Key) -> None:
        """This digest is the one to show: every other row of the paper in its language is
        superseded (older versions, older prompts, other models; they stay stored)."""
        for other in self.by_paper[key[0], key[2]]:
            row, superseded = self.rows[other], other != key
            if row["superseded"] != superseded:
                row["superseded"] = superseded
                self.changed = True

    def record(self, key: Key, out: Outcome[Any], previous: dict[str, Any] | None, now: dt.datetime,
               backoff_hours: float, max_attempts: int) -> None:
        row = {"arxiv_id": key[0], "version": key[1], "language": key[2], "model": key[3],
               "prompt_hash": key[4], "superseded": False, **(out.fields or {}),
               **attempted(out, previous, now, backoff_hours, max_attempts)}
        self.rows[key] = row
        self.by_paper[key[0], key[2]].add(key)
        self.changed = True
        if out.status == "ok":
            self.make_current(key)


def attempted(out: Outcome[Any], previous: dict[str, Any] | None, now: dt.datetime,
              backoff_hours: float, max_attempts: int) -> dict[str, object]:
    """The columns an attempt sets: its status and error, the attempts and everything they
    cost so far, and when a failed one may be tried again (backoff doubling each time)."""
    before = previous or {}
    attempts = (before.get("attempts") or 0) + 1
    wait = None
    if out.status == "failed" and attempts < max_attempts:
        wait = now + dt.timedelta(hours=backoff_hours * 2 ** (attempts - 1))
    return {"status": out.status, "error": out.error, "attempts": attempts,
            "tokens_in": (before.get("tokens_in") or 0) + out.tokens_in,
            "tokens_out": (before.get("tokens_out") or 0) + out.tokens_out,
            "created": now, "next_attempt_after": wait}


def run_digest(cfg: Config, store: Store, *, now: dt.datetime | None = None,
               spent: tuple[int, int] = (0, 0)) -> DigestReport:
    """One digest run over the stored papers; never raises for the model server's failures.
    `spent`: what this run's change notes took of max_per_run and token_budget_per_run."""
    dcfg = cfg.digest
    with recorded(store, "digest", now) as run:
        api_key = os.environ.get(dcfg.api_key_env, "").strip()
        why = ("disabled in config" if not dcfg.enabled else None if api_key else
               f"{dcfg.no_key}; the site shows no new digests")
        if why:
            run.skip(why, tokens_in=0, tokens_out=0)
            return DigestReport("digest", "skipped", error=why)
        return _digest(cfg, store, run, api_key, spent)


def _digest(cfg: Config, store: Store, run: Run, api_key: str,
            spent: tuple[int, int]) -> DigestReport:
    dcfg, started = cfg.digest, run.started
    language, phash = cfg.digest_language, prompt_hash(dcfg.prompt_version)
    versions = store.read("versions")
    library = scope.within(cfg, store.library())
    places = queue(cfg, library, versions)
    candidates = select(library, versions, cfg.digest_selection)
    rows = _Rows(store.read("digests").to_pylist())
    todo = plan(candidates, rows.rows, language, dcfg.model, phash, dcfg.max_attempts, started,
                places)
    for key in todo.cached:
        rows.make_current(key)
    previous = {p.arxiv_id: row for p, row in todo.todo}
    outcomes: list[Outcome[PaperText]] = []

    def on_outcome(out: Outcome[PaperText]) -> None:
        outcomes.append(out)
        if out.status != "budget":
            key = (out.item.arxiv_id, out.item.version, language, dcfg.model, phash)
            rows.record(key, out, previous[out.item.arxiv_id], started,
                        dcfg.retry_backoff_hours, dcfg.max_attempts)
        if len(outcomes) % CHECKPOINT_EVERY == 0:
            store.write("digests", rows.table())
            store.commit()

    most = max(0, dcfg.max_per_run - spent[0])
    budget = Budget(max(0, dcfg.token_budget_per_run - spent[1]), dcfg.token_budget_per_run)
    dispatch = Dispatch()
    if todo.todo:
        asking = Asking([p for p, _ in todo.todo], lambda p: messages(p, language), validate,
                        most, budget, dcfg.max_output_tokens)
        dispatch = asyncio.run(generate(asking, dcfg, api_key, on_outcome))
    if rows.changed:
        store.write("digests", rows.table())
    report = summed("digest", outcomes, dispatch, budget, todo.selected, len(todo.cached),
                    todo.backoff + todo.exhausted)
    return recorded_as(run, report, {
        "backoff": todo.backoff, "exhausted": todo.exhausted,
        "left_outage": dispatch.left_outage, "budget_used": budget.used,
        "model": dcfg.model, "base_url": dcfg.base_url, "language": language,
        "prompt_version": dcfg.prompt_version, "prompt_hash": phash})


def recorded_as(run: Run, report: DigestReport, details: dict[str, object]) -> DigestReport:
    """The step's row in the run ledger, from its report and what else it tells."""
    run.record(
        status=report.status, fetched=report.counts["selected"], new=report.counts["made"],
        unchanged=report.counts["cached"], requests=report.requests, retries=report.retries,
        error=report.error, tokens_in=report.tokens_in, tokens_out=report.tokens_out,
        details=json.dumps({**report.counts, **details}, ensure_ascii=False))
    return report


def summed(name: str, outcomes: list[Outcome[Any]], dispatch: Dispatch, budget: Budget,
           selected: int, cached: int, waiting: int) -> DigestReport:
    """The step's report from its outcomes; the items are papers' versions (or revisions)."""
    failed = [o for o in outcomes if o.status == "failed"]
    made = sum(o.status == "ok" for o in outcomes)
    over = dispatch.skipped_budget + sum(o.status == "budget" for o in outcomes)
    counts = {"selected": selected, "made": made, "cached": cached, "failed": len(failed),
              "skipped by budget": over, "waiting": waiting}
    errors = []
    if failed:
        first = failed[0]
        errors.append(f"{len(failed)} failed, e.g. {first.item.arxiv_id}v{first.item.version}"
                      f": {first.error}")
    if dispatch.left_outage:
        errors.append(f"the server failed several requests in a row; {dispatch.left_outage} "
                      "left for the next run")
    status: RunStatus = "ok"
    if failed or dispatch.left_outage:
        status = "partial" if made or cached else "failed"
    return DigestReport(name, status, counts, sum(o.requests for o in outcomes),
                        sum(o.corrective for o in outcomes), "; ".join(errors) or None,
                        tokens_in=sum(o.tokens_in for o in outcomes),
                        tokens_out=sum(o.tokens_out for o in outcomes),
                        spent=(sum(o.requests > 0 for o in outcomes), budget.used))
