"""The parser's memory of recent dump bodies: the node objects of their lines, by line key.

A node depends on its line's text alone (and on the dump's grammar), so a line met in a body the analysis
still holds is that body's node object, wherever the line sits now (:mod:`ad_diff.kinds.graph.parse`).
"""

from __future__ import annotations

from collections.abc import Container

from xxhash import xxh3_128_digest

from ad_diff.kinds.graph.model import GraphNode

Body = dict[bytes, GraphNode | None]
"""One parsed body's nodes by line key (:func:`line_keys`; a blank line's key maps to ``None``)."""


def line_keys(lines: list[str]) -> list[bytes]:
    """Each line's key in a :class:`LineMemo`: the 128-bit XXH3 digest of its UTF-8 bytes.

    A digest, not the text: as texts, the memo's lines were a fifth of the analysis's peak memory on a
    75,000-node MoE pair (about 150 bytes a line, against 49 for a digest). Encoding and hashing in C (about
    50 ns a line) cost little more than the text's own hash in the dict lookup they replace. Two different
    lines with one key are an accidental 128-bit collision. A crafted one gains nothing: whoever writes a
    run's dumps can write any line they like, or the other run's (as for the body digests,
    :mod:`ad_diff.kinds.graph.cache`)."""
    try:
        return list(map(xxh3_128_digest, map(str.encode, lines)))
    except UnicodeEncodeError:  # a lone surrogate (never in text decoded from a file, but callers pass str)
        return [xxh3_128_digest(ln.encode("utf-8", "surrogatepass")) for ln in lines]


class LineMemo:
    """The nodes of a few parsed bodies by line key, each body with its grammar (D1, or D2/D3:
    ``%x : torch.float32`` is a D1 placeholder but no D2 line, so a body looks only at bodies of its own
    grammar).

    Each body is stored under a tag. The dump loader (:class:`~ad_diff.kinds.graph.cache.DumpLoader`) tags
    a body with its digest and keeps the memo to the bodies it holds itself (:meth:`retain`, :meth:`touch`):
    the latest graph of each run, where the next body's lines come from. So every node the memo keeps alive
    belongs to a graph the analysis holds anyway (a memo of every recent line kept a third to a half of its
    nodes for graphs long gone, on the MoE benchmark pair). Untagged, the last ``keep`` bodies stay. Only a
    body that parsed whole is stored, so one that fails half way leaves nothing wrong behind.
    """

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._bodies: dict[object, tuple[bool, Body]] = {}
        """The bodies by tag, oldest first."""

    def sources(self, d1: bool) -> list[Body]:
        """The stored bodies of the D1 grammar or not, newest first."""
        return [body for g, body in reversed(self._bodies.values()) if g == d1]

    def add(self, d1: bool, body: Body, tag: object = None) -> None:
        """Store a body that parsed whole as the newest (``tag``: see the class docstring); the oldest beyond
        ``keep`` goes."""
        key = object() if tag is None else tag
        self._bodies.pop(key, None)
        self._bodies[key] = (d1, body)
        while len(self._bodies) > self.keep:
            del self._bodies[next(iter(self._bodies))]

    def touch(self, tag: object) -> None:
        """Make the body stored under ``tag`` (if any) the newest: its graph was just used again."""
        got = self._bodies.pop(tag, None)
        if got is not None:
            self._bodies[tag] = got

    def retain(self, tags: Container[object]) -> None:
        """Let go of every body not stored under one of ``tags``."""
        for tag in [t for t in self._bodies if t not in tags]:
            del self._bodies[tag]

    def __len__(self) -> int:
        return sum(len(body) for _, body in self._bodies.values())


__all__ = ["Body", "LineMemo", "line_keys"]
