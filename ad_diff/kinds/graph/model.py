"""Frozen dataclasses for graph dumps (``AD_DUMP_GRAPHS_DIR``) and their cross-run comparison.

Parsing yields :class:`GraphDump` (one file); node alignment yields :class:`NodePair` / :class:`Unmatched` /
:class:`Region`; the analysis of both runs' dump folders yields :class:`GraphAnalysis`, which reports render and
which carries the graph findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ad_diff.core.model import Finding

#: dtype texts meaning "this node/argument has no ``meta["val"]``" (FORMATS.md 2.3: ``N/A`` on call lines,
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
    """One SSA line: a placeholder, a call (function/method/module: the dump cannot tell them apart) or output."""

    name: str
    op: str
    """``placeholder``, ``call`` or ``output``."""
    target: str
    """``aten.add.Tensor``, ``<built-in function getitem>``, ``view``; the name for placeholders; ``output``."""
    args: tuple[Arg, ...]
    meta: NodeMeta | None
    """``None`` only for the output line."""
    line: int
    """1-based line number in the dump file."""

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


@dataclass(frozen=True, slots=True)
class NodePair:
    """A baseline node aligned with a candidate node, and how the match was found."""

    baseline: str
    candidate: str
    match_kind: str
    """``exact`` (same name, structure confirmed), ``renamed`` (counter suffix differs), ``structural``
    (Weisfeiler-Lehman signature), ``sequence`` (order within a scope) or ``identical`` (byte-identical dumps)."""
    section: str = "(root)"


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A node of one run that has no counterpart in the other run."""

    run: str
    """``baseline`` or ``candidate``."""
    name: str
    target: str
    reason: str
    """``rewritten`` (part of a region with nodes on both sides), ``removed`` (baseline only), ``added``
    (candidate only) or ``section_missing``."""
    section: str = "(root)"
    region: int | None = None


@dataclass(frozen=True, slots=True)
class Region:
    """A rewritten region: unmatched nodes of both runs bounded by the same matched frontier."""

    id: int
    section: str
    baseline: tuple[str, ...]
    """Unmatched baseline node names, in dump order."""
    candidate: tuple[str, ...]
    frontier: tuple[tuple[str, str], ...]
    """Matched (baseline, candidate) pairs adjacent to the region, sorted."""
    baseline_lines: tuple[str, ...] = ()
    """The SSA lines of the region in the baseline dump (for before/after snippets)."""
    candidate_lines: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """``rewritten`` when both sides hold nodes, else ``removed`` / ``added``."""
        if self.baseline and self.candidate:
            return "rewritten"
        return "removed" if self.baseline else "added"


@dataclass(frozen=True, slots=True)
class Coverage:
    """Share of nodes and node arguments that carry shape/dtype metadata in one dump."""

    nodes_known: int
    nodes_total: int
    args_known: int
    args_total: int

    @property
    def nodes(self) -> float:
        """Share of nodes (placeholders and calls) with metadata; 1.0 for an empty graph."""
        return self.nodes_known / self.nodes_total if self.nodes_total else 1.0

    @property
    def args(self) -> float:
        """Share of ``%name`` arguments with metadata; 1.0 when there are none."""
        return self.args_known / self.args_total if self.args_total else 1.0

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "nodes_known": self.nodes_known,
            "nodes_total": self.nodes_total,
            "args_known": self.args_known,
            "args_total": self.args_total,
            "nodes": round(self.nodes, 6),
            "args": round(self.args, 6),
        }


@dataclass(frozen=True, slots=True)
class MetaChange:
    """An aligned node whose metadata differs between the runs."""

    baseline: str
    candidate: str
    before: str
    """Baseline ``shape : dtype``."""
    after: str
    kind: str
    """``lost`` (known in baseline, unknown in candidate), ``changed`` or ``gained``."""


@dataclass(frozen=True, slots=True)
class RunDelta:
    """What one transform did to one run's graph (previous dump vs this dump, by node name)."""

    added: int
    removed: int
    meta_changed: int
    changed: bool
    """True if the dumps differ in anything at all (nodes, args or metadata)."""
    removed_names: tuple[str, ...] = ()
    first: bool = False
    """True for the run's first dump (no previous graph to compare with; counts are then 0)."""


@dataclass(frozen=True, slots=True)
class Hint:
    """A root-cause hint for a match loss, with the evidence it rests on."""

    kind: str
    """``metadata_lost_upstream`` or ``op_form_changed_upstream``."""
    cause_transform: str
    cause_stage: str
    message: str
    nodes: tuple[str, ...] = ()
    """Candidate nodes (or baseline nodes, for op form changes) the evidence is about."""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "kind": self.kind,
            "cause_transform": self.cause_transform,
            "cause_stage": self.cause_stage,
            "message": self.message,
            "nodes": list(self.nodes),
        }


@dataclass(frozen=True, slots=True)
class TransformGraphDiff:
    """Cross-run comparison of the dumps written after one transform."""

    stage: str
    transform: str
    occurrence: int
    baseline_file: str | None
    candidate_file: str | None
    identical: bool
    """Byte-identical dumps (alignment skipped)."""
    structure_equal: bool
    """Every node aligned and every aligned node reads the aligned inputs and the same literals."""
    pairs_by_kind: tuple[tuple[str, int], ...] = ()
    unmatched: tuple[Unmatched, ...] = ()
    regions: tuple[Region, ...] = ()
    rewired: tuple[tuple[str, str], ...] = ()
    """Aligned pairs whose arguments differ (inputs not aligned to each other, or literals changed)."""
    coverage_baseline: Coverage | None = None
    coverage_candidate: Coverage | None = None
    meta_changes: tuple[MetaChange, ...] = ()
    new_meta_losses: tuple[MetaChange, ...] = ()
    """Losses first seen at this transform."""
    delta_baseline: RunDelta | None = None
    delta_candidate: RunDelta | None = None
    new_regions: tuple[int, ...] = ()
    """Ids of regions with a node that had a counterpart at the previous transform (first seen here)."""
    coverage_baseline_before: Coverage | None = None
    """Coverage of the run's previous dump (``None`` for its first dump)."""
    coverage_candidate_before: Coverage | None = None
    hints: tuple[Hint, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphAnalysis:
    """Everything the graph dumps of two runs say, in pipeline order."""

    baseline_dir: Path
    candidate_dir: Path
    transforms: tuple[TransformGraphDiff, ...]
    only_baseline: tuple[str, ...]
    """``stage/transform#occurrence`` keys whose dump exists in the baseline only."""
    only_candidate: tuple[str, ...]
    first_divergence: str | None
    """``stage/transform#occurrence`` of the first transform whose graphs differ in structure."""
    first_divergence_detail: str | None
    findings: tuple[Finding, ...]
    formats: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """JSON form (node-level data included); see ``ad_diff.report.graph_section``."""
        from ad_diff.kinds.graph.serialize import analysis_to_json

        return analysis_to_json(self)
