"""Content-addressed loading of graph dumps: read and hash each file, parse each distinct graph once, and
each distinct line of those graphs once.

Real AD runs write ~90 dumps per run and most consecutive ones hold the same graph: a disabled or
zero-match transform repeats the previous graph byte for byte except its two header lines
(``# Transform:`` / ``# Stage:``), and the baseline and candidate share every file before their first
divergence. So dumps are keyed by a digest of the *body* (everything after the header): a body seen before
is not parsed again, only its header fields are swapped in. The parse is deterministic and its only inputs
besides the body are the header and the path, so the reused result equals a fresh parse. A body not seen
before is parsed through a :class:`~ad_diff.kinds.graph.linememo.LineMemo`: its lines shared with the bodies
kept here (the previous dump of this run, the other run's latest dump) are not parsed again.

The digest is xxHash's XXH3-128: it runs at memory speed, where blake2b took longer than the whole read. It
is no cryptographic hash, and it need not be: whoever can write a run's dumps can make them equal the other
run's anyway, and an accidental 128-bit collision is not a practical concern.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import xxhash

from ad_diff.core import safepath
from ad_diff.discover.dumps import DumpRef, header_fields
from ad_diff.errors import InputError
from ad_diff.kinds.graph.linememo import LineMemo
from ad_diff.kinds.graph.model import GraphDump
from ad_diff.kinds.graph.parse import parse_lines, split_lines

MAX_DUMP_BYTES = 256 << 20
"""Largest dump file read (bytes): a 50,000-node dump is about 10 MB; a bigger file is refused unread."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """One dump file as read: the parsed graph (``None`` on error), its body digest and the error text."""

    dump: GraphDump | None
    digest: bytes
    """XXH3-128 of the body after the two header lines (equal digests = same graph)."""
    error: str | None = None
    problem: str | None = None
    """The error without where it happened (file and line): the same for every dump that fails alike."""


def body_start(data: bytes) -> int:
    """Offset of the first byte after the two header lines (0 when there are fewer than two lines)."""
    return data.find(b"\n", data.find(b"\n") + 1) + 1


def body_digest(data: bytes, cut: int) -> bytes:
    """The digest of ``data[cut:]`` (a dump's body: see :func:`body_start`)."""
    return xxhash.xxh3_128_digest(memoryview(data)[cut:])


class DumpLoader:
    """Reads and hashes dump files; parses each distinct body once.

    ``size`` distinct parsed graphs are kept (least recently used dropped): two suffice for the analysis,
    which loads baseline and candidate alternately and only ever reuses the latest graph of either run.
    ``reuse=False`` parses every file, every line afresh (used by tests to check that reuse changes nothing).
    """

    def __init__(self, size: int = 2, reuse: bool = True) -> None:
        self.size = size
        self.reuse = reuse
        self.cache: dict[bytes, GraphDump] = {}
        self.memo = LineMemo() if reuse else None
        self.parsed = 0
        """Files actually parsed (the rest were reused)."""

    def load(self, ref: DumpRef) -> Loaded:
        """Read, hash and (unless its body was seen) parse ``ref``."""
        try:  # the run folder holds graphs/: a link leaving it, a FIFO or an oversized file is refused
            root = ref.path.parent.parent if ref.root is None else ref.root
            data = safepath.read_bytes(ref.path, root, "a graph dump", MAX_DUMP_BYTES)
        except InputError as e:
            return Loaded(None, b"", str(e), e.detail)
        cut = body_start(data)
        digest = body_digest(data, cut)
        hit = self.cache.pop(digest, None) if self.reuse else None
        if hit is not None:
            hit = self._rebadge(hit, ref, data[:cut])
            if self.memo is not None:
                self.memo.touch(digest)
        if hit is None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                line = data.count(b"\n", 0, e.start) + 1
                problem = f"expected UTF-8 text, found byte 0x{data[e.start]:02x} ({e.reason})"
                return Loaded(None, digest, f"{ref.path}:{line}: {problem}", problem)
            del data  # the bytes and the parse need not be in memory together
            try:
                lines = split_lines(text, ref.path)
                del text  # nor the text (about a dump's size again) and the rest of the parse
                hit = parse_lines(lines, ref.path, self.memo, digest)
            except InputError as e:
                return Loaded(None, digest, str(e), e.detail)
            del lines
            self.parsed += 1
        else:
            del data
        if self.reuse:
            self.cache[digest] = hit
            while len(self.cache) > self.size:
                self.cache.pop(next(iter(self.cache)))
            if self.memo is not None:  # the memo holds the lines of the graphs held here, no others
                self.memo.retain(self.cache)
        return Loaded(hit, digest)

    @staticmethod
    def _rebadge(hit: GraphDump, ref: DumpRef, head: bytes) -> GraphDump | None:
        """``hit`` with this file's path, counter and header; ``None`` (parse afresh) if the header is odd."""
        try:
            lines = head.decode("utf-8").split("\n")
            transform, stage = header_fields(ref.path, lines[0], lines[1] if len(lines) > 1 else "")
        except (UnicodeDecodeError, InputError):
            return None  # let the full parse report it, with its usual message
        if (hit.path, hit.counter, hit.transform, hit.stage) == (ref.path, ref.counter, transform, stage):
            return hit
        return replace(hit, path=ref.path, counter=ref.counter, transform=transform, stage=stage)


__all__ = ["DumpLoader", "Loaded", "body_digest", "body_start"]
