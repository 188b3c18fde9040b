"""The change-note step (修订说明): for each revision of a selected paper whose title,
abstract, comment or journal-ref changed, a short note from the model of what changed
and why it matters, kept in the notes table.

A note is keyed by (paper, from-version, version, language, model, prompt hash), so each
is asked for once; it runs on the digests' server and model, within its share of their
limits (`[digest] notes_share`; the digests of the same run get what it left), newest
revision first, failures retried with backoff as digests are. Without a model the site
makes notes by rule (site/model/note.py), so the step only adds to what every fork has.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from collections.abc import Iterator
from typing import Any, Protocol, cast

import pandas as pd
import pyarrow as pa

from pipeline.config import Config
from pipeline.derive.readings import around, readings
from pipeline.digest.generate import Asking, Budget, Dispatch, Outcome, generate
from pipeline.digest.notes_prompt import MAX_OUTPUT_TOKENS, Change, messages, prompt_hash, validate
from pipeline.digest.plan import due, scoped, selected
from pipeline.digest.run import CHECKPOINT_EVERY, DigestReport, attempted, recorded_as, summed
from pipeline.runs import Run, recorded
from pipeline.store import Store
from pipeline.tables import NOTES, to_table

Key = tuple[str, int, int, str, str, str]  # id, from_version, version, language, model, hash


def key_of(row: dict[str, Any]) -> Key:
    return (row["arxiv_id"], int(row["from_version"]), int(row["version"]), row["language"],
            row["model"], row["prompt_hash"])


class _Revision(Protocol):
    """A row of revisions()' frame as itertuples gives it."""

    arxiv_id: str
    version: int
    from_version: float  # shifted in: a float column
    updated: pd.Timestamp
    title: str | None
    title_before: str | None
    abstract: str | None
    abstract_before: str | None


def revisions(cfg: Config, store: Store, selection: str) -> list[Change]:
    """Each revision of a selected paper with something to note, the newest first: every
    stored version after a paper's first, against the version stored before it."""
    ids = selected(scoped(cfg, store), selection)
    table = store.read("versions", ["arxiv_id", "version", "updated", "title", "abstract"])
    df = table.to_pandas()
    df = df[df["arxiv_id"].isin(ids)].sort_values(["arxiv_id", "version"])
    before = df.groupby("arxiv_id", sort=False)[["version", "title", "abstract"]].shift()
    df = df.assign(from_version=before["version"], title_before=before["title"],
                   abstract_before=before["abstract"]).dropna(subset=["from_version"])
    told = readings(store, df["arxiv_id"].unique())
    out: list[tuple[pd.Timestamp, Change]] = []
    for r in cast("Iterator[_Revision]", df.itertuples(index=False)):
        said, says = around(told.get(r.arxiv_id, []), int(r.version))
        meta = {k: (getattr(said, k), getattr(says, k)) for k in ("comment", "journal_ref")
                } if said and says else {}
        change = Change(r.arxiv_id, int(r.from_version), int(r.version), r.title_before or "",
                        r.title or "", r.abstract_before or "", r.abstract or "", **meta)
        if change.changed():
            out.append((r.updated, change))
    out.sort(key=lambda t: (t[0], t[1].arxiv_id, t[1].version), reverse=True)
    return [c for _, c in out]


def run_notes(cfg: Config, store: Store, *, now: dt.datetime | None = None) -> DigestReport:
    """One change-note run; never raises for the model server's failures."""
    dcfg = cfg.digest
    with recorded(store, "notes", now) as run:
        api_key = os.environ.get(dcfg.api_key_env, "").strip()
        why = ("disabled in config" if not (dcfg.enabled and dcfg.notes) else None if api_key
               else f"{dcfg.no_key}; the site's notes are by rule")
        if why:
            run.skip(why, tokens_in=0, tokens_out=0)
            return DigestReport("notes", "skipped", error=why)
        return _notes(cfg, store, run, api_key)


def _notes(cfg: Config, store: Store, run: Run, api_key: str) -> DigestReport:
    dcfg, started = cfg.digest, run.started
    language, phash = cfg.digest_language, prompt_hash(dcfg.prompt_version)
    rows: dict[Key, dict[str, Any]] = {key_of(r): r for r in store.read("notes").to_pylist()}

    def key(change: Change) -> Key:
        return (change.arxiv_id, change.from_version, change.version, language, dcfg.model,
                phash)

    todo: list[Change] = []
    states = {"cached": 0, "exhausted": 0, "backoff": 0, "ask": 0}
    candidates = revisions(cfg, store, cfg.digest_selection)
    for change in candidates:
        state = due(rows.get(key(change)), dcfg.max_attempts, started)
        states[state] += 1
        if state == "ask":
            todo.append(change)
    outcomes: list[Outcome[Change]] = []
    changed = False

    def table() -> pa.Table:
        return to_table(pa.Table.from_pylist([rows[k] for k in sorted(rows)], schema=NOTES),
                        NOTES)

    def on_outcome(out: Outcome[Change]) -> None:
        nonlocal changed
        outcomes.append(out)
        if out.status != "budget":
            k = key(out.item)
            rows[k] = {"arxiv_id": k[0], "from_version": k[1], "version": k[2],
                       "language": language, "model": dcfg.model, "prompt_hash": phash,
                       "note": (out.fields or {}).get("note"),
                       **attempted(out, rows.get(k), started, dcfg.retry_backoff_hours,
                                   dcfg.max_attempts)}
            changed = True
        if len(outcomes) % CHECKPOINT_EVERY == 0:
            store.write("notes", table())
            store.commit()

    most, tokens = dcfg.notes_limits()
    budget, dispatch = Budget(tokens), Dispatch()
    if todo:
        asking = Asking(todo, lambda c: messages(c, language), validate, most, budget,
                        min(MAX_OUTPUT_TOKENS, dcfg.max_output_tokens))
        dispatch = asyncio.run(generate(asking, dcfg, api_key, on_outcome))
    if changed:
        store.write("notes", table())
    report = summed("notes", outcomes, dispatch, budget, len(candidates), states["cached"],
                    states["backoff"] + states["exhausted"])
    return recorded_as(run, report, {
        "backoff": states["backoff"], "exhausted": states["exhausted"],
        "left_outage": dispatch.left_outage, "budget_used": budget.used,
        "model": dcfg.model, "language": language, "prompt_version": dcfg.prompt_version,
        "prompt_hash": phash})
