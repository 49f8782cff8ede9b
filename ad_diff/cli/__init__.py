"""Command-line interface: options -> Settings -> pipeline.run -> render -> gate. No logic of its own.

``app`` holds the typer app, the error guard and the entry point; ``options`` the option groups shared by
the comparison commands; ``output`` where reports are written. Each command family registers itself on
the app from its own module: ``compare``; ``ci`` (snapshot, record, batch); ``fusion`` (candidates, note).
"""

from ad_diff.cli import (  # noqa: F401  (each module registers its commands)
    ci,
    compare,
    fusion,
    history,  # noqa: F401  (registers `history`)
)
from ad_diff.cli.app import app, main

__all__ = ["app", "main"]
