"""Reading a log file as people capture it: compressed or not, with line prefixes of CI systems and launchers.

:class:`CapturedLines` yields a log's lines with those prefixes stripped, so the log parser sees what AD
printed, plus the rank a launcher tag names. It works out which prefixes a file carries by sniffing its
first AutoDeploy-looking lines (at most :data:`SNIFF_AD_LINES` of them, within the first
:data:`SNIFF_LINES` lines), inside the one pass that reads the file. Line numbers stay those of the file.

Compressed files (gzip, bzip2, xz, and zstd where the standard library has it) are read transparently,
told apart by their magic bytes, never by their name. Their decompressed size is bounded by
:func:`decompressed_limit`, so a decompression bomb is a clear error and not a hung CI job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ad_diff.core import safepath
from ad_diff.core.text import ANSI_RE, SNIFF, check_text, iter_lines
from ad_diff.errors import InputError

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
"""File name endings of compressed logs looked for in a run folder (reading goes by magic bytes)."""

RATIO = 250
"""Decompressed bytes allowed per compressed byte (text logs compress 5-50 fold; bombs 1000 fold and more)."""
FLOOR = 256 << 20
"""A compressed file may always decompress to this much, however small it is."""
CEILING = 8 << 30
"""And never to more than this."""


def decompressed_limit(size: int) -> int:
    """The most bytes a compressed file of ``size`` bytes may decompress to."""
    return min(CEILING, max(FLOOR, RATIO * size))


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
def open_text(path: Path, what: str, root: Path | None = None) -> Iterator[tuple[BinaryIO, int | None]]:
    """Open ``path`` for reading lines, decompressing it when it is compressed.

    ``root``: the run folder it is opened beneath (:func:`ad_diff.core.safepath.open_file`); ``None`` for a
    file the user named (contained in the folder it resolves to). Yields the stream and the most bytes it
    may produce (``None`` for a plain file: its size bounds it). Raises :class:`InputError` for a folder,
    a link leaving ``root``, a FIFO, an unreadable file, or content that is not text.
    """
    raw = safepath.open_file(path, safepath.given_root(path) if root is None else root,
                             f"{what} (a text file)")
    with raw:
        kind = compression(raw.read(6))
        raw.seek(0)
        if kind is None:
            check_text(raw.read(SNIFF), path, what)
            raw.seek(0)
            yield raw, None
            return
        stream, errors = _decompressor(kind, raw, path)
        try:
            with stream:
                check_text(stream.read(SNIFF), path, f"{what} (inside its {kind} compression)")
                stream.seek(0)
                yield stream, decompressed_limit(os.fstat(raw.fileno()).st_size)
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
          "docker logs -t, GitLab)", re.compile(_ISO + r"(?: \d\d[OE]\+?)? +")),
    Layer("jenkins-timestamp", "Jenkins Timestamper",
          re.compile(r"\[(?:" + _ISO + r"|\d\d:\d\d:\d\d(?:\.\d+)?)\] +|\d\d:\d\d:\d\d(?:\.\d+)?  +")),
    Layer("gitlab-section", "GitLab section_start/section_end markers",
          re.compile(r"section_(?:start|end):\d+:[\w.-]+(?:\[[^\]\r]*\])?\r?")),
    Layer("mpirun", "mpirun --tag-output",
          re.compile(r"\[[^,\[\]\s]+,(?P<rank>\d+)\](?:\[[^\]]*\])?(?:<(?:stdout|stderr|stddiag)>)?: ?")),
    Layer("torchrun", "torchrun --tee", re.compile(r"\[(?:[A-Za-z_][\w-]*?)?(?P<rank>\d+)\]:")),
    Layer("srun", "srun --label", re.compile(r" *(?P<rank>\d+): ")),
)
"""Every prefix ad-diff strips, outermost kinds first."""

_AD_MARK = re.compile(
    r"(?:\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] )?\[TRT-LLM AUTO-DEPLOY\] |\[AUTO-DEPLOY\] \[[A-Z]+\]"
    r"|\[stage=[a-z_][a-z0-9_]*, transform=|(?<![\w=\[])stage=[a-z_][a-z0-9_]*, transform=\w+, "
)
"""Where an AutoDeploy line starts (its logger prefix or, without one, its transform context)."""
_GROUP = re.compile(r"##\[(?:end)?group\]")
_GITLAB = next(x for x in LAYERS if x.name == "gitlab-section")

SNIFF_AD_LINES = 50
"""AutoDeploy-looking lines whose prefixes decide which layers a file carries."""
SNIFF_LINES = 20_000
"""Lines looked at, at most, before the layers are fixed (the lines are held meanwhile)."""


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
        with open_text(self.path, self.what, self.root) as (stream, limit):
            why = (f" once decompressed: {RATIO} times its compressed size (at least {FLOOR >> 20} MiB, "
                   f"at most {CEILING >> 30} GiB) is the limit; refused as a likely decompression bomb. If "
                   "the log is real, decompress it and pass the plain file")
            lines = iter_lines(stream, self.path, limit, why)
            head = self._sniff(lines)
            layers = self.layers
            if not layers:
                for n, text, complete in head:
                    yield n, text, complete, None
                if limit is not None:
                    for n, text, complete in lines:
                        yield n, text, complete, None
                    return
                # A plain file as AD wrote it, the common case: read on from the same file object in this
                # one generator (iter_lines stopped right after the head), as fast as reading lines gets.
                n = head[-1][0] if head else 0
                for raw in stream:
                    n += 1
                    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if "\x1b" in text:
                        text = ANSI_RE.sub("", text)
                    yield n, text, raw.endswith(b"\n"), None
                return
            for n, text, complete in head:
                yield _strip(layers, n, text, complete)
            for n, text, complete in lines:
                yield _strip(layers, n, text, complete)

    def _sniff(self, lines: Iterator[tuple[int, str, bool]]) -> list[tuple[int, str, bool]]:
        """Read the head of the file, deciding :attr:`layers`; returns the lines read (to be yielded)."""
        head: list[tuple[int, str, bool]] = []
        found: list[Layer] = []
        seen = 0
        for item in lines:
            head.append(item)
            text = item[1]
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
