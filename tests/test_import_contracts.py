"""The import contracts in pyproject.toml ([tool.importlinter]: docs/ARCHITECTURE.md's
rooms), which `make test` checks with lint-imports: they can fail. A copy of pipeline/ where a
text helper imports the site breaks them, and lint-imports names the import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports over the pipeline/ under `root`, with the contracts of its pyproject."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)


def test_a_low_room_importing_a_high_one_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(REPO / "pipeline", tmp_path / "pipeline",
                    ignore=shutil.ignore_patterns("__pycache__", "sample"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    kept = lint_imports(tmp_path)
    assert kept.returncode == 0, kept.stdout
    ids = tmp_path / "pipeline" / "text" / "ids.py"
    ids.write_text(ids.read_text() + "\nfrom pipeline.site import i18n\n")

    broken = lint_imports(tmp_path)

    assert broken.returncode == 1
    assert "pipeline.text is not allowed to import pipeline.site" in broken.stdout
    assert "pipeline.text.ids -> pipeline.site.i18n" in broken.stdout
