"""Writes that survive a crash or a power cut, for the store and the site's own records:
fsync a file or a folder, replace a small file atomically."""

from __future__ import annotations

import os
from pathlib import Path


def fsync(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries (files created, renamed or removed in it) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomically(path: Path, data: bytes) -> None:
    """Temp file in the same folder, fsync, os.replace: a crash leaves the old file or the
    new one, never half of one. One temp name per file: what a killed process left is
    overwritten, not piled up. The folder is not synced (see `write_text_atomic`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace a small text file atomically, the rename made durable too."""
    replace_atomically(path, text.encode("utf-8"))
    fsync_dir(path.parent)
