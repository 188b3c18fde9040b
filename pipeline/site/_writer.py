"""Pelican's Writer, but a file whose bytes would not change is not touched.

So rebuilding unchanged data changes no file (deploys and caches stay small), and
one day of new data rewrites only the pages it touches plus the lists and feeds.
Pelican's guard against writing one path twice is kept.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from pelican.writers import FileOverwriteFailedError, Writer


class _Pending(io.StringIO):
    def __init__(self, path: Path, writer: SkipUnchangedWriter) -> None:
        super().__init__()
        self.path, self.writer = path, writer

    def close(self) -> None:
        if not self.closed:
            self.writer.put(self.path, self.getvalue().encode("utf-8"))
        super().close()


class SkipUnchangedWriter(Writer):
    def __init__(self, output_path: str, settings: dict | None = None) -> None:
        super().__init__(output_path, settings=settings)
        self.written = 0
        self.unchanged = 0

    def _open_w(self, filename: str, encoding: str, override: bool = False) -> _Pending:
        if filename in self._written_files and not override:
            raise FileOverwriteFailedError(f'"{filename}" was already written in this build')
        self._written_files.add(filename)
        return _Pending(Path(filename), self)

    def put(self, path: Path, data: bytes) -> None:
        """Write `data` at `path` unless the file already holds exactly these bytes."""
        self._written_files.add(str(path))
        try:
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                self.unchanged += 1
                return
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
        # A plain write: the output is derived, and a page cut short by a crash differs
        # from what the next build renders, so that build rewrites it.
        with open(path, "wb") as fh:
            fh.write(data)
        self.written += 1

    def keep(self, path: Path) -> None:
        """Count a file this build produces without rendering it again (its inputs are
        unchanged), so it is not removed as stale."""
        self._written_files.add(str(path))
        self.unchanged += 1

    def files(self) -> set[str]:
        """Every file this build produced, written or left unchanged."""
        return set(self._written_files)

    def write_text(self, name: str, text: str) -> None:
        """A non-template file (JSON, XML, text) under the output folder."""
        path = os.path.join(self.output_path, name)
        with self._open_w(path, "utf-8") as fh:
            fh.write(text)
