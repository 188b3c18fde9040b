"""The build's writer: a file whose bytes would not change is not touched.

So rebuilding unchanged data changes no file (deploys and caches stay small), and
one day of new data rewrites only the pages it touches plus the lists and feeds.
Writing one path twice in a build is refused (as Pelican's Writer does), and no path
outside the output folder is ever written, whatever the data a path was made from.

Two classes: `SkipUnchangedWriter` writes every file and records what the build
produced; it is ours and knows nothing of Pelican. `PelicanWriter` is what Pelican
gets through its public get_writer signal and hands to every generator: Pelican's
Writer with its public `write_file` (the only way Pelican's own pages, the prose in
content/, reach a file) overridden to write through ours. Pelican's Writer has no
public hook between rendering a page and opening its file, so the override renders
as Pelican's `write_file` does and touches none of the Writer's private state.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import deflate
from jinja2 import Template
from pelican import signals
from pelican.utils import get_relative_path, path_to_url
from pelican.writers import FileOverwriteFailedError, Writer

from pipeline.store.durable import replace_atomically

# The build's records put a line between values, as indent=0 would, with the C encoder:
# indent takes json's Python one, 1.2 s for the 200,000 paper pages' keys.
LINES = (",\n", ": ")
JOURNAL = ".papertrail/files.new"  # files created since the last finished build, a line each
MANIFEST = ".papertrail/files.json"  # every file the last finished build produced


class UnsafePathError(ValueError):
    """A path to write that resolves outside the output folder."""


def stamp(path: Path) -> list[int] | None:
    """(size, mtime in ns) of a file, None if there is none: what a cache records of a file
    it wrote, and trusts the file by only while the file still shows the same, so a file a
    killed build (or anyone) rewrote since is made again."""
    try:
        return _stamp_of(path.stat())
    except FileNotFoundError:
        return None


def _stamp_of(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns]


def gzipped(data: bytes) -> bytes:
    """`data` as a gzip file (what the site serves as stored: light pages' shards, the
    search index), the same bytes for the same data: no time in the header. libdeflate at
    its level 6: on the shards of 200,000 papers 43 µs a paper where its level 8 took 71
    and zlib's 9 ~140, for 1.5% more bytes than either; the search index's 1.2% more. At
    200,000 papers ~7 s of CPU for ~3.5 MB: 1,000 more pages light (docs/SCALE.md)."""
    return bytes(deflate.gzip_compress(data, 6))


def relative(path: str, out: Path | str) -> str:
    """A file's path under the output folder `out`, relative to it: the prefix cut off when
    it has it, as `out / name` makes it (os.path.relpath costs 5 µs a file, a second for
    the 220,000 files of a build at 200,000 papers, and a build asks a few times)."""
    prefix = _prefix(out)
    return path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, out)


@functools.cache
def _prefix(out: Path | str) -> str:
    return os.path.join(str(Path(out)), "")  # "out/" and "./out" as out.root has them


def manifest_bytes(out: Path, produced: set[str]) -> bytes:
    """MANIFEST's bytes for the files a build produced (paths under `out`): a line each."""
    return json.dumps({"files": sorted(relative(p, out) for p in produced)},
                      separators=LINES).encode()


