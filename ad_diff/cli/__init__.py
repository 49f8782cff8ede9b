"""Command-line interface: options -> Settings -> pipeline.run -> render -> gate. No logic of its own.

``app`` holds the typer app, the error guard and the entry point; ``options`` the option groups shared by
the comparison commands; ``output`` where reports are written. Each command family registers itself on
the app from its own module: ``compare``; ``ci`` (snapshot, record, batch); ``fusion`` (candidates, note);
``history``. :func:`main` imports only the module of the command it runs; :func:`load_commands` registers
them all (for ``--help``, or a caller that drives :data:`app` itself).
"""

from ad_diff.cli.app import COMMANDS, app, load_commands, main

__all__ = ["COMMANDS", "app", "load_commands", "main"]
