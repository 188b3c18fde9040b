"""The build's second core: independent parts (the search index, chunks of paper pages)
run in forked worker processes that inherit the library already loaded, while the build's
own process renders the lists, briefs and feeds.

A worker writes its files through its copy of the writer and sends back what that writer
did (files, written, unchanged), so the build's report and stale-file sweep see every file.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult
from typing import Any

from pipeline.site._writer import SkipUnchangedWriter

Task = tuple[str, tuple]  # (method of the build object, its arguments): small to send


@dataclass
class Done:
    value: Any
    files: set[str]
    written: int
    unchanged: int


_BUILD: Any = None  # the build object a forked worker inherits, with its writer


def _run(task: Task) -> Done:
    """Run one task in a worker, accounting only for the files this task produced."""
    w: SkipUnchangedWriter = _BUILD.writer
    w._written_files, w.written, w.unchanged = set(), 0, 0
    name, args = task
    value = getattr(_BUILD, name)(*args)
    return Done(value, w._written_files, w.written, w.unchanged)


def jobs(setting: int) -> int:
    """0 means one per CPU this process may run on (a CI runner's cgroup may allow fewer
    than the machine has)."""
    if setting:
        return setting
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class Workers:
    """`start(tasks)`, do other work, then `finish()` → the tasks' values in order."""

    def __init__(self, build: Any, count: int) -> None:
        self.build, self.writer, self.count = build, build.writer, count
        self.pool: multiprocessing.pool.Pool | None = None
        self.pending: AsyncResult | None = None
        self.tasks: Sequence[Task] = ()

    def start(self, tasks: Sequence[Task]) -> None:
        self.tasks = tasks
        if self.count <= 1 or len(tasks) == 0 or "fork" not in \
                multiprocessing.get_all_start_methods():
            return  # finish() runs them here
        global _BUILD
        _BUILD = self.build  # forked workers inherit it and everything the tasks read
        self.pool = multiprocessing.get_context("fork").Pool(self.count)
        self.pending = self.pool.map_async(_run, tasks, chunksize=1)

    def finish(self) -> list[Any]:
        global _BUILD
        if self.pool is None:
            return [getattr(self.build, name)(*args) for name, args in self.tasks]
        assert self.pending is not None
        try:
            results: list[Done] = self.pending.get()
        except BaseException:
            self.pool.terminate()  # one failed part fails the build; don't wait for the rest
            raise
        finally:
            self.pool.close()
            self.pool.join()
            _BUILD = None
        w = self.writer
        for done in results:
            w._written_files |= done.files
            w.written += done.written
            w.unchanged += done.unchanged
        return [done.value for done in results]
