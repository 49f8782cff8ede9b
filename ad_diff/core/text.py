"""Reading untrusted text line by line: binary detection, decoding, CRLF and ANSI handling, long lines.

Pure helpers over bytes and binary streams; where the stream comes from (a plain or compressed file) is
:mod:`ad_diff.discover.capture`'s business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice
from pathlib import Path
from typing import BinaryIO

from ad_diff.core import lazy, limits
from ad_diff.core.limits import LOG_LINE_BYTES
from ad_diff.errors import InputError

ANSI_RE = lazy.pattern(r"\x1b\[[0-9;?]*[A-Za-z]")
"""ANSI CSI sequences (colours, cursor moves from progress bars)."""

SNIFF = 8192
"""Bytes looked at to tell text from binary."""

LINE_CAP = LOG_LINE_BYTES
"""Longest line kept (:data:`ad_diff.core.limits.LOG_LINE_BYTES`); the rest of a longer line is skipped."""


_TEXT_BYTES = bytes(range(32, 256)) + b"\t\n\r\x1b"
"""Bytes a text file is made of: printable ones, UTF-8's high bytes, tab, newlines and ESC (colour codes)."""


def check_text(head: bytes, path: Path, what: str) -> None:
    """Raise :class:`InputError` if ``head`` (the first bytes of ``path``) is not text.

    A NUL byte in the first 8 KiB, or mostly non-text bytes, means binary: AD never writes those.
    """
    head = head[:SNIFF]
    if b"\x00" in head:
        raise InputError(path, f"looks binary (NUL bytes in the first {SNIFF} bytes); expected {what}")
    if head:
        printable = len(head) - len(head.translate(None, _TEXT_BYTES))  # C speed: this runs for every log
        if printable / len(head) < 0.85:
            raise InputError(path, f"looks binary (mostly non-text bytes); expected {what}")


def decode(raw: bytes) -> str:
    """One line as text: UTF-8 with replacement (bad bytes become U+FFFD, which callers may count), without
    its ``\\r\\n`` and without ANSI codes."""
    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    return text


def iter_lines(
    f: BinaryIO, path: Path, limit: int | None, lines: int, why: str = ""
) -> Iterator[tuple[int, str, bool, None]]:
    """Yield ``(line_number, text, complete, None)`` for each line of the binary stream ``f``, bounded.

    The shared line reader of every log (the caps are :mod:`ad_diff.core.limits`'): ``complete`` is False
    only for a last line that had no newline (a file cut mid-line); a line longer than :data:`LINE_CAP`
    keeps its first :data:`LINE_CAP` bytes and the rest is skipped in bounded pieces, so one endless line
    cannot take the memory; more than ``limit`` bytes in total (``None``: no cap, a plain file's size bounds
    it) or more than ``lines`` lines is an :class:`InputError` naming ``path`` and the cap (``why``: why that
    byte cap). The last item is the slot :class:`~ad_diff.discover.capture.CapturedLines` fills with a
    launcher's rank: yielding it here lets the common case pass lines on without building new tuples.
    """
    readline = f.readline
    # C-level iteration, as fast as `for raw in f` but never more than LINE_CAP bytes a line, and the line
    # cap counted by islice rather than by a test per line
    numbered = enumerate(islice(iter(partial(readline, LINE_CAP), b""), lines), 1)
    if limit is None:  # a plain file, the common case: as little work a line as possible
        for n, raw in numbered:
            complete = raw.endswith(b"\n")
            if not complete and len(raw) == LINE_CAP:
                complete = _skip_rest(readline, limit)[0]
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if "\x1b" in text:
                text = ANSI_RE.sub("", text)
            yield n, text, complete, None
    else:
        total = 0
        for n, raw in numbered:
            total += len(raw)
            complete = raw.endswith(b"\n")
            if not complete and len(raw) == LINE_CAP:
                complete, more = _skip_rest(readline, limit - total)
                total += more
            if total > limit:
                raise _too_large(path, limit, why)
            yield n, decode(raw), complete, None
    if readline(1):
        raise InputError(path, f"holds more than {lines:,} lines (the cap for a log of this size: "
                               f"{limits.LOG_LINES_PER_BYTE} per compressed byte, at least "
                               f"{limits.LOG_LINES_FLOOR:,}, at most {limits.LOG_LINES_CEILING:,}; "
                               "docs/bad-input.md, \"Bounded readers\"); refused rather than read without "
                               "bound", lines + 1)


def _skip_rest(readline: Callable[[int], bytes], room: int | None) -> tuple[bool, int]:
    """Skip the rest of an overlong line in bounded pieces: whether it ended with a newline, and the bytes
    skipped (stopping once past ``room``, the bytes the stream may still produce)."""
    skipped = 0
    while True:
        more = readline(LINE_CAP)
        skipped += len(more)
        if not more or more.endswith(b"\n") or (room is not None and skipped > room):
            return bool(more), skipped


def _too_large(path: Path, limit: int, why: str) -> InputError:
    return InputError(path, f"holds more than {limit:,} bytes{why}")
