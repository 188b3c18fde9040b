"""The demo's site, byte for byte: a refactor of the build must leave every file as it was.

The hashes are recorded in test_site_golden.json. A change meant to alter the site records
them again with PAPERTRAIL_GOLDEN=record, and its commit says which files changed and why.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from pipeline import config as config_mod
from pipeline import demo

GOLDEN = Path(__file__).with_name("test_site_golden.json")


def site_hashes(out: Path) -> dict[str, str]:
    """sha256 of every file the build made; .papertrail/ holds file times, not the site."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*"))
            if p.is_file() and p.relative_to(out).parts[0] != ".papertrail"}


def test_the_demo_site_is_byte_identical_to_the_recorded_one(tmp_path):
    cfg = demo.run(config_mod.load(demo.CONFIG), tmp_path, lambda line: None)
    hashes = site_hashes(cfg.output_path)
    if os.environ.get("PAPERTRAIL_GOLDEN") == "record":
        GOLDEN.write_text(json.dumps(hashes, indent=0, sort_keys=True) + "\n", "utf-8")
    recorded = json.loads(GOLDEN.read_text("utf-8"))
    changed = sorted(k for k in hashes.keys() & recorded.keys() if hashes[k] != recorded[k])
    assert (sorted(recorded.keys() - hashes.keys()), sorted(hashes.keys() - recorded.keys()),
            changed) == ([], [], [])
