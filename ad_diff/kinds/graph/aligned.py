"""One section's alignment as the match chain builds it (:class:`SectionAlignment`) and the part of it kept
for the next transform's hints (:class:`AlignedSection`). Its own module so that the chain's steps
(:mod:`ad_diff.kinds.graph.align`, :mod:`~ad_diff.kinds.graph.rounds`, :mod:`~ad_diff.kinds.graph.regions`)
all import it and none of them the others' module for an annotation (no cycle, annotations included)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.kinds.graph.index import GraphIndex, Rows
from ad_diff.kinds.graph.model import MatchKind, NodePair, Region, Unmatched

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = lazy.module("numpy")

KINDS: tuple[MatchKind | None, ...] = (None, MatchKind.EXACT, MatchKind.RENAMED, MatchKind.STRUCTURAL,
                                       MatchKind.SEQUENCE)
"""Match kinds by their code in :attr:`SectionAlignment.kind` (0: unmatched)."""
CODE = {k: c for c, k in enumerate(KINDS) if k is not None}


class SectionAlignment:
    """Result of aligning one GraphModule section of both runs (internal to the graph analysis)."""

    __slots__ = ("section", "b", "c", "mb", "mc", "kind", "unmatched", "regions", "rewired")

    def __init__(self, section: str, b: GraphIndex, c: GraphIndex) -> None:
        self.section = section
        self.b, self.c = b, c
        self.mb: NDArray[np.intp] = np.full(len(b), -1, dtype=np.intp)
        """Baseline index -> candidate index (-1 unmatched)."""
        self.mc: NDArray[np.intp] = np.full(len(c), -1, dtype=np.intp)
        self.kind: NDArray[np.int8] = np.zeros(len(b), dtype=np.int8)
        """Per baseline node, its match kind's code in :data:`KINDS`."""
        self.unmatched: list[Unmatched] = []
        self.regions: list[Region] = []
        self.rewired: list[tuple[str, str]] = []

    def pair(self, i: NDArray[np.intp] | int, j: NDArray[np.intp] | int, kind: MatchKind) -> None:
        """Record baseline node(s) ``i`` aligned to candidate node(s) ``j``."""
        self.mb[i], self.mc[j], self.kind[i] = j, i, CODE[kind]

    def pairs(self) -> list[NodePair]:
        """All pairs, in baseline dump order."""
        names_b, names_c = self.b.names, self.c.names
        kinds = self.kind.tolist()
        return [
            NodePair(names_b[i], names_c[j], KINDS[kinds[i]] or MatchKind.STRUCTURAL, self.section)
            for i, j in enumerate(self.mb.tolist())
            if j >= 0
        ]

    def counts(self) -> Counter[MatchKind]:
        """Pairs per match kind."""
        got = np.bincount(self.kind, minlength=len(KINDS)).tolist()
        return Counter({k: n for k, n in zip(KINDS, got, strict=True) if k is not None and n})

    @property
    def structure_equal(self) -> bool:
        """Every node aligned and no aligned node reads different inputs or literals."""
        return not self.unmatched and not self.rewired

    def kept(self) -> AlignedSection:
        """What the next transform's hints read of this alignment (see :class:`AlignedSection`)."""
        b, c = self.b, self.c
        return AlignedSection(self.section, b.names, b.targets, self.mb, c.names, c.targets,
                              Rows(c.in_ptr, c.in_src), tuple(self.regions))


@dataclass(frozen=True, slots=True)
class AlignedSection:
    """The part of a :class:`SectionAlignment` kept after it, for the root-cause hints of the next transform
    (:mod:`ad_diff.kinds.graph.hints`): names and targets of both sides, the pairing, the candidate's inputs
    and the regions. Signatures, users, literals, positions by name and the parsed nodes are dropped, which
    is most of an index's memory (a name -> position dict of a 75,000-node section is about 8 MB: made again
    where a hint needs one)."""

    section: str
    names_b: list[str]
    targets_b: list[str]
    mb: NDArray[np.intp]
    """Baseline index -> candidate index (-1 unmatched)."""
    names_c: list[str]
    targets_c: list[str]
    inputs_c: Sequence[list[int]]
    regions: tuple[Region, ...]

    def pos_b(self) -> dict[str, int]:
        """Baseline name -> position (the last node of a repeated name)."""
        return dict(zip(self.names_b, range(len(self.names_b)), strict=True))

    def pos_c(self) -> dict[str, int]:
        """Candidate name -> position."""
        return dict(zip(self.names_c, range(len(self.names_c)), strict=True))
