"""Frozen dataclasses for graph dumps (``AD_DUMP_GRAPHS_DIR``) and their cross-run comparison.

Parsing yields :class:`GraphDump` (one file); node alignment yields :class:`NodePair` / :class:`Unmatched` /
:class:`Region`. What the comparison of two dump folders measures is in :mod:`ad_diff.kinds.graph.diff`.
The JSON form comes from ``ad_diff.core.jsonable`` through the field metadata below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ad_diff.core.jsonable import json_omit
from ad_diff.core.model import RunId
from ad_diff.discover.dumps import dump_key as dump_key  # re-exported: the graph kind's modules name pairs
from ad_diff.discover.dumps import split_dump_key as split_dump_key

#: dtype texts meaning "this node/argument has no ``meta["val"]``" (docs/formats.md: ``N/A`` on call lines,
#: ``unknown`` on placeholders and arguments).
UNKNOWN_DTYPES = frozenset({"N/A", "unknown"})


@dataclass(frozen=True, slots=True)
class NodeMeta:
    """Shape and dtype as written in a dump. Kept verbatim so a dump renders back byte for byte."""

    shape: str | None
    """``1xs44x2048``, ``scalar``, ``?``, ``(1x2, 1x3)``; ``None`` in dtype-only (D1) dumps."""
    dtype: str
    """``torch.bfloat16``, ``SymInt``, ``(torch.float32, None)``; ``N/A``/``unknown`` when absent."""

    @property
    def known(self) -> bool:
        """True if the node had ``meta["val"]`` when the dump was written."""
        return self.dtype not in UNKNOWN_DTYPES


@dataclass(frozen=True, slots=True)
class Arg:
    """One positional argument of a node (kwargs are never dumped)."""

    text: str
    """Node name for node references, else the literal text as dumped (``-1``, ``[64, 32]``, ``None``)."""
    node: bool = False
    """True for ``%name`` references."""
    meta: NodeMeta | None = None
    """Metadata written beside a ``%name`` reference (``None`` in D1 dumps and on the output line)."""
    refs: tuple[str, ...] = ()
    """Bare node names inside a list/tuple literal (``[neg, slice_1]``)."""


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One SSA line: a placeholder, a call (function, method or module: dumps do not say which) or output."""

    name: str
    op: str
    """``placeholder``, ``call`` or ``output``."""
    target: str
    """``aten.add.Tensor``, ``<built-in function getitem>``, ``view``; the name for placeholders;
    ``output``."""
    args: tuple[Arg, ...]
    meta: NodeMeta | None
    """``None`` only for the output line."""

    def inputs(self) -> list[str]:
        """Names of every node this one reads (``%name`` args and names inside list literals), in order."""
        out: list[str] = []
        for a in self.args:
            if a.node:
                out.append(a.text)
            elif a.refs:
                out.extend(a.refs)
        return out


@dataclass(frozen=True, slots=True)
class GraphSection:
    """One GraphModule of a dump (D1/D2 dumps have a single ``(root)`` section)."""

    name: str
    nodes: tuple[GraphNode, ...]
    lines: Sequence[int] = field(default=(), metadata=json_omit())
    """1-based line number of each node in the dump file (a ``range`` when they follow one another).

    Kept beside the nodes, not in them: a node is its line's text alone, so one node object serves every
    dump that holds the same line, wherever it sits (see :class:`~ad_diff.kinds.graph.linememo.LineMemo`)."""

    def line_of(self, index: int) -> int:
        """Line number of ``nodes[index]`` (0 for a section built without line numbers)."""
        return self.lines[index] if index < len(self.lines) else 0


@dataclass(frozen=True, slots=True)
class GraphDump:
    """One dump file: the graph after one transform."""

    path: Path
    fmt: str
    """``D1`` (dtype only), ``D2`` (shape+dtype, root only) or ``D3`` (sections)."""
    transform: str
    stage: str
    sections: tuple[GraphSection, ...]
    counter: int | None = None
    """The ``NNN_`` file-name prefix, when present (ordering only; never used for pairing)."""

    @property
    def node_count(self) -> int:
        """Number of SSA lines (all sections, output lines included)."""
        return sum(len(s.nodes) for s in self.sections)


class MatchKind(str, Enum):
    """How an aligned node pair was found (the alignment chain of :mod:`ad_diff.kinds.graph.align`)."""

    IDENTICAL = "identical"
    """Byte-identical dumps: every node pairs with itself, no alignment ran."""
    EXACT = "exact"
    """Same name and target, and the same inputs, literals and shape (a name alone is no identity)."""
    RENAMED = "renamed"
    """Same name once the counter suffix is removed, same target and structural signature."""
    STRUCTURAL = "structural"
    """Same target and Weisfeiler-Lehman signature (unique on both sides), or matched neighbours."""
    SEQUENCE = "sequence"
    """Same target at the same position between two matched anchors, within one module scope."""


class UnmatchedReason(str, Enum):
    """Why a node has no counterpart in the other run."""

    REWRITTEN = "rewritten"
    """Part of a region with unmatched nodes on both sides."""
    REMOVED = "removed"
    """Part of a region with baseline nodes only."""
    ADDED = "added"
    """Part of a region with candidate nodes only."""
    SECTION_MISSING = "section_missing"
    """Its whole GraphModule exists in one run only."""

@dataclass(frozen=True, slots=True)
class NodePair:
    """A baseline node aligned with a candidate node, and how the match was found."""

    baseline: str
    candidate: str
    match_kind: MatchKind
    section: str = "(root)"


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A node of one run that has no counterpart in the other run."""

    run: RunId
    name: str
    target: str
    reason: UnmatchedReason
    section: str = "(root)"
    region: int | None = None


@dataclass(frozen=True, slots=True)
class Region:
    """A rewritten region: unmatched nodes of both runs bounded by the same matched frontier."""

    __json_extra__ = ("kind",)

    id: int
    section: str
    baseline: tuple[str, ...]
    """Unmatched baseline node names, in dump order."""
    candidate: tuple[str, ...]
    frontier: tuple[tuple[str, str], ...]
    """Matched (baseline, candidate) pairs adjacent to the region, sorted."""
    baseline_lines: tuple[str, ...] = field(default=(), metadata=json_omit())
    """The SSA lines of the region in the baseline dump (for before/after snippets)."""
    candidate_lines: tuple[str, ...] = field(default=(), metadata=json_omit())
    new: bool = False
    """True at the transform where the region first appears (a node of it had a counterpart before)."""

    @property
    def kind(self) -> UnmatchedReason:
        """``rewritten`` when both sides hold nodes, else ``removed`` / ``added``."""
        if self.baseline and self.candidate:
            return UnmatchedReason.REWRITTEN
        return UnmatchedReason.REMOVED if self.baseline else UnmatchedReason.ADDED
