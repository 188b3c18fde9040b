"""The `papertrail` command. Exit codes: 0 ok (a failing *source* is still 0: the site must
build from what is stored), 1 an unusable store or our own bug, 2 a bad config or usage."""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import json
import logging
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, cast
from zoneinfo import ZoneInfo

import click
import pandas as pd
import pyarrow as pa

from pipeline import config as config_mod
from pipeline import ingest as ingest_mod
from pipeline import runs as run_ledger
from pipeline.config import Config, ConfigError
from pipeline.databranch import DataBranchError
from pipeline.derive import stats
from pipeline.sources import SOURCES
from pipeline.store import Store, StoreError


class _Context:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._config: Config | None = None

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = config_mod.load(self.path)
            for warning in config_mod.lint(self._config):
                click.echo(f"papertrail: config warning: {warning}", err=True)
        return self._config

    @property
    def store(self) -> Store:
        return Store(self.config.store_path)


class _Ordered(click.Group):
    """Lists its commands in the order this file declares them (pipeline order), not A-Z."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


class _Group(_Ordered):
    """Turns our known errors into one clear line and the documented exit code."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            click.echo(f"papertrail: config error: {exc}", err=True)
            sys.exit(2)
        except StoreError as exc:
            click.echo(f"papertrail: store error: {exc}", err=True)
            sys.exit(1)
        except DataBranchError as exc:
            click.echo(f"papertrail: data branch: {exc}", err=True)
            sys.exit(1)
        except OSError as exc:  # the store's or the site's disk: full, read-only, not ours
            click.echo(f"papertrail: {_os_error(exc, ctx.obj)}", err=True)
            sys.exit(1)


_ACCESS = "give this user read and write access to it{}, then run again"
_OS_ADVICE = {
    errno.ENOSPC: "free space there (or set [store] path / [site] output to a disk with "
                  "room), then run again",
    errno.EDQUOT: "free space within your quota there, then run again",
    errno.EROFS: "mount it read-write (or set [store] path / [site] output to a writable "
                 "folder), then run again",
    errno.EACCES: _ACCESS.format(" (or run as its owner)"),
    errno.EPERM: _ACCESS.format(" (an immutable file: chattr -i)"),
}


def _os_error(exc: OSError, obj: _Context | None) -> str:
    """One line: what failed, where, what to do."""
    where = exc.filename
    if where is None:  # pyarrow's writers do not say which file: name the folders we write
        cfg = obj._config if obj else None
        where = (f"under {cfg.store_path} or {cfg.output_path}" if cfg
                 else "(no path given)")
    advice = _OS_ADVICE.get(exc.errno or 0, "check that path and its disk, then run again")
    return f"{exc.strerror or exc}: {where}: {advice}"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              default=config_mod.DEFAULT_PATH, envvar="PAPERTRAIL_CONFIG", show_default=True,
              help="The config file to use (also $PAPERTRAIL_CONFIG).")
@click.option("-v", "--verbose", is_flag=True, help="Log every request and retry.")
@click.pass_context
def cli(ctx: click.Context, config_path: Path, verbose: bool) -> None:
    """PaperTrail (研踪): track every version of every arXiv CS paper."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    ctx.obj = _Context(config_path)


# -- the pipeline in order: ingest → enrich → similar → notes → digest → build; run for all -----


def _parse_since(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2026-06-22 or "
                                 "2026-06-22T18:00") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


class _Progress:
    """A bar over a catch-up's time window on a terminal; a line per 1,000 entries elsewhere.
    Shown for a source that reports its progress (arXiv does)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tty = sys.stdout.isatty()
        self.bar: Any = None  # click's ProgressBar (its class is not public)
        self.done = 0
        self.told = 0  # thousands of entries already told
        self.since: dt.datetime | None = None

    def begin(self, since: dt.datetime, until: dt.datetime) -> None:
        self.since = since
        if self.tty:
            span = max(1, int((until - since).total_seconds()))
            self.bar = click.progressbar(length=span, label=self.source,
                                         show_eta=False).__enter__()

    def advance(self, entries: int, reached: dt.datetime) -> None:
        if self.bar is not None and self.since:
            position = int((reached - self.since).total_seconds())
            self.bar.update(max(0, position - self.done))
            self.done = max(self.done, position)
        elif not self.tty and entries // 1000 > self.told:
            self.told = entries // 1000
            click.echo(f"{self.source}: {entries} entries, read up to about "
                       f"{reached:%Y-%m-%d %H:%M} UTC")

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


