"""The build's second core: independent parts (the search index, chunks of paper pages)
run in forked worker processes that inherit the SiteData already computed, while the
build's own process renders the lists, briefs and feeds.

A task is a renderer and its arguments, `fn(site, out, *args)`. Workers inherit the task
list itself and are sent only its indices, so nothing but the results is ever pickled. A
worker writes its files through its copy of the writer and sends back what that writer
did (files, written, unchanged), so the build's report and stale-file sweep see every file.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult
from typing import Any

from threadpoolctl import threadpool_limits

from pipeline.site.output import Output

Task = tuple[Callable[..., Any], tuple[object, ...]]

# A worker is forked afresh after this many tasks. Every page a worker renders touches the
# library it shares with the build (reference counts), and each touched page of memory
# becomes the worker's own copy: at 200,000 papers a worker that lives through the whole
# build holds ~1 GB of them, the index's 1.2 GB. Ten tasks (10,000 paper pages) bound that
# to ~100 MB, and the index's worker gives its memory back soon after the index is done:
# the peak memory of all processes falls by ~0.7 GiB (docs/SCALE.md). The pool forks them
# from its own thread while the build's thread renders, so what a render uses must hold no
# lock across Python code (see Version.note, and the template cache in settings), and the
# build's BLAS runs on its own thread meanwhile (Workers.start).
TASKS_PER_WORKER = 10


@dataclass
class Done:
    value: Any
    files: dict[str, int]  # path: bytes, as SkipUnchangedWriter.produced
    written: int
    unchanged: int


_FORKED: tuple[Output, Sequence[Task]] | None = None  # what forked workers inherit


def run(out: Output, task: Task) -> Any:
    fn, args = task
    return fn(out.site, out, *args)


def _run(i: int) -> Done:
    """Run task i in a worker, accounting only for the files this task produced."""
    assert _FORKED is not None
    out, tasks = _FORKED
    w = out.writer
    w.produced, w.written, w.unchanged = {}, 0, 0
    value = run(out, tasks[i])
    return Done(value, w.produced, w.written, w.unchanged)


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

    def __init__(self, out: Output, count: int) -> None:
        self.out, self.count = out, count
        self.pool: multiprocessing.pool.Pool | None = None
        self.pending: AsyncResult[list[Done]] | None = None
        self.tasks: Sequence[Task] = ()
        self.blas: threadpool_limits | None = None

    def start(self, tasks: Sequence[Task]) -> None:
        self.tasks = tasks
        if self.count <= 1 or len(tasks) == 0 or "fork" not in \
                multiprocessing.get_all_start_methods():
            return  # finish() runs them here
        global _FORKED
        _FORKED = (self.out, tasks)  # forked workers inherit them and all the tasks read
        # OpenBLAS stops its threads before each fork: a fork from the pool's thread in the
        # middle of the build's own BLAS call (the for-you model's SVD) left that call
        # waiting for threads that were gone, forever. With one thread it waits for none.
        self.blas = threadpool_limits(limits=1, user_api="blas")
        # No more workers than tasks: an idle one would still share the build's memory, and
        # each page of it the build then writes to would be copied (a first pass whose
        # pages wait runs the index alone, while the build's process renders pages).
        self.pool = multiprocessing.get_context("fork").Pool(
            min(self.count, len(tasks)), maxtasksperchild=TASKS_PER_WORKER)
        self.pending = self.pool.map_async(_run, range(len(tasks)), chunksize=1)

    def running(self) -> bool:
        """Whether tasks still run in the workers (never when finish() is to run them)."""
        return self.pending is not None and not self.pending.ready()

    def finish(self) -> list[Any]:
        global _FORKED
        if self.pool is None:
            return [run(self.out, task) for task in self.tasks]
        assert self.pending is not None
        try:
            results: list[Done] = self.pending.get()
        except BaseException:
            self.pool.terminate()  # one failed part fails the build; don't wait for the rest
            raise
        finally:
            self.pool.close()
            self.pool.join()
            _FORKED = None
            if self.blas is not None:
                self.blas.restore_original_limits()
        w = self.out.writer
        for done in results:
            w.produced.update(done.files)
            w.written += done.written
            w.unchanged += done.unchanged
        return [done.value for done in results]
