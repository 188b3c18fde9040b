"""A fork edits papertrail.toml, and its CI (`make test`) must stay green: every test that
reads the shipped file, and the tests of the demo (which has its own config), run in a copy
of the project whose papertrail.toml is another valid config, a narrow one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import config as config_mod

REPO = Path(__file__).resolve().parents[1]

# A robotics fork: one category, one topic, English, no digests.
NARROW = """\
[site]
title = "Robot radar"
language = "en"
timezone = "UTC"
output = "site"

[sources.arxiv]
categories = ["cs.RO"]

[sources.hf]
enabled = false

[digest]
enabled = false

[[topics]]
slug = "grasping"
name = { zh = "抓取", en = "Grasping" }
keywords = ["grasp"]
"""

# Every test that reads the shipped papertrail.toml, then the demo's (they must not).
CONFIG_SENSITIVE = [
    "tests/test_config.py::test_the_shipped_and_the_demo_config_load",
    "tests/test_config_reliability.py::test_an_output_folder_in_the_project_root_is_allowed",
    "tests/test_site.py::"
    "test_pelicanconf_and_publishconf_hold_the_settings_the_build_makes_in_code",
    "tests/test_topics.py::test_each_demo_topic_matches_a_sample_paper",
    "tests/test_search_index.py::"
    "test_the_glossary_holds_the_topics_names_and_the_built_in_terms",
    "tests/test_cli.py::test_demo_runs_offline",
    "tests/test_site_golden.py::test_every_kind_of_file_is_as_recorded",
]
# The project's own file (not one a test writes into a folder of its own), or the Pelican
# settings that read it.
SHIPPED = re.compile(r'(?:\bREPO|parents\[1\]) / "papertrail\.toml"|pelicanconf|publishconf')


def _skip(folder: str, names: list[str]) -> set[str]:
    """What a fresh checkout lacks: caches, the venv, and the top level's store and sites."""
    top = Path(folder) == REPO
    return {n for n in names if n in {".git", ".venv", "node_modules", "__pycache__",
                                      ".pytest_cache", ".mypy_cache", ".ruff_cache"}
            or (top and n in {"data", "output", ".demo", "papertrail.egg-info"})}


def test_every_test_module_that_reads_the_shipped_config_is_run_with_another():
    readers = {p.relative_to(REPO).as_posix() for p in (REPO / "tests").glob("test_*.py")
               if p.name != Path(__file__).name and SHIPPED.search(p.read_text("utf-8"))}
    assert readers  # the pattern still finds them
    assert readers <= {test.split("::")[0] for test in CONFIG_SENSITIVE}
    # the benches run in `make test` too (tests/test_bench_smoke.py): the demo's config
    assert [p.name for p in (REPO / "bench").glob("*.py")
            if SHIPPED.search(p.read_text("utf-8"))] == []


@pytest.mark.slow  # runs the demo, and the tests above, in a copy of the project
def test_the_config_sensitive_tests_pass_with_a_narrow_config(tmp_path):
    fork = tmp_path / "fork"
    shutil.copytree(REPO, fork, ignore=_skip, symlinks=True)
    (fork / "papertrail.toml").write_text(NARROW, encoding="utf-8")
    config_mod.load(fork / "papertrail.toml")  # a valid config, or this test proves nothing
    # The copy's pipeline/, not the one installed in the venv (editable, from REPO).
    env = {**os.environ, "PYTHONPATH": str(fork)}
    env.pop("PAPERTRAIL_CONFIG", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CONFIG_SENSITIVE],
        cwd=fork, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert re.search(r"\b8 passed\b", result.stdout), result.stdout[-2000:]
