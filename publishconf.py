"""Production settings: as pelicanconf, with absolute URLs from [site] base_url."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pelicanconf import *  # noqa: F403
from pelicanconf import _cfg

SITEURL = _cfg.site.base_url.rstrip("/")