@cli.command()
@click.option("--source", type=click.Choice([*SOURCES, "all"]), default="all",
              show_default=True, help=f"Which source to ingest (all: {', then '.join(SOURCES)}).")
@click.option("--since", help="Re-read from this date (UTC unless it has an offset) instead of "
              "the stored watermark.")
@click.option("--max-pages", type=click.IntRange(min=1), help="arXiv: stop after N pages (the "
              "run is then partial; the watermark moves only past date ranges read whole).")
@click.pass_obj
def ingest(obj: _Context, source: str, since: str | None, max_pages: int | None) -> None:
    """Fetch what is new from the sources into data/ (snapshots, papers, versions, runs)."""
    cfg, store = obj.config, obj.store
    since_dt = _parse_since(since)
    now = run_ledger.utcnow()
    for name in SOURCES if source == "all" else [source]:
        with _Progress(name) as progress:
            report = ingest_mod.ingest(cfg, store, name, since=since_dt, max_pages=max_pages,
                                       now=now, progress=progress)
        click.echo(report.line())


@cli.command()
@click.pass_obj
def enrich(obj: _Context) -> None:
    """Recompute the AI flag and topics of every paper from papertrail.toml (after editing
    [classify] or [[topics]]); touches only those derived columns."""
    from pipeline.derive import enrich as enrich_mod

    result = enrich_mod.enrich(obj.config, obj.store)
    total = result["papers"] or 1
    click.echo(f"enriched {result['papers']} papers: {result['ai_related']} AI-related "
               f"({100 * result['ai_related'] / total:.1f}%)"
               + ("" if result["written"] else " · nothing changed"))
    for slug, count in result["topics"].items():
        click.echo(f"  {slug}: {count}")


@cli.command()
@click.option("--full", is_flag=True, help="Make every list anew, without reading the stored "
              "ones (to fold in the library's newest word weights, or to repair the table).")
@click.pass_obj
def similar(obj: _Context, full: bool) -> None:
    """Find each paper's most similar papers in the library ([similar]); looks again only
    at papers whose title or abstract changed, and at the lists that named them."""
    from pipeline.derive import similar as similar_mod

    click.echo(similar_mod.similar(obj.config, obj.store, full=full).line())


@cli.command()
@click.pass_obj
def notes(obj: _Context) -> None:
    """Write change notes (修订说明) for new revisions with the digests' model (skipped when
    no API key is set: the site's notes are then made by rule)."""
    from pipeline.digest import run_notes

    click.echo(run_notes(obj.config, obj.store).line())


@cli.command()
@click.pass_obj
def digest(obj: _Context) -> None:
    """Write AI reading digests for new paper versions (skipped when no API key is set)."""
    from pipeline.digest import run_digest

    click.echo(run_digest(obj.config, obj.store).line())


@cli.command()
@click.option("--publish", is_flag=True, help="Absolute URLs from base_url (required then: "
              "[site] base_url or PAPERTRAIL_SITE_BASE_URL).")
@click.pass_obj
def build(obj: _Context, publish: bool) -> None:
    """Build the static site from the store into [site] output (Pelican + our generator)."""
    from pipeline import build as build_mod

    click.echo(build_mod.build(obj.config, publish=publish).line())


@cli.command("run")
@click.option("--publish", is_flag=True, help="Build with absolute URLs from base_url (required "
              "then: [site] base_url or PAPERTRAIL_SITE_BASE_URL).")
