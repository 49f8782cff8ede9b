"""Reading untrusted text line by line: binary detection, decoding, CRLF and ANSI handling, long lines.

Pure helpers over bytes and binary streams; where the stream comes from (a plain or compressed file) is
:mod:`ad_diff.discover.capture`'s business.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ad_diff.errors import InputError

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""ANSI CSI sequences (colours, cursor moves from progress bars)."""

SNIFF = 8192
"""Bytes looked at to tell text from binary."""

LINE_CAP = 1 << 20
"""Longest line kept from a decompressed stream (1 MiB): the rest of a longer line is skipped, so one
endless line (a decompression bomb) cannot take the memory; no AutoDeploy result line comes near it."""


def check_text(head: bytes, path: Path, what: str) -> None:
    """Raise :class:`InputError` if ``head`` (the first bytes of ``path``) is not text.

    A NUL byte in the first 8 KiB, or mostly non-text bytes, means binary: AD never writes those.
    """
    head = head[:SNIFF]
    if b"\x00" in head:
        raise InputError(path, f"looks binary (NUL bytes in the first {SNIFF} bytes); expected {what}")
    if head:
        printable = sum(1 for b in head if b >= 32 or b in (9, 10, 13, 27))
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
    f: BinaryIO, path: Path, limit: int | None = None, why: str = ""
) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line_number, text, complete)`` for each line of the binary stream ``f``.

    ``complete`` is False only for a last line that had no newline (a file cut mid-line). ``limit`` bounds the
    bytes read in total (a decompressed stream): past it, :class:`InputError` names ``path`` and says ``why``
    that is the limit; lines of such a stream longer than :data:`LINE_CAP` keep their first
    :data:`LINE_CAP` bytes, so one endless line cannot take the memory. A plain file (no ``limit``) is read
    line by line at full speed; its size bounds its lines.
    """
    n = 0
    if limit is None:
        for raw in f:
            n += 1
            complete = raw.endswith(b"\n")
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if "\x1b" in text:
                text = ANSI_RE.sub("", text)
            yield n, text, complete
        return
    total = 0
    readline = f.readline
    while True:
        raw = readline(LINE_CAP)
        if not raw:
            return
        total += len(raw)
        complete = raw.endswith(b"\n")
        if not complete and len(raw) == LINE_CAP:
            while True:  # an overlong line: skip the rest of it, in bounded pieces
                more = readline(LINE_CAP)
                total += len(more)
                if limit is not None and total > limit:
                    raise _too_large(path, limit, why)
                if not more or more.endswith(b"\n"):
                    complete = bool(more)
                    break
        if limit is not None and total > limit:
            raise _too_large(path, limit, why)
        n += 1
        yield n, decode(raw), complete


def _too_large(path: Path, limit: int, why: str) -> InputError:
    return InputError(path, f"holds more than {limit:,} bytes{why}")
