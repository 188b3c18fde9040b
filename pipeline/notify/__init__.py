"""`papertrail notify`: what is new for the fork's `[[follows]]` (and, when a channel asks,
the day's top papers) to each `[[notify]]` channel, each item once (docs/CONFIG.md).

The ledger (`notified`, one row per channel and item) says what each channel has had. A
run holds the store's lock, sends one channel at a time and commits that channel's rows
before the next: a crash re-sends at most what one channel sent since its commit (a
message cannot be taken back, so an item may come twice, never zero times). A channel
that fails (a missing secret, a refusal, a server down past its retries) has its items
recorded as failed and sent again on the next run; the other channels go on, and the
run's row (`papertrail status`, the job summary) names what failed.

A weekly channel sends on the first run of an ISO week on or after its weekday (in the
site's timezone), and its ledger rows commit with a `week/<year>-W<nn>` row: a rerun that
week, after a crash too, finds the week sent and sends nothing new.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping
from typing import Literal

import pandas as pd
import pyarrow as pa

from pipeline import runs
from pipeline.config import WEEKDAYS, Channel, Config
from pipeline.notify.channels import (
    CHANNELS,
    ChannelError,
    MessageRefused,
    Sender,
    messages,
    open_channel,
)
from pipeline.notify.items import Item, Selection, select
from pipeline.report import RunReport
from pipeline.site import i18n
from pipeline.site.model.views import load
from pipeline.store import Store

DONE = ("sent", "skipped")  # statuses that end an item's life on a channel


def notify(cfg: Config, store: Store, *, env: Mapping[str, str] | None = None,
           now: dt.datetime | None = None,
           kinds: Mapping[str, type[Sender]] = CHANNELS) -> RunReport:
    if not cfg.notify:
        return RunReport("notify", "skipped", error=f"no [[notify]] channels in {cfg.path}")
    env = os.environ if env is None else env
    with runs.recorded(store, "notify", now) as run:
        ledger = _ledger(store)
        failed = set(ledger.loc[ledger["status"] == "failed", "item"])
        lib = load(cfg, store)
        chosen = select(cfg, lib, max(c.top for c in cfg.notify), failed)
        today = run.started.astimezone(lib.tz)
        report = RunReport("notify", "ok", counts={"sent": 0, "failed": 0, "skipped": 0})
        details: dict[str, dict[str, object]] = {}
        for channel in cfg.notify:
            mine = ledger[ledger["channel"] == channel.label]
            week = _week_due(channel, today, set(mine["item"]))
            rows, error, sender = _send(cfg, channel, chosen, mine, env, run, kinds, week)
            if rows:
                store.append("notified", pa.Table.from_pylist(rows))
                store.commit()
            counts = {s: sum(r["status"] == s for r in rows) for s in report.counts}
            report.counts = {s: report.counts[s] + counts[s] for s in counts}
            details[channel.label] = {**counts, "error": error}
            if sender is not None:
                report.requests += sender.requests
                report.retries += sender.retries
        errors = [f"{name}: {d['error']}" for name, d in details.items() if d["error"]]
        if errors:
            report.error = "; ".join(errors)
            report.then = "the failed items are recorded as failed and sent again next run"
            report.status = "failed" if len(errors) == len(details) else "partial"
        run.record(status=report.status, new=report.counts["sent"], error=report.error,
                   requests=report.requests, retries=report.retries,
                   details=json.dumps(details, ensure_ascii=False, sort_keys=True))
    return report


def _ledger(store: Store) -> pd.DataFrame:
    return store.read("notified", ["channel", "item", "status", "attempts",
                                   "first_tried"]).to_pandas()


def _week_due(channel: Channel, today: dt.datetime, had: set[str]) -> str | None:
    """A weekly channel's ledger key of this ISO week, when its digest is due now (its
    weekday reached, the week not sent); None for a weekly channel not due; "" for the
    other formats, always due."""
    if channel.format != "weekly":
        return ""
    year, number, day = today.isocalendar()
    key = f"week/{year}-W{number:02d}"
    due = day - 1 >= WEEKDAYS.index(channel.weekday) and key not in had
    return key if due else None


def _pending(channel: Channel, chosen: Selection, mine: pd.DataFrame, weekly: bool
             ) -> list[Item]:
    """The channel's items not sent yet: the new ones, then those an earlier run failed."""
    done = set(mine.loc[mine["status"].isin(DONE), "item"])
    pending = [i for i in chosen.new(channel.top, weekly) if i.key not in done]
    return pending + [chosen.retry[k] for k in sorted(set(mine["item"]) - done)
                      if k in chosen.retry and k not in {i.key for i in pending}]


