"""Reading a log file as people capture it: compressed or not, with line prefixes of CI systems and launchers.

:class:`CapturedLines` yields a log's lines with those prefixes stripped, so the log parser sees what AD
printed, plus the rank a launcher tag names. It works out which prefixes a file carries by sniffing its
first AutoDeploy-looking lines (at most :data:`SNIFF_AD_LINES` of them, within the first
:data:`SNIFF_LINES` lines), inside the one pass that reads the file. Line numbers stay those of the file.

Compressed files (gzip, bzip2, xz, and zstd where the standard library has it) are read transparently,
told apart by their magic bytes, never by their name. Their decompressed size is bounded by
:func:`decompressed_limit`, and the lines of every log by :func:`ad_diff.core.limits.line_limit`, so a
decompression bomb or a file of empty lines is a clear error and not a hung CI job; a line longer than
:data:`ad_diff.core.limits.LOG_LINE_BYTES` keeps only its head (docs/bad-input.md, "Bounded readers").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ad_diff.core import lazy, limits, safepath
from ad_diff.core.text import SNIFF, check_text, iter_lines
from ad_diff.errors import InputError

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
"""File name endings of compressed logs looked for in a run folder (reading goes by magic bytes)."""

decompressed_limit = limits.decompressed_limit


def compression(head: bytes) -> str | None:
    """``gzip``, ``bzip2``, ``xz`` or ``zstd`` when ``head`` starts with that format's magic bytes."""
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def _decompressor(kind: str, raw: BinaryIO, path: Path) -> tuple[BinaryIO, tuple[type[Exception], ...]]:
    """A stream decompressing ``raw`` and the errors a cut or corrupt archive raises while it is read."""
    # imported here: most logs are plain, and these modules add to every compare's start-up time
    import bz2
    import gzip
    import lzma

    errors: tuple[type[Exception], ...] = (OSError, EOFError, lzma.LZMAError)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw), errors  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(raw), errors  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw), errors  # type: ignore[return-value]
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python >= 3.14
    except ImportError:
        raise InputError(path, "is zstd-compressed, which this Python cannot read (needs 3.14); decompress "
                               "it first (`zstd -d FILE`) and pass the plain log") from None
    return zstd.ZstdFile(raw), (*errors, zstd.ZstdError)


@contextmanager
def open_text(path: Path, what: str, root: Path | None = None) -> Iterator[tuple[BinaryIO, int | None, int]]:
    """Open ``path`` for reading lines, decompressing it when it is compressed.

    ``root``: the run folder it is opened beneath (:func:`ad_diff.core.safepath.open_file`); ``None`` for a
    file the user named (contained in the folder it resolves to). Yields the stream, the most bytes it may
    produce (``None`` for a plain file: its size bounds it) and the most lines it may hold
    (:func:`ad_diff.core.limits.line_limit` of the size of the file opened). Raises :class:`InputError` for
    a folder, a link leaving ``root``, a FIFO, an unreadable file, or content that is not text.
    """
    raw = safepath.open_file(path, safepath.given_root(path) if root is None else root,
                             f"{what} (a text file)")
    with raw:
        kind = compression(raw.read(6))
        raw.seek(0)
        if kind is None:
            check_text(raw.read(SNIFF), path, what)
            raw.seek(0)
            yield raw, None, limits.line_limit(os.fstat(raw.fileno()).st_size, compressed=False)
            return
        stream, errors = _decompressor(kind, raw, path)
        try:
            with stream:
                check_text(stream.read(SNIFF), path, f"{what} (inside its {kind} compression)")
                stream.seek(0)
                size = os.fstat(raw.fileno()).st_size
                yield stream, decompressed_limit(size), limits.line_limit(size, compressed=True)
        except errors as e:
            # a cut or corrupt archive: gzip raises BadGzipFile (an OSError) or EOFError, lzma LZMAError
            raise InputError(path, f"cannot be decompressed as {kind} ({e}); expected {what}") from e


@dataclass(frozen=True)
class Layer:
    """One kind of text a capture tool puts before each line."""

    name: str
    """Short name, reported with the log (``iso-timestamp``, ``mpirun``...)."""
    label: str
    """What writes it, for messages and docs."""
    pattern: re.Pattern[str]
    """Matches the layer at the start of a line; a ``rank`` group holds a launcher's rank tag."""


_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
LAYERS: tuple[Layer, ...] = (
    Layer("iso-timestamp", "ISO 8601 / RFC 3339 timestamps (GitHub Actions, kubectl logs --timestamps, "
          "docker logs -t, GitLab)", lazy.pattern(_ISO + r"(?: \d\d[OE]\+?)? +")),
    Layer("jenkins-timestamp", "Jenkins Timestamper",
          lazy.pattern(r"\[(?:" + _ISO + r"|\d\d:\d\d:\d\d(?:\.\d+)?)\] +|\d\d:\d\d:\d\d(?:\.\d+)?  +")),
    Layer("gitlab-section", "GitLab section_start/section_end markers",
          lazy.pattern(r"section_(?:start|end):\d+:[\w.-]+(?:\[[^\]\r]*\])?\r?")),
    Layer("mpirun", "mpirun --tag-output",
          lazy.pattern(r"\[[^,\[\]\s]+,(?P<rank>\d+)\](?:\[[^\]]*\])?(?:<(?:stdout|stderr|stddiag)>)?: ?")),
    Layer("torchrun", "torchrun --tee", lazy.pattern(r"\[(?:[A-Za-z_][\w-]*?)?(?P<rank>\d+)\]:")),
    Layer("srun", "srun --label", lazy.pattern(r" *(?P<rank>\d+): ")),
)
"""Every prefix ad-diff strips, outermost kinds first."""

