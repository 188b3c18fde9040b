"""Run the `papertrail` command in a forked child that dies, or hits a full disk, at its Nth
write boundary: the Nth call of os.replace, os.rename, os.fsync or of a git command.

The child is a real process running the real CLI against real files and local servers;
only those calls are wrapped, to count them and to act at the chosen one. Dying is
`os._exit` (no cleanup, no flush: what kill -9 leaves); a full disk is the OSError
ENOSPC that the call would raise. The clock is fixed, so a rerun computes the same
tables as an uninterrupted run.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Imported here, in the parent, so each forked child starts warm (the CLI imports lazily).
from pipeline import compact, databranch, digest, ingest, runs  # noqa: F401
from pipeline.cli import cli
from pipeline.derive import enrich  # noqa: F401
from pipeline.store import MANIFEST

CRASHED = 86  # the child's exit status when it died on purpose


@dataclass(frozen=True)
class Outcome:
    status: int  # the child's exit status: 0, 1, 2, or CRASHED
    boundaries: int  # boundaries the child reached (up to the one it acted on)
    commits: tuple[int, ...]  # the boundaries that replaced the store's manifest


def run_cli(args: list[str], *, now: dt.datetime, crash_at: int | None = None,
            enospc_at: int | None = None, env: dict[str, str] | None = None) -> Outcome:
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        status = 1
        try:
            status = _child(args, now, crash_at, enospc_at, env or {}, write)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(status)
    os.close(write)
    _, wait = os.waitpid(pid, 0)
    with os.fdopen(read) as fh:
        reached = fh.read().split() or ["0"]
    return Outcome(os.waitstatus_to_exitcode(wait), int(reached[0]),
                   tuple(int(n) for n in reached[1:]))


def _child(args: list[str], now: dt.datetime, crash_at: int | None, enospc_at: int | None,
           env: dict[str, str], report: int) -> int:
    count, commits = 0, []

    def tell() -> None:
        os.write(report, " ".join(map(str, [count, *commits])).encode())

    def boundary() -> None:
        nonlocal count
        count += 1
        if count == crash_at:
            tell()
            os._exit(CRASHED)
        if count == enospc_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def counted(call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*a: Any, **kw: Any) -> Any:
            boundary()
            result = call(*a, **kw)
            if call is replace and str(a[1]).endswith(MANIFEST):
                commits.append(count)
            return result
        return wrapper

    run, replace = subprocess.run, os.replace

    def git_counted(cmd: Any, *a: Any, **kw: Any) -> Any:
        if isinstance(cmd, list | tuple) and cmd and cmd[0] == "git":
            boundary()
        return run(cmd, *a, **kw)

    os.replace, os.rename, os.fsync = counted(os.replace), counted(os.rename), counted(os.fsync)
    subprocess.run = git_counted  # type: ignore[assignment]
    runs.utcnow = lambda: now  # type: ignore[assignment]
    os.environ.update(env)
    try:
        cli.main(args, prog_name="papertrail", standalone_mode=True)
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    tell()
    return status
