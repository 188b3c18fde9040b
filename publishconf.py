"""As pelicanconf.py, with absolute URLs from [site] base_url (`papertrail build --publish`
makes the same settings in code)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pipeline import config as _config  # noqa: E402
from pipeline.site import settings as _settings  # noqa: E402

globals().update(_settings.plain(_config.load(HERE / "papertrail.toml"), publish=True))
