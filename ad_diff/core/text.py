"""Reading untrusted text files line by line: binary detection, decoding, CRLF and ANSI handling.

Shared by the log and dump parsers so both treat broken input the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ad_diff.errors import InputError

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""ANSI CSI sequences (colours, cursor moves from progress bars)."""

_SNIFF = 8192


def sniff_binary(path: Path, what: str) -> None:
    """Raise :class:`InputError` if ``path`` is not a readable text file.

    A NUL byte in the first 8 KiB, or mostly non-text bytes, means binary: AD never writes those.
    """
    try:
        with path.open("rb") as f:
            head = f.read(_SNIFF)
    except IsADirectoryError:
        raise InputError(path, f"is a folder, expected {what} (a text file)") from None
    except PermissionError:
        raise InputError(path, f"cannot be read (permission denied); expected {what}") from None
    except OSError as e:
        raise InputError(path, f"cannot be read ({e.strerror or e}); expected {what}") from e
    if b"\x00" in head:
        raise InputError(path, f"looks binary (NUL bytes in the first {_SNIFF} bytes); expected {what}")
    if head:
        printable = sum(1 for b in head if b >= 32 or b in (9, 10, 13, 27))
        if printable / len(head) < 0.85:
            raise InputError(path, f"looks binary (mostly non-text bytes); expected {what}")


def iter_lines(path: Path, what: str) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line_number, text, complete)`` for each line of ``path``.

    Decoding is UTF-8 with replacement (bad bytes become U+FFFD instead of aborting, and callers can
    report them); ``\\r\\n`` and ANSI codes are stripped. ``complete`` is False only for a last line that
    had no newline (a file cut mid-line).
    """
    sniff_binary(path, what)
    try:
        f = path.open("rb")
    except OSError as e:
        raise InputError(path, f"cannot be read ({e.strerror or e}); expected {what}") from e
    with f:
        n = 0
        for raw in f:
            n += 1
            complete = raw.endswith(b"\n")
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if "\x1b" in text:
                text = ANSI_RE.sub("", text)
            yield n, text, complete