def read_record(path: Path) -> dict[str, Any]:
    """One of the build's own records (.papertrail/*.json), or {} when it is missing or
    unreadable: then nothing in it is trusted, and what it would have saved is made again."""
    try:
        record = json.loads(path.read_bytes())
    except (FileNotFoundError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


class SkipUnchangedWriter:
    """Every file of a build, Pelican's pages and ours, is written through one of these
    (and a forked worker's copy: see _workers)."""

    def __init__(self, output_path: str) -> None:
        self.output_path = output_path
        # Every file this build produced, written or not, with its bytes: the budget and the
        # build's report add them up (a stat a file was 1.2 s a time at 200,000 papers).
        self.produced: dict[str, int] = {}
        self.written = 0
        self.unchanged = 0
        self._root = os.path.realpath(output_path)
        self._safe_dirs: set[str] = set()
        self._made_dirs: set[Path] = set()  # folders this writer made or found
        self._journal_fd: int | None = None
        self._journal_pid = 0

    def render(self, name: str, template: Template, context: dict[str, Any],
               override: bool = False) -> str:
        """Write `name` (under the output folder) from a template; returns its path."""
        path = os.path.abspath(os.path.join(self.output_path, name))
        self._once(path, override)
        self.put(Path(path), template.render(context).encode("utf-8"))
        return path

    def write_text(self, name: str, text: str) -> None:
        """A non-template file (JSON, XML, text) under the output folder."""
        path = os.path.join(self.output_path, name)
        self._once(path)
        self.put(Path(path), text.encode("utf-8"))

    def _once(self, path: str, override: bool = False) -> None:
        if path in self.produced and not override:
            raise FileOverwriteFailedError(f'"{path}" was already written in this build')

    def check(self, path: Path) -> None:
        """Refuse a path outside the output folder (`..` in it, or a folder on the way that
        links elsewhere). Folders are resolved once each: a build has a few hundred."""
        folder = os.path.dirname(os.path.abspath(path))  # abspath folds any `..`
        if folder not in self._safe_dirs:
            if os.path.commonpath([os.path.realpath(folder), self._root]) != self._root:
                raise UnsafePathError(f"refusing to write {path}: outside {self._root}")
            self._safe_dirs.add(folder)

    def put(self, path: Path, data: bytes, *, atomic: bool = False) -> list[int]:
        """Write `data` at `path` unless the file already holds exactly these bytes;
        `atomic` for the build's own records (see replace_atomically). Returns the file's
        stamp, as stamp() would read it after."""
        self.check(path)
        name = str(path)
        self.produced[name] = len(data)
        try:
            st = os.stat(name)
            if st.st_size == len(data) and path.read_bytes() == data:
                self.unchanged += 1
                return _stamp_of(st)
        except FileNotFoundError:
            if path.parent not in self._made_dirs:  # paper/ holds 200,000 files: one mkdir
                path.parent.mkdir(parents=True, exist_ok=True)
                self._made_dirs.add(path.parent)
            self._journal(path)
        if atomic:
            replace_atomically(path, data)
            self.written += 1
            return stamp(path) or []
        # A plain write: the output is derived, and a page cut short by a crash differs from
        # what the next build renders, so that build rewrites it. Through the descriptor
        # alone: open() adds an fstat and an ioctl, and a stat after, for 220,000 files.
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            st = os.fstat(fd)
        finally:
            os.close(fd)
        self.written += 1
        return _stamp_of(st)

    def _journal(self, path: Path) -> None:
        """Note a file before creating it, so a build killed before it records its manifest
        leaves its files known as its own, and the next build may remove them. One append
        (a single write, whole even from several processes) per new file, to a descriptor
        opened once per process (an open per file was a tenth of a paper page's cost)."""
        line = relative(str(path), self.output_path) + "\n"  # under it: check()
        if self._journal_fd is None or self._journal_pid != os.getpid():
            journal = os.path.join(self.output_path, JOURNAL)
            os.makedirs(os.path.dirname(journal), exist_ok=True)
            self._journal_fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._journal_pid = os.getpid()
        os.write(self._journal_fd, line.encode("utf-8", "surrogateescape"))

    def close(self) -> None:
        """Close the journal's descriptor (a worker's closes when the worker ends)."""
        if self._journal_fd is not None and self._journal_pid == os.getpid():
            os.close(self._journal_fd)
        self._journal_fd = None

    def keep(self, path: Path, size: int | None = None) -> None:
        """Count a file this build produces without rendering it again (its inputs are
        unchanged), so it is not removed as stale; `size`: its bytes, when known."""
        self.produced[str(path)] = path.stat().st_size if size is None else size
        self.unchanged += 1

    def restart(self, kept: dict[str, int]) -> None:
        """Forget what this build produced since `kept` (what it had produced before), for a
        second pass over the same output (see site.budget): files stay on disk, and those the
        pass does not produce again are removed as stale when the build ends."""
        self.produced = dict(kept)
        self.unchanged = 0

    def files(self) -> dict[str, int]:
        """Every file this build produced, written or left unchanged, with its bytes."""
        return dict(self.produced)


class PelicanWriter(Writer):  # type: ignore[misc]  # pelican ships no type information
    """Pelican's Writer for Pelican's own pages, writing through `ours` (which the
    generators write through too: see PaperTrailGenerator.generate_output)."""

    def __init__(self, output_path: str, settings: dict[str, Any] | None = None) -> None:
        super().__init__(output_path, settings=settings)
        self.ours = SkipUnchangedWriter(output_path)

    def write_file(self, name: str, template: Template, context: dict[str, Any],
                   relative_urls: bool = False, paginated: dict[str, Any] | None = None,
                   template_name: str | None = None, override_output: bool = False,
                   url: str | None = None, **kwargs: Any) -> None:
        """A page rendered with the context Pelican's write_file gives it (pelican 4's
        writers.py), then written by `ours`. Pelican's paginated lists are off in our
        settings (pipeline.site renders the lists), so none comes here to paginate."""
        if not name:
            return  # a page kind the settings turn off (its *_SAVE_AS is "")
        if template_name in self.settings.get("PAGINATED_TEMPLATES", {}):
            raise ValueError(f"{name}: Pelican's paginated {template_name} pages are off "
                             "(pipeline.site.settings); pipeline.site renders the lists")
        local = context.copy()
        local["localsiteurl"] = local.get("localsiteurl")
        if relative_urls:
            local["SITEURL"] = local["localsiteurl"] = path_to_url(get_relative_path(name))
        local["output_file"] = name
        local.update(kwargs)
        if local["localsiteurl"]:  # a page's content resolves its {filename} links from it
            context["localsiteurl"] = local["localsiteurl"]
        path = self.ours.render(name, template, local, override=override_output)
        signals.content_written.send(path, context=local)


def _writer_class(pelican: object) -> type:
    return PelicanWriter


def register() -> None:
    """This module is also a plugin: the writer, for Pelican run by hand."""
    signals.get_writer.connect(_writer_class)