@click.pass_obj
def run_all(obj: _Context, publish: bool) -> None:
    """Ingest every source, enrich, find similar papers, write change notes and digests,
    build the site: the one command the scheduled workflow calls. A failing source is
    recorded and the site still builds."""
    from pipeline import run as run_mod

    run_mod.run(obj.config, click.echo, publish=publish)


@cli.command()
@click.pass_obj
def notify(obj: _Context) -> None:
    """Send what is new for [[follows]] to each [[notify]] channel (e-mail, Telegram,
    Feishu, Slack, Discord, a webhook), each item once; the update workflow runs it after
    the build. A failing channel is recorded, retried next run, and the run goes on."""
    from pipeline.notify import notify as notify_run

    click.echo(notify_run(obj.config, obj.store).line())


# -- the store: what the runs did, and rebuilding it from its snapshots ----------------------------


def _fmt(ts: dt.datetime | None, tz: ZoneInfo) -> str:
    if ts is None or pd.isna(ts):
        return "—"
    return pd.Timestamp(ts).tz_convert(tz).strftime("%Y-%m-%d %H:%M")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.pass_obj
def status(obj: _Context, as_json: bool) -> None:
    """Per source: last attempt, last success, status, counts, watermark, last error."""
    cfg, store = obj.config, obj.store
    tz = ZoneInfo(cfg.site.timezone)
    with store.snapshot():
        _status(cfg, store, tz, as_json)


def _status(cfg: Config, store: Store, tz: ZoneInfo, as_json: bool) -> None:
    runs = store.runs()
    rows = []
    for source in stats.ledger_order():
        mine = runs[runs["source"] == source]
        if mine.empty:
            continue
        last = mine.iloc[-1]
        ok = mine[mine["status"] == "ok"]
        failed = mine[mine["error"].notna()]
        rows.append({
            "source": source, "last attempt": _fmt(last["started"], tz),
            "last success": _fmt(ok.iloc[-1]["finished"], tz) if not ok.empty else "—",
            "status": last["status"],
            **{k: int(last[k]) if pd.notna(last[k]) else 0
               for k in ("fetched", "new", "revised", "unchanged")},
            "watermark": _fmt(store.watermark(source), tz),
            # The cost ledger: model tokens spent over all runs (digest runs only spend any).
            "tokens in/out": (f"{int(mine['tokens_in'].fillna(0).sum()):,}/"
                              f"{int(mine['tokens_out'].fillna(0).sum()):,}"
                              if mine["tokens_in"].notna().any() else "—"),
            "last error": failed.iloc[-1]["error"] if not failed.empty else "—",
        })
    ledger = stats.completeness(store.read("announcements").to_pandas())
    if as_json:
        for row in rows:
            if row["source"] == "announce":  # the completeness ledger's newest day
                row["completeness"] = [{**dataclasses.asdict(c), "day": c.day.isoformat(),
                                        "announced": c.announced} for c in ledger]
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo(f"no runs yet in {store.root} — run `papertrail ingest`")
        return
    click.echo(f"times in {cfg.site.timezone}; store {store.root}")
    headers = list(rows[0])
    widths = {h: max(len(h), *(len(str(r[h])) for r in rows)) for h in headers[:-1]}
    click.echo("  ".join(h.ljust(widths.get(h, 0)) for h in headers))
    for r in rows:
        click.echo("  ".join(str(r[h]).ljust(widths.get(h, 0)) for h in headers))
    if ledger:
        click.echo(f"completeness: {stats.completeness_line(ledger)}")
    if cfg.digest.enabled:
        click.echo(_selection_line(cfg, store))


_LEFT_OUT = {"ai": "not AI-related by [classify] ai_categories and ai_phrases",
             "topics": "in no [[topics]]"}