def _week_row(channel: Channel, week: str, run: runs.Run) -> list[dict[str, object]]:
    """The week's row, committed with its items', so the week is sent once ('' : none)."""
    return [{"channel": channel.label, "item": week, "arxiv_id": None, "status": "sent",
             "error": None, "attempts": 1, "first_tried": run.started,
             "sent": run.started}] if week else []


def _send(cfg: Config, channel: Channel, chosen: Selection, mine: pd.DataFrame,
          env: Mapping[str, str], run: runs.Run, kinds: Mapping[str, type[Sender]],
          week: str | None) -> tuple[list[dict[str, object]], str | None, Sender | None]:
    """Send the channel's pending items: (ledger rows, its error or None, the sender).
    `week`: _week_due's answer; a weekly digest sent whole adds the week's row."""
    # Opened first, so a missing secret shows even on a run with nothing to send.
    try:
        opened: Sender | None = open_channel(channel, cfg.site.language, env, kinds)
        problem = ""
    except ChannelError as exc:
        opened, problem = None, str(exc)
    if week is None:
        return [], problem or None, opened
    tried = {r["item"]: r for r in mine.to_dict("records")}
    pending = _pending(channel, chosen, mine, bool(week))
    marker = _week_row(channel, week, run)
    if not pending:
        return ([] if problem else marker), problem or None, opened
    # max_items counts papers: a paper's items (a watched one's news) go together
    papers = list(dict.fromkeys(i.arxiv_id for i in pending))
    kept = set(papers[:channel.max_items])
    batch, over = [i for i in pending if i.arxiv_id in kept], \
        [i for i in pending if i.arxiv_id not in kept]
    s = i18n.strings(cfg.site.language)

    def row(item: Item, status: Literal["sent", "failed", "skipped"], error: str | None = None
            ) -> dict[str, object]:
        before = tried.get(item.key)
        attempts = 0 if before is None or pd.isna(before["attempts"]) else before["attempts"]
        first = run.started if before is None or pd.isna(before["first_tried"]) \
            else before["first_tried"].to_pydatetime()
        return {"channel": channel.label, "item": item.key, "arxiv_id": item.arxiv_id,
                "status": status, "error": error,
                "attempts": int(attempts) + (status != "skipped"), "first_tried": first,
                "sent": run.started if status == "sent" else None}

    rows = [row(i, "skipped") for i in over]
    if opened is None:
        return rows + [row(i, "failed", problem) for i in batch], problem, None
    base = cfg.site.base_url.rstrip("/")
    title = s["notify_week" if week else "notify_title"]
    heading = title.format(site=cfg.site.title, n=len(papers))
    more = s["notify_more"].format(n=len(papers) - len(kept)) if over else ""
    unsent, refused = list(batch), []
    for message in messages(opened, heading, batch, more, f"{base}/me/" if base else ""):
        try:
            opened.send(message)
        except MessageRefused as exc:  # this message's items fail, the others still go
            rows += [row(i, "failed", str(exc)) for i in message.items]
            refused.append(str(exc))
        except ChannelError as exc:  # the channel is failing: what is left waits a run
            return rows + [row(i, "failed", str(exc)) for i in unsent], str(exc), opened
        else:
            rows += [row(i, "sent") for i in message.items]
        went = {i.key for i in message.items}  # a message holds its papers in its order
        unsent = [i for i in unsent if i.key not in went]
    return rows + ([] if refused else marker), "; ".join(refused) or None, opened
