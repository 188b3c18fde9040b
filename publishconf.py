"""As pelicanconf.py, with absolute URLs from [site] base_url (`papertrail build --publish`
makes the same settings in code)."""

import sys
from pathlib import Path

_here = Path(__file__).resolve().parent
sys.path.insert(0, str(_here))

from pipeline import config as _config  # noqa: E402
from pipeline.site import settings as _settings  # noqa: E402

globals().update(_settings.plain(_config.load(_here / "papertrail.toml"), publish=True))