def _selection_line(cfg: Config, store: Store) -> str:
    """What `[digest] selection` picks of the papers in scope, and what it leaves out."""
    from pipeline.digest.plan import scoped, selected

    papers = scoped(cfg, store)
    chosen = len(selected(papers, cfg.digest_selection))
    auto = " (auto)" if cfg.digest.selection == "auto" else ""
    line = (f"digests: selection \"{cfg.digest_selection}\"{auto} picks {chosen:,} of "
            f"{papers.num_rows:,} papers in scope")
    if left := papers.num_rows - chosen:
        line += (f"; leaves out {left:,} ({_LEFT_OUT[cfg.digest_selection]}): "
                 "[digest] selection = \"all\" digests them too")
    return line


@cli.command()
@click.option("--force", is_flag=True, help="Rebuild even when the snapshots do not cover the "
              "run ledger (their papers are then lost), or the ledger is unreadable (a new, "
              "empty one is started).")
@click.pass_obj
def rebuild(obj: _Context, force: bool) -> None:
    """Reconstruct papers and versions from the snapshots alone."""
    result = ingest_mod.rebuild(obj.config, obj.store, force=force)
    click.echo(f"rebuilt from {result['snapshots']} snapshots: {result['papers']} papers, "
               f"{result['versions']} versions")


# -- tuning the [[topics]] of papertrail.toml ------------------------------------------------------


@cli.group(cls=_Ordered)
def topics() -> None:
    """Check and tune the [[topics]] of papertrail.toml."""


_store_option = click.option(
    "--store", "store_dir", type=click.Path(file_okay=False, path_type=Path),
    help="Read this store instead of [store] path: .try/data after `papertrail try`.")


def _topics_store(obj: _Context, store_dir: Path | None) -> pa.Table:
    """The library topics are tried on; an empty one says where a filled one comes from."""
    papers = (Store(store_dir) if store_dir else obj.store).library()
    if not papers.num_rows:
        click.echo(f"note  the store {store_dir or obj.config.store_path} holds no papers: "
                   "run `papertrail try` and add `--store .try/data`, or fill it with "
                   "`papertrail data restore` (FORKING.md)")
    return papers


@topics.command("check")
@_store_option
@click.pass_obj
def topics_check(obj: _Context, store_dir: Path | None) -> None:
    """Validate every topic (errors name the topic and key; exit 2) and count its matches in
    the store; a topic or keyword (of a topic or follow) that matches nothing is flagged, so
    is a keyword written as a regular expression, and what a follow asks that the fork
    cannot fetch."""
    from pipeline.derive import scope
    from pipeline.derive import topics as topics_mod

    cfg = obj.config
    papers = _topics_store(obj, store_dir)
    for problem in scope.unserved(cfg, set(cast(list[str], papers["arxiv_id"].to_pylist()))):
        click.echo(f"warn  {problem}")
    for i, follow in enumerate(cfg.follows):
        whose = f" (follow {follow.name!r})" if follow.name else ""
        for line in _keyword_lines(cfg, f"follows[{i}]", whose, follow.keywords, papers):
            click.echo(line)
    if not cfg.topics:
        click.echo(f"{cfg.path}: no [[topics]] configured")
        return
    counts = topics_mod.counts(topics_mod.match(papers, cfg.topics))
    for i, topic in enumerate(cfg.topics):
        for line in _keyword_lines(cfg, f"topics[{i}]", f" (topic {topic.slug!r})",
                                   topic.keywords, papers):
            click.echo(line)
        count = counts.get(topic.slug, 0)
        parts = [f"{len(topic.keywords)} keywords" if topic.keywords else "",
                 f"{len(topic.all)} all-groups" if topic.all else "",
                 f"{len(topic.exclude)} excludes" if topic.exclude else "",
                 f"categories {', '.join(topic.categories)}" if topic.categories else "",
                 f"{len(topic.authors)} authors" if topic.authors else "",
                 f"≥ {topic.min_upvotes} upvotes" if topic.min_upvotes else ""]
        note = "" if count else "  ← matches nothing in the store"
        click.echo(f"ok  {topic.slug} ({topic.name.en} / {topic.name.zh}): "
                   f"{' · '.join(p for p in parts if p)} · {count} of {papers.num_rows} "
                   f"papers{note}")
    click.echo(f"{len(cfg.topics)} topics valid")


