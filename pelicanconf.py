"""Settings for running Pelican by hand (`pelican -s pelicanconf.py`) over the store that
papertrail.toml beside this file names. `papertrail build` makes the same settings in code
(pipeline.site.settings) from the config it was given, and does not read this file."""

import sys
from pathlib import Path

_here = Path(__file__).resolve().parent
sys.path.insert(0, str(_here))  # pelican imports this file by path; make `pipeline` importable

from pipeline import config as _config  # noqa: E402
from pipeline.site import settings as _settings  # noqa: E402

globals().update(_settings.plain(_config.load(_here / "papertrail.toml")))
