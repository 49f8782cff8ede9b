"""Error hierarchy.

``AdDiffError`` and its subclasses are *user/input* errors: the CLI prints their message and exits 2,
never a traceback. Anything else escaping the library is an internal bug and is reported as such.
"""

from __future__ import annotations

from pathlib import Path


class AdDiffError(Exception):
    """Base class of every error caused by the user's input, options or environment."""


class UsageError(AdDiffError):
    """Bad command-line usage (conflicting or missing options)."""


class ConfigError(AdDiffError):
    """Invalid configuration file or setting."""


class InputError(AdDiffError):
    """An input file or folder could not be read or understood.

    The message always starts with ``path`` (and ``:line`` when known) and says what was expected.
    """

    def __init__(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.detail = message
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")


class InternalError(Exception):
    """A bug in ad-diff itself (kept apart from ``AdDiffError`` on purpose)."""