def _keyword_lines(cfg: Config, key: str, whose: str, keywords: tuple[str, ...],
                   papers: pa.Table) -> Iterator[str]:
    """Per keyword of a topic or follow (`key`): one written as a pattern (with what its
    plain forms would match), one matching nothing, one whose `+` is matched as written."""
    from pipeline.derive import topics as topics_mod
    from pipeline.text import patterns

    silent = set(topics_mod.unmatched(papers, keywords))
    total = papers.num_rows
    for j, keyword in enumerate(keywords):
        where = f"{cfg.path}: {key}.keywords[{j}] {keyword!r}{whose}"
        nothing = " matches nothing:" if keyword in silent else ""
        if patterns.looks_like_pattern(keyword):
            forms = patterns.plain_forms(keyword)
            meant = ", ".join(f"{f!r} would match {int(topics_mod.phrase_hits(papers, f).sum())}"
                              f" of {total}" for f in forms) or "no plain form is left"
            yield (f"warn  {where}{nothing} it looks like a regular expression, but keywords "
                   f"are plain phrases matched as written; {meant}")
        elif keyword in silent:
            yield f"warn  {where} matches nothing in the store ({total} papers)"
        elif "+" in keyword:  # a quantifier in a pattern, a word's end in C++: said
            yield (f"note  {where}: '+' matched as written, not as a pattern (keywords are "
                   "plain phrases): "
                   f"{int(topics_mod.phrase_hits(papers, keyword).sum())} of {total} papers")


class _Hit(Protocol):
    """A row of topics-preview's frame as itertuples gives it."""

    arxiv_id: str
    updated: pd.Timestamp
    title: str
    why: str


@topics.command("preview")
@click.argument("slug")
@click.option("--days", type=click.IntRange(min=1), help="Only papers updated in the N days "
              "up to the newest paper in the store.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True,
              help="Print at most this many papers.")
@_store_option
@click.pass_obj
def topics_preview(obj: _Context, slug: str, days: int | None, limit: int,
                   store_dir: Path | None) -> None:
    """Print the stored papers that match topic SLUG as configured now, newest first, with
    why — tune a topic before committing it (no need to run enrich first)."""
    from pipeline.derive import topics as topics_mod

    cfg = obj.config
    topic = next((t for t in cfg.topics if t.slug == slug), None)
    if topic is None:
        known = ", ".join(t.slug for t in cfg.topics) or "none configured"
        raise click.BadParameter(f"no topic {slug!r} (known: {known})", param_hint="SLUG")
    papers = _topics_store(obj, store_dir)
    why = topics_mod.match(papers, (topic,)).reasons.to_pylist()
    df = papers.select(["arxiv_id", "updated", "title"]).to_pandas()
    df["why"] = [r[0] if r else None for r in why]
    if days and not df.empty:
        df = df[df["updated"] >= df["updated"].max() - pd.Timedelta(days=days)]
    hits = df[df["why"].notna()].sort_values(["updated", "arxiv_id"], ascending=False)
    window = f" in the last {days} days" if days else ""
    click.echo(f"{topic.slug}: {len(hits)} of {len(df)} papers{window}")
    for row in cast("Iterator[_Hit]", hits.head(limit).itertuples()):
        title = " ".join(row.title.split())
        title = title if len(title) <= 90 else title[:89] + "…"
        click.echo(f"{row.updated:%Y-%m-%d}  {row.arxiv_id}  {title}\n            why: {row.why}")
    if len(hits) > limit:
        click.echo(f"… and {len(hits) - limit} more (--limit)")


# -- the data branch: what the update workflow runs around `papertrail run` ------------------------


@cli.group(cls=_Ordered)
def data() -> None:
    """Keep the store on a git branch: restore, save, compact, summary."""


_remote = click.option("--remote", default="origin", show_default=True,
                       help="Git remote name or URL (e.g. upstream's https URL).")
