"""How a store is read and written: a reader sees one commit whole (`Access.snapshot`), a
writer holds the lock and a transaction whose changes commit when its block ends
(`Access.lock`). `Store` (the package's API) reads and writes tables and snapshots through
it."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pipeline.store import migrations as _migrations
from pipeline.store.lock import held
from pipeline.store.manifest import MANIFEST, Manifest, Transaction, load, reading, unknown_tables
from pipeline.tables import Catalog, installed_catalog

_T = TypeVar("_T")


def reading_one(method: Callable[..., _T]) -> Callable[..., _T]:
    """A read outside `snapshot()` reads one commit whole: it takes a snapshot of its own."""

    @functools.wraps(method)
    def read_one(self: Access, *args: Any, **kwargs: Any) -> _T:
        with self.snapshot():
            return method(self, *args, **kwargs)

    return read_one


def committing(method: Callable[..., _T]) -> Callable[..., _T]:
    """A write outside `lock()` takes the lock and commits on its own."""

    @functools.wraps(method)
    def write(self: Access, *args: Any, **kwargs: Any) -> _T:
        if self._tx is not None:
            return method(self, *args, **kwargs)
        with self.lock():
            return method(self, *args, **kwargs)

    return write


class Access:
    """One store folder's commits: readers need no lock (each read, or `snapshot()`, reads
    one commit whole); writers hold `lock()`. `catalog` says what tables and snapshots it
    holds, read when asked (a source registered later counts): by default the one the
    sources registry installs."""

    def __init__(self, root: Path | str,
                 catalog: Callable[[], Catalog] = installed_catalog) -> None:
        self.root = Path(root)
        self._catalog = catalog
        self.stale_lock: str | None = None  # who left a lock behind, seen at the last lock()
        self._tx: Transaction | None = None  # while the lock is held
        self._depth = 0  # lock() nesting: only the outermost takes the lock and commits
        self._pinned: Manifest | None = None  # inside snapshot()

    @property
    def catalog(self) -> Catalog:
        return self._catalog()

    def _manifest(self) -> Manifest:
        """What the store holds: a writer's own pending state, the commit a reader's
        snapshot holds, or else the newest commit."""
        if self._tx is not None:
            return self._tx.pending
        if self._pinned is None:
            with self.snapshot():
                return self._manifest()
        return self._pinned

    def _tx_(self) -> Transaction:
        if self._tx is None:
            raise RuntimeError("store writes need the lock: use `with store.lock():`")
        return self._tx

    def _upgrade(self, pending: Manifest) -> None:
        """Run the migrations a store an earlier release wrote needs (`Store` does)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read the store as one commit left it, whatever writers commit meanwhile: the
        manifest is read once, and a reader's lease keeps the files it names until the
        block ends (`manifest.reading`; writers delete them after). A store an earlier
        release wrote is upgraded first (`migrations`: one writer's commit, the only write
        a reader may cause). Inside `lock()`, reads see the writer's own changes."""
        if self._tx is not None or self._pinned is not None:
            yield
            return
        if _migrations.pending(load(self.root)):
            with self.lock():  # before the lease, so the old files go at its commit
                pass
        with reading(self.root) as manifest:
            unknown_tables(manifest, self.catalog, self.root / MANIFEST)
            self._pinned = manifest
            try:
                yield
            finally:
                self._pinned = None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store for writing: an exclusive lock (`lock.held`), leftovers of an
        earlier crash removed, and what is written inside committed when the block ends
        without an exception (nothing of it otherwise). Nested blocks share the outer one."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        with held(self.root) as self.stale_lock:
            self._depth = 1
            try:
                self._tx = Transaction(self.root)
                unknown_tables(self._tx.committed, self.catalog, self.root / MANIFEST)
                self._upgrade(self._tx.pending)
                yield
                self._tx.commit()
            except BaseException:
                if self._tx is not None:
                    self._tx.discard()
                raise
            finally:
                self._depth, self._tx = 0, None

    def commit(self) -> None:
        """Make everything written so far current (a checkpoint inside `lock()`)."""
        self._tx_().commit()
