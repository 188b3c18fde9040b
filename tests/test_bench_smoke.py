"""Every bench still runs: each script in bench/ at tiny N (`--smoke`), in a process of its own,
as `make bench` runs it in full. The figures are not checked, only that they are printed, and
that a smoke run adds nothing to bench/results/ (only full runs are measurements)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each bench script runs in full, at its smallest size

REPO = Path(__file__).resolve().parents[1]
BENCHES = sorted(p for p in (REPO / "bench").glob("*.py") if not p.name.startswith("_"))
RESULTS = REPO / "bench" / "results"
CHROMIUM = Path("/usr/bin/chromium")  # the search bench times queries in a real browser


@pytest.mark.parametrize("script", BENCHES, ids=lambda path: path.stem)
def test_each_bench_runs_at_tiny_n_and_prints_its_figures(script: Path) -> None:
    if script.stem == "search" and not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    before = {p.name: p.read_bytes() for p in RESULTS.iterdir()}
    result = subprocess.run([sys.executable, str(script), "--smoke"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert any(re.search(r"\d", line) for line in result.stdout.splitlines()), result.stdout
    assert {p.name: p.read_bytes() for p in RESULTS.iterdir()} == before