_branch = click.option("--branch", default="data", show_default=True, help="The data branch.")


def _https_url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A seed is another site's public repository, named by the workflow's input: an https
    URL, never a path, an ssh remote or text git would read as one of its options."""
    if not value:
        return None
    url = urllib.parse.urlsplit(value)
    if url.scheme != "https" or not url.hostname or any(c.isspace() or not c.isprintable()
                                                          for c in value):
        raise click.BadParameter(f"{value!r} is not allowed: give an https URL of a repository "
                                 "with a data branch (e.g. https://github.com/OWNER/REPO.git), "
                                 "or nothing to start empty")
    return value


@data.command("restore")
@_remote
@_branch
@click.option("--force", is_flag=True, help="Replace a store that is not empty.")
@click.option("--seed-from", "seed", metavar="URL", callback=_https_url,
              help="When --remote has no data branch yet, start from this https repository's "
              "(e.g. upstream's). Empty: start empty.")
@click.pass_obj
def data_restore(obj: _Context, remote: str, branch: str, force: bool, seed: str | None) -> None:
    """Replace the store with the data branch's data/ (no branch yet: start empty)."""
    from pipeline import databranch

    result = databranch.restore(obj.config.root, obj.config.store_path, remote=remote,
                                branch=branch, force=force, seed=seed,
                                scope_of=obj.config)
    click.echo(result.line(branch))


@data.command("save")
@_remote
@_branch
@click.option("--message", "-m", default="data: update", show_default=True)
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="Retries after a concurrent push (each folds the other data in).")
@click.option("--squash-after", type=click.IntRange(min=1), default=24, show_default=True,
              help="Squash the branch to one commit once it has this many commits.")
@click.option("--force", is_flag=True, help="Save even a store that fails its check or holds "
              "fewer papers than the branch.")
@click.pass_obj
def data_save(obj: _Context, remote: str, branch: str, message: str, retries: int,
              squash_after: int, force: bool) -> None:
    """Commit the store to the data branch when it changed, and push (retrying on conflict)."""
    from pipeline import databranch

    result = databranch.save(obj.config, obj.config.root, remote=remote, branch=branch,
                             message=message, retries=retries, squash_after=squash_after,
                             force=force)
    click.echo(result.line(branch))


@data.command("compact")
@click.pass_obj
def data_compact(obj: _Context) -> None:
    """Merge snapshots of past months into one file per source per month (rebuild stays exact)."""
    from pipeline.compact import compact

    click.echo(compact(obj.store, run_ledger.utcnow().date()).line())


@data.command("summary")
@click.pass_obj
def data_summary(obj: _Context) -> None:
    """Print the latest runs as Markdown (the workflow appends it to $GITHUB_STEP_SUMMARY)."""
    from pipeline import summary

    store = obj.store
    with store.snapshot():
        click.echo(summary.markdown(store, obj.config), nl=False)


# -- offline: local replays of the services, and the demo over them --------------------------------


@cli.command()
@click.option("--port", default=8001, show_default=True, help="Port on 127.0.0.1.")
@click.option("--as-of", help="Serve what arXiv showed at this time (default: everything).")
def replay(port: int, as_of: str | None) -> None:
    """Serve the bundled sample as a local arXiv export API (for offline runs)."""
    from pipeline.replay import sample
    from pipeline.replay.arxiv import ArxivReplay

    server = ArxivReplay(sample.entries(), as_of=_parse_since(as_of), port=port)
    click.echo(f"arXiv replay at {server.url} ({len(sample.entries())} entries); Ctrl-C stops")
    server.run_until_interrupted()


@cli.command("replay-hf")
@click.option("--port", default=8003, show_default=True, help="Port on 127.0.0.1.")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False,
                                                   path_type=Path))