_AD_MARK = re.compile(
    r"(?:\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] )?\[TRT-LLM AUTO-DEPLOY\] |\[AUTO-DEPLOY\] \[[A-Z]+\]"
    r"|\[stage=[a-z_][a-z0-9_]*, transform=|(?<![\w=\[])stage=[a-z_][a-z0-9_]*, transform=\w+, "
)
"""Where an AutoDeploy line starts (its logger prefix or, without one, its transform context)."""
_GROUP = lazy.pattern(r"##\[(?:end)?group\]")
_GITLAB = next(x for x in LAYERS if x.name == "gitlab-section")

SNIFF_AD_LINES = 50
"""AutoDeploy-looking lines whose prefixes decide which layers a file carries."""
SNIFF_LINES = 20_000
"""Lines looked at, at most, before the layers are fixed (the lines are held meanwhile, at most
:data:`ad_diff.core.limits.LOG_SNIFF_CHARS` characters of them)."""


def peel(prefix: str) -> tuple[tuple[Layer, ...], str]:
    """The layers ``prefix`` is made of, outermost first, and what is left of it (``""`` when all known)."""
    used: list[Layer] = []
    rest = prefix
    while rest:
        layer = next((x for x in LAYERS if x not in used and (m := x.pattern.match(rest)) and m.end()), None)
        if layer is None:
            break
        m = layer.pattern.match(rest)
        assert m is not None
        used.append(layer)
        rest = rest[m.end():]
    return tuple(used), rest


class CapturedLines:
    """The lines of one log file as AD printed them: ``(line_number, text, complete, launcher_rank)``.

    Iterate once. Afterwards :attr:`layers` holds the prefixes found (outermost first), :attr:`groups`
    whether GitHub ``##[group]`` markers were seen, and :attr:`unknown` the first AutoDeploy-looking line
    whose prefix is none of :data:`LAYERS` (line number and the prefix), for the error a log without any
    readable AutoDeploy line gets.
    """

    def __init__(self, path: Path, what: str, root: Path | None = None) -> None:
        self.path = path
        self.what = what
        self.root = root
        """The run folder the file is opened beneath (see :func:`open_text`)."""
        self.layers: tuple[Layer, ...] = ()
        self.groups = False
        self.unknown: tuple[int, str] | None = None

    def __iter__(self) -> Iterator[tuple[int, str, bool, int | None]]:
        with open_text(self.path, self.what, self.root) as (stream, limit, max_lines):
            why = (f" once decompressed: {limits.DECOMPRESS_RATIO} times its compressed size (at least "
                   f"{limits.DECOMPRESS_FLOOR >> 20} MiB, at most {limits.DECOMPRESS_CEILING >> 30} GiB) is "
                   "the limit; refused as a likely decompression bomb. If the log is real, decompress it and "
                   "pass the plain file")
            lines = iter_lines(stream, self.path, limit, max_lines, why)
            head = self._sniff(lines)
            layers = self.layers
            if not layers:
                # the common case, a file as AD wrote it: the lines go on as the reader made them
                yield from head
                yield from lines
                return
            for n, text, complete, _ in head:
                yield _strip(layers, n, text, complete)
            for n, text, complete, _ in lines:
                yield _strip(layers, n, text, complete)

    def _sniff(self, lines: Iterator[tuple[int, str, bool, None]]) -> list[tuple[int, str, bool, None]]:
        """Read the head of the file, deciding :attr:`layers`; returns the lines read (to be yielded)."""
        head: list[tuple[int, str, bool, None]] = []
        found: list[Layer] = []
        seen = 0
        held = 0
        for item in lines:
            head.append(item)
            text = item[1]
            held += len(text)
            if held > limits.LOG_SNIFF_CHARS:  # the head is held in memory: bounded in characters too
                break
            m = _AD_MARK.search(text)
            if m is None:
                if text.startswith("section_") and _GITLAB.pattern.match(text) and _GITLAB not in found:
                    found.append(_GITLAB)
                if not self.groups and "##[" in text:
                    at = text.index("##[")
                    self.groups = bool(_GROUP.match(text, at)) and not peel(text[:at])[1]
                if len(head) >= SNIFF_LINES:
                    break
                continue
            seen += 1
            if m.start():
                layers, rest = peel(text[: m.start()])
                if rest:
                    if self.unknown is None:
                        self.unknown = (item[0], text[: m.start()][:80])
                else:
                    found.extend(x for x in layers if x not in found)
            if seen >= SNIFF_AD_LINES or len(head) >= SNIFF_LINES:
                break
        self.layers = tuple(x for x in LAYERS if x in found)
        return head


def _strip(layers: tuple[Layer, ...], n: int, text: str, complete: bool) -> tuple[int, str, bool, int | None]:
    rank = None
    for layer in layers:
        m = layer.pattern.match(text)
        if m is not None:
            r = m.groupdict().get("rank")
            if r is not None:
                rank = int(r)
            text = text[m.end():]
    return n, text, complete, rank
