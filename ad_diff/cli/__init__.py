"""Command-line interface: options -> Settings -> pipeline.run -> render -> gate. No logic of its own.

``app.py`` holds the typer app, the error guard and the entry point; each command family registers itself
from its own module (``compare``, ``ci``, ``fusion``), importing only ``app`` and shared option groups.
"""

from ad_diff.cli import ci as _ci  # noqa: F401  (registers snapshot, record, batch)
from ad_diff.cli.app import app, main

__all__ = ["app", "main"]
