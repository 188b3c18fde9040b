"""The site: a Pelican plugin rendering the store (registered via PLUGINS in pelicanconf.py)."""

from __future__ import annotations

from pelican import signals


# Names must not clash with submodules: importing pipeline.site._writer would rebind a
# function called `_writer` here, and blinker (weak references) would drop the receiver.
def _generator_class(pelican: object) -> type:
    from pipeline.site.generator import PaperTrailGenerator

    return PaperTrailGenerator


def _writer_class(pelican: object) -> type:
    from pipeline.site._writer import SkipUnchangedWriter

    return SkipUnchangedWriter


def register() -> None:
    signals.get_generators.connect(_generator_class)
    signals.get_writer.connect(_writer_class)
