"""The site: a Pelican plugin rendering the store (see pipeline.site.settings). Its writer
comes through Pelican's get_writer signal: from the plugin pipeline.site.writer when
Pelican runs by hand, from `papertrail build` itself otherwise (to report what it wrote)."""

from __future__ import annotations

from pelican import signals


# Named so no submodule import rebinds it: blinker holds receivers by weak reference.
def _generator_class(pelican: object) -> type:
    from pipeline.site.generator import PaperTrailGenerator

    return PaperTrailGenerator


def register() -> None:
    signals.get_generators.connect(_generator_class)