def replay_hf(port: int, files: tuple[Path, ...]) -> None:
    """Serve the bundled sample's HF daily lists (or FILES, dated by their names) as a local
    /api/daily_papers, for offline runs: set [sources.hf] endpoint to the printed URL."""
    from pipeline.replay.hf import HFReplay, file_days

    try:
        days = file_days(list(files)) if files else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="FILES") from None
    server = HFReplay(days, port=port)
    click.echo(f"HF replay at {server.endpoint} ({len(server.days)} days: "
               f"{', '.join(sorted(server.days))}); Ctrl-C stops")
    server.run_until_interrupted()


@cli.command("replay-openai")
@click.option("--port", default=8002, show_default=True, help="Port on 127.0.0.1.")
@click.option("--latency", default=0.0, show_default=True, help="Seconds per response.")
def replay_openai(port: int, latency: float) -> None:
    """Serve a local OpenAI-compatible chat API answering with the bundled real digests."""
    from pipeline.replay.openai import OpenAIReplay

    server = OpenAIReplay(latency=latency, port=port)
    click.echo(f"OpenAI-compatible replay at {server.url} ({len(server.digests)} digests); "
               "Ctrl-C stops")
    server.run_until_interrupted()


@cli.command()
@click.option("--dir", "demo_dir", type=click.Path(path_type=Path), default=Path(".demo"),
              show_default=True, help="Where the demo's store and site go (store emptied first).")
@click.option("--serve/--no-serve", default=True, show_default=True,
              help="Serve the built site on 127.0.0.1 afterwards.")
@click.option("--port", default=8000, show_default=True, help="Port for --serve.")
@click.pass_obj
def demo(obj: _Context, demo_dir: Path, serve: bool, port: int) -> None:
    """Offline demo: the real pipeline over local replays of the bundled sample, day by day,
    then the site, served at http://127.0.0.1:8000. It uses its own config
    (pipeline/replay/demo.toml) unless --config or $PAPERTRAIL_CONFIG names one."""
    from pipeline import demo as demo_mod

    source = click.get_current_context().find_root().get_parameter_source("config_path")
    given = source in (click.core.ParameterSource.COMMANDLINE,
                       click.core.ParameterSource.ENVIRONMENT)
    base = obj.config if given else config_mod.load(demo_mod.CONFIG)
    cfg = demo_mod.run(base, demo_dir, click.echo, port)
    obj._config = cfg
    click.get_current_context().invoke(status)
    if serve:
        demo_mod.serve(cfg.output_path, port, click.echo)


@cli.command("try")
@click.option("--dir", "try_dir", type=click.Path(path_type=Path), default=Path(".try"),
              show_default=True, help="Where the store, the site and the channels' messages "
              "go (store and messages emptied first).")
@click.option("--serve/--no-serve", default=True, show_default=True,
              help="Serve the built site on 127.0.0.1 afterwards.")
@click.option("--port", default=8000, show_default=True, help="Port for --serve.")
@click.option("--replay-models", is_flag=True, help="Digests from the local replay model "
              "server even when [digest] api_key_env is not set (else skipped, as in Actions).")
@click.pass_obj
def try_config(obj: _Context, try_dir: Path, serve: bool, port: int, replay_models: bool) -> None:
    """Your own papertrail.toml over the bundled replays, nothing edited: its categories,
    topics, follows and digests, each [[notify]] channel aimed at a local recorder (its
    messages in DIR/notify/); then the site, served at http://127.0.0.1:8000. Writes
    under DIR only."""
    from pipeline import demo as demo_mod
    from pipeline import trial

    cfg = trial.run(obj.config, try_dir, click.echo, port=port, replay_models=replay_models)
    obj._config = cfg
    click.get_current_context().invoke(status)
    config = f"--config {obj.path} " if obj.path != config_mod.DEFAULT_PATH else ""
    slug = cfg.topics[0].slug if cfg.topics else "SLUG"
    click.echo(f"tune a topic on this store: papertrail {config}topics preview {slug} "
               f"--store {cfg.store_path}")
    if serve:
        demo_mod.serve(cfg.output_path, port, click.echo)


def main() -> None:
    cli(prog_name="papertrail")
