"""bench/results/: the benchmarks' measurements as data. Every file keeps the columns
bench/results/README.md describes, and a full run appends its rows with the commit it
measured and the machine's load."""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_results", REPO / "bench" / "_results.py")
assert _spec and _spec.loader
results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results)
FILES = sorted(results.RESULTS.glob("*.csv"))


def test_the_readme_describes_every_file_and_column():
    readme = (results.RESULTS / "README.md").read_text(encoding="utf-8")
    assert FILES
    for path in FILES:
        assert f"`{path.name}`" in readme, path.name
    for column in results.COLUMNS:
        assert f"`{column}`" in readme, column


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_row_is_a_dated_number_with_its_unit(path: Path):
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        assert tuple(next(reader)) == results.COLUMNS
        rows = list(reader)
    assert rows
    for row in rows:
        date, commit, _, papers, metric, value, unit, _ = row
        dt.date.fromisoformat(date)
        assert re.fullmatch(r"([0-9a-f]{7,40}(-dirty)?)?", commit), row
        assert papers == "" or int(papers) > 0, row
        assert re.fullmatch(r"[a-z0-9_.\-]+", metric, re.I) and unit, row
        float(value)


def test_a_full_run_appends_its_rows_with_commit_and_load(tmp_path: Path):
    load = results.machine_load()
    assert re.fullmatch(r"load average \d+\.\d \(5 min \d+\.\d\) on \d+ CPUs", load)
    path = results.record("site", 200_000, [("first_build", 95.24, "s")], load, "a note",
                          results=tmp_path)
    results.record("site", 200_000, [("peak_pss", 5400, "MiB"), ("rebuild", 48.2049, "s")],
                   load, results=tmp_path)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.strip()
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == results.COLUMNS
    assert [r[4:7] for r in rows[1:]] == [["first_build", "95.24", "s"],
                                          ["peak_pss", "5400", "MiB"],
                                          ["rebuild", "48.205", "s"]]
    for row in rows[1:]:
        assert row[0] == dt.datetime.now(dt.UTC).date().isoformat()
        assert row[1].removesuffix("-dirty") == head and row[2] == load and row[3] == "200000"
    assert rows[1][7] == "a note"
