"""`papertrail build`: run Pelican over the store, with settings made from the Config."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pelican import Pelican, signals

import pipeline.site.settings as site_settings
from pipeline.config import SITE_LANGUAGES, Config, ConfigError, SiteLanguage
from pipeline.site.budget import RECORD as BUDGET
from pipeline.site.i18n import Alternates, prefix
from pipeline.site.writer import (
    JOURNAL,
    MANIFEST,
    PelicanWriter,
    manifest_bytes,
    read_record,
    relative,
)
from pipeline.store.durable import replace_atomically

# GitHub Pages: "Published GitHub Pages sites may be no larger than 1 GB."
PAGES_LIMIT = 1_000_000_000
LOCK = ".papertrail/build.lock"  # in the output folder: held while a build writes it

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildReport:
    output: Path
    seconds: float
    written: int
    unchanged: int
    files: int
    size_bytes: int
    removed: int
    base_url: str  # [site] base_url the feeds, OPML and sitemap were made with
    light: int = 0  # light paper pages, to stay within [site] max_site_mb
    left_out: int = 0  # paper pages left out, when even light ones do not all fit
    max_site_mb: float = 0
    # (language, files, bytes) of each language's build, the default's first, when the
    # site has more than one ([site] languages)
    languages: tuple[tuple[str, int, int], ...] = ()

    def line(self) -> str:
        line = (f"site: {self.files} files, {self.size_bytes / 1e6:.1f} MB in {self.output} · "
                f"{self.written} written, {self.unchanged} unchanged, {self.removed} stale "
                f"removed · {self.seconds:.1f} s")
        if self.languages:
            line += "\nlanguages: " + ", ".join(
                f"{lang} {'at the root' if i == 0 else 'in ' + prefix(lang)} ({files} files, "
                f"{size / 1e6:.1f} MB)" for i, (lang, files, size) in enumerate(self.languages))
        if self.light:
            line += (f"\n{self.light} paper pages light, the oldest, to stay within "
                     f"[site] max_site_mb = {self.max_site_mb:g}: their article loads with "
                     "JavaScript")
        if self.left_out:
            line += (f"\n{self.left_out} paper pages left out, the oldest, as even light ones "
                     f"do not all fit in {self.max_site_mb:g} MB: their papers link to arXiv")
        if self.size_bytes > PAGES_LIMIT:
            line += ("\nwarning: the site is larger than GitHub Pages' 1 GB limit; lower "
                     "[site] max_site_mb to 950 so the oldest paper pages turn light")
        if not self.base_url:
            line += ("\nnote: no [site] base_url: pages link relatively, but feeds, feeds.opml "
                     "and sitemap.xml need absolute URLs (feed readers cannot resolve the "
                     "relative ones); set it, or PAPERTRAIL_SITE_BASE_URL, to the site's "
                     "public URL")
        return line


def check_publish(cfg: Config) -> None:
    """A published site needs its public URL: every feed, the OPML and the sitemap carry
    it. The update workflow passes the Pages URL; a local `--publish` must say it."""
    if not cfg.site.base_url:
        raise ConfigError(
            f"{cfg.path}: site.base_url = '': --publish needs the site's public URL for the "
            "feeds, OPML and sitemap; allowed: an http(s) URL such as "
            "https://you.github.io/repo/, in [site] base_url or the environment variable "
            "PAPERTRAIL_SITE_BASE_URL (the update workflow sets it from "
            "actions/configure-pages)")


def build(cfg: Config, *, publish: bool = False, now: dt.datetime | None = None) -> BuildReport:
    started = time.perf_counter()
    if publish:
        check_publish(cfg)
    _refuse_overlap(site_settings.THEME, cfg.output_path)
    with _writing(cfg.output_path):
        return _build(cfg, publish, now, started)


@contextlib.contextmanager
def _writing(out: Path) -> Iterator[None]:
    """One build writes an output folder at a time (flock: the kernel frees it when a build
    dies). A second one waits, saying so, then builds from the store as it is by then: the
    newest site, and no page one build wrote and the other removed."""
    path = out / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("%s: another papertrail build is writing this site; waiting for it "
                        "to finish", out)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _build(cfg: Config, publish: bool, now: dt.datetime | None, started: float
           ) -> BuildReport:
    """The default language at the output's root; before it, each other language under
    its prefix, as a site of its own (Pelican's way: a run per language, as its
    i18n_subsites plugin does), carrying the newest papers ([site] other_language_days)
    within its share of [site] max_site_mb. The default's pages then link the pages those
    made, and it fits in what they left."""
    languages = cfg.site_languages
    base = cfg.site.base_url.rstrip("/")
    made: dict[str, frozenset[str]] = {}
    reports = []
    for language in languages[1:]:
        other = _in_language(cfg, language, base, cfg.site.max_site_mb / len(languages))
        report, files = _build_one(other, publish, now, started, Alternates(
            language, languages, base), cfg.site.other_language_days)
        made[language] = files
        reports.append(report)
    spent = sum(r.size_bytes for r in reports)
    rest = dataclasses.replace(cfg.site, max_site_mb=cfg.site.max_site_mb - spent / 1e6)
    report, _ = _build_one(dataclasses.replace(cfg, site=rest), publish, now, started,
                           Alternates(languages[0], languages, base, made), 0)
    removed = sum(_forget(cfg.output_path / prefix(language))
                  for language in SITE_LANGUAGES if language not in languages[1:])
    if len(languages) == 1 and not removed:
        return report
    reports.insert(0, report)
    return dataclasses.replace(
        report, seconds=time.perf_counter() - started,
        **{k: sum(getattr(r, k) for r in reports)
           for k in ("written", "unchanged", "files", "size_bytes", "light", "left_out")},
        removed=sum(r.removed for r in reports) + removed, max_site_mb=cfg.site.max_site_mb,
        languages=tuple((lang, r.files, r.size_bytes)
                        for lang, r in zip(languages, reports, strict=True))
        if len(languages) > 1 else ())


def _in_language(cfg: Config, language: SiteLanguage, base: str, share: float) -> Config:
    """The config of a language other than the default: its pages under its prefix, its
    feeds' and sitemap's URLs too; the digests read in the language they are made in (a
    page says when that is not its own)."""
    site = dataclasses.replace(
        cfg.site, language=language, languages=(), output=cfg.site.output / prefix(language),
        base_url=f"{base}/{prefix(language)}" if base else "", max_site_mb=share)
    digest = dataclasses.replace(cfg.digest, language=cfg.digest.language or cfg.site.language)
    return dataclasses.replace(cfg, site=site, digest=digest)


def _forget(out: Path) -> int:
    """A language the site is no longer built in: the files its build made there."""
    return _remove_stale(out, set()) if (out / MANIFEST).exists() else 0


def _build_one(cfg: Config, publish: bool, now: dt.datetime | None, started: float,
               alternates: Alternates, days: int) -> tuple[BuildReport, frozenset[str]]:
    """One language's site: Pelican run over the store with our writer; the report and
    the files it made (under its output folder)."""
    logging.getLogger("pelican").setLevel(logging.WARNING)
    pelican = Pelican(site_settings.for_pelican(cfg, publish=publish, now=now,
                                                writer_plugin=False, alternates=alternates,
                                                days=days))
    made: list[PelicanWriter] = []

    class Recorded(PelicanWriter):  # remembered, to report what it wrote
        def __init__(self, output_path: str, settings: dict[str, Any] | None = None) -> None:
            super().__init__(output_path, settings)
            made.append(self)

    def writer_class(sender: Pelican) -> type:
        return Recorded

    signals.get_writer.connect(writer_class, sender=pelican)
    try:
        pelican.run()
    finally:
        signals.get_writer.disconnect(writer_class, sender=pelican)
        for writer in made:
            writer.ours.close()
    out, w = cfg.output_path, made[0].ours
    produced = {os.path.normpath(p): size for p, size in w.files().items()}
    removed = _remove_stale(out, set(produced))
    size = sum(produced.values())
    record = read_record(out / BUDGET)
    light, left_out = (record.get(k) for k in ("light", "left_out"))
    return BuildReport(out, time.perf_counter() - started, w.written, w.unchanged,
                       len(produced), size, removed, cfg.site.base_url,
                       light if isinstance(light, int) else 0,
                       left_out if isinstance(left_out, int) else 0, cfg.site.max_site_mb
                       ), frozenset(relative(p, out) for p in produced)


def _refuse_overlap(theme: Path, out: Path) -> None:
    """Templates are never read from where the build writes: a page made from data could
    otherwise replace one, and the next build would run it."""
    theme, out = theme.resolve(), out.resolve()
    if theme.is_relative_to(out) or out.is_relative_to(theme):
        raise ConfigError(f"[site] output {out} overlaps the theme {theme}: the build would "
                          "write where its templates are read; choose another output folder")


def _remove_stale(out: Path, produced: set[str]) -> int:
    """Delete the files an earlier build made that this one did not (e.g. pages of papers
    past paper_pages_days), so the site holds exactly what the store says. Only files a
    build recorded as its own are candidates: those the last finished build's manifest
    lists, and those a build killed since created (its journal). A file no build made is
    never touched, even if output/ is a folder with other things in it. Then this build's
    files become the manifest."""
    ours = {relative(p, out) for p in produced}
    manifest = manifest_bytes(out, produced)
    journal = out / JOURNAL
    known = set(read_record(out / MANIFEST).get("files", []))
    if journal.exists():
        known |= set(journal.read_text("utf-8", errors="replace").splitlines())
    removed = sum(_remove(out, rel) for rel in sorted(known - ours))
    if not (out / MANIFEST).exists() or (out / MANIFEST).read_bytes() != manifest:
        replace_atomically(out / MANIFEST, manifest)  # else its bytes and time stay
    journal.unlink(missing_ok=True)
    return removed


def _remove(out: Path, rel: str) -> bool:
    """Delete out/rel and the folders it leaves empty; nothing outside `out`."""
    path = out / rel
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts or \
            not path.resolve().is_relative_to(out.resolve()):
        return False  # not a path a build writes: the record was damaged
    try:
        path.unlink()
    except (FileNotFoundError, IsADirectoryError):
        return False
    folder = path.parent
    while folder != out:
        try:  # not a listing per file: removing 10,000 of 20,000 pages would be quadratic
            folder.rmdir()
        except OSError:  # not empty
            break
        folder = folder.parent
    return True
