"""The writers' lock, `data/.lock`: an exclusive flock (the kernel frees it if its holder
dies), the file recording who holds it for the message a second writer sees."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from pipeline.store.parquet import StoreError

log = logging.getLogger(__name__)


class StoreLocked(StoreError):
    pass


@contextlib.contextmanager
def held(root: Path) -> Iterator[str | None]:
    """Hold the lock of the store at `root` for the block; yields who left a stale lock
    behind (None when nobody did)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        stale = _acquire(fd, path)
        try:
            yield stale
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path) -> str | None:
    """Take the lock or say who holds it. The file records the holder, for the message a
    second writer sees; a record left by a process that died (the lock is free but the
    file is not empty) is returned as stale and taken over."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
        raise StoreLocked(
            f"{path}: the store is locked by another papertrail process ({holder}); "
            "wait for it to finish"
        ) from None
    left = os.pread(fd, 4096, 0).decode(errors="replace").strip()
    if left:
        # We got the lock, so whoever wrote this is gone without cleaning up.
        log.warning("%s: stale lock left by %s; taking it over", path, left)
    os.ftruncate(fd, 0)
    info = {"pid": os.getpid(), "host": socket.gethostname(),
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    os.pwrite(fd, json.dumps(info).encode(), 0)
    return left or None
