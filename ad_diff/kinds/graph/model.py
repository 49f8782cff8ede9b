"""Frozen dataclasses for graph dumps (``AD_DUMP_GRAPHS_DIR``) and their cross-run comparison.

Parsing yields :class:`GraphDump` (one file); node alignment yields :class:`NodePair` / :class:`Unmatched` /
:class:`Region`; the analysis of both runs' dump folders yields :class:`GraphAnalysis`: measurements only,
which ``rules`` turn into findings and reports render. The JSON form comes from ``ad_diff.core.jsonable``
through the field metadata below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Any

from ad_diff.core.jsonable import json_capped, json_first, json_omit, json_pairs
from ad_diff.core.model import BASELINE, Finding, RunId

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


def dump_key(stage: str, transform: str, occurrence: int = 0) -> str:
    """``stage/transform``, plus ``#occurrence`` when the transform repeats: the name of one dump pair."""
    return f"{stage}/{transform}" + (f"#{occurrence}" if occurrence else "")


def split_dump_key(key: str) -> tuple[str, str, int]:
    """``(stage, transform, occurrence)`` of a :func:`dump_key`."""
    stage, _, rest = key.partition("/")
    transform, _, occ = rest.partition("#")
    return stage, transform, int(occ) if occ.isdigit() else 0


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


class MetaChangeKind(str, Enum):
    """How the metadata of an aligned node differs between the runs."""

    LOST = "lost"
    """Known in the baseline, unknown in the candidate (``? : N/A``, ``? : unknown``): metadata loss."""
    CHANGED = "changed"
    """Known in both but another dtype or concrete shape: a shape change, not a loss."""
    GAINED = "gained"
    """Unknown in the baseline, known in the candidate."""


class HintKind(str, Enum):
    """What a root-cause hint rests on (see :mod:`ad_diff.kinds.graph.hints`)."""

    METADATA_LOST_UPSTREAM = "metadata_lost_upstream"
    OP_FORM_CHANGED_UPSTREAM = "op_form_changed_upstream"
    NO_UPSTREAM_DIFFERENCE = "no_upstream_difference"


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


@dataclass(frozen=True, slots=True)
class Coverage:
    """Share of nodes and node arguments that carry shape/dtype metadata in one dump."""

    __json_extra__ = ("nodes", "args")

    nodes_known: int
    nodes_total: int
    args_known: int
    args_total: int

    @property
    def nodes(self) -> float:
        """Share of nodes (placeholders, calls) with metadata, rounded to 6 digits; 1.0 for an empty graph."""
        return round(self.nodes_known / self.nodes_total, 6) if self.nodes_total else 1.0

    @property
    def args(self) -> float:
        """Share of ``%name`` arguments with metadata, rounded to 6 digits; 1.0 when there are none."""
        return round(self.args_known / self.args_total, 6) if self.args_total else 1.0

    @property
    def nodes_unknown(self) -> int:
        """Nodes without metadata."""
        return self.nodes_total - self.nodes_known

    def nodes_below(self, other: Coverage) -> bool:
        """True if this node share is strictly lower than ``other``'s (exact fractions, not rounded)."""
        def share(c: Coverage) -> Fraction:
            return Fraction(c.nodes_known, c.nodes_total) if c.nodes_total else Fraction(1)

        return share(self) < share(other)


@dataclass(frozen=True, slots=True)
class Coverages:
    """Metadata coverage of one transform's dumps, and of each run's previous dump."""

    baseline: Coverage | None = None
    candidate: Coverage | None = None
    baseline_before: Coverage | None = None
    """Coverage of the run's previous dump (``None`` for its first dump)."""
    candidate_before: Coverage | None = None


@dataclass(frozen=True, slots=True)
class MetaChange:
    """An aligned node whose metadata differs between the runs."""

    baseline: str
    candidate: str
    before: str
    """Baseline ``shape : dtype``."""
    after: str
    kind: MetaChangeKind


@dataclass(frozen=True, slots=True)
class RunDelta:
    """What one transform did to one run's graph (previous dump vs this dump, by node name)."""

    added: int
    removed: int
    meta_changed: int
    changed: bool
    """True if the dumps differ in anything at all (nodes, args or metadata)."""
    removed_names: tuple[str, ...] = field(default=(), metadata=json_omit())
    first: bool = False
    """True for the run's first dump (no previous graph to compare with; counts are then 0)."""


@dataclass(frozen=True, slots=True)
class Deltas:
    """What one transform did to each run's graph (``None`` where that run has no readable dump)."""

    baseline: RunDelta | None = None
    candidate: RunDelta | None = None

    def of(self, run: str) -> RunDelta | None:
        """The delta of ``run``."""
        return self.baseline if run == BASELINE else self.candidate


@dataclass(frozen=True, slots=True)
class Hint:
    """A root-cause hint for a match loss, with the evidence it rests on."""

    kind: HintKind
    cause_transform: str
    cause_stage: str
    message: str
    nodes: tuple[str, ...] = ()
    """Candidate nodes (or baseline nodes, for op form changes) the evidence is about."""


MAX_ITEMS = 500
"""Most unmatched nodes / regions / rewired pairs / meta changes listed per transform in the JSON report
(counts are always exact)."""


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
    pairs_by_kind: tuple[tuple[MatchKind, int], ...] = field(default=(), metadata=json_pairs())
    unmatched: tuple[Unmatched, ...] = field(default=(), metadata=json_capped(MAX_ITEMS))
    regions: tuple[Region, ...] = field(default=(), metadata=json_first(MAX_ITEMS))
    rewired: tuple[tuple[str, str], ...] = field(default=(), metadata=json_capped(MAX_ITEMS))
    """Aligned pairs whose arguments differ (inputs not aligned to each other, or literals changed)."""
    coverage: Coverages = Coverages()
    meta_changes: tuple[MetaChange, ...] = field(default=(), metadata=json_capped(MAX_ITEMS))
    new_meta_changes: tuple[MetaChange, ...] = field(default=(), metadata=json_capped(MAX_ITEMS))
    """Metadata changes (losses included) first seen at this transform."""
    delta: Deltas = Deltas()
    hints: tuple[Hint, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The :func:`dump_key` of this transform."""
        return dump_key(self.stage, self.transform, self.occurrence)

    @property
    def two_sided(self) -> bool:
        """Both runs have a readable dump for this transform."""
        return self.baseline_file is not None and self.candidate_file is not None

    @property
    def new_regions(self) -> tuple[int, ...]:
        """Ids of the regions first seen at this transform."""
        return tuple(r.id for r in self.regions if r.new)


@dataclass(frozen=True, slots=True)
class UnreadableDump:
    """A dump file that could not be parsed (its transform is compared on the log only)."""

    run: RunId
    stage: str
    transform: str
    occurrence: int
    error: str


@dataclass(frozen=True, slots=True)
class GraphAnalysis:
    """Everything the graph dumps of two runs measure, in pipeline order (no verdicts: see ``rules``)."""

    __json_extra__ = ("findings",)

    baseline_dir: Path
    candidate_dir: Path
    transforms: tuple[TransformGraphDiff, ...]
    only_baseline: tuple[str, ...]
    """:func:`dump_key` of the dumps that exist in the baseline only."""
    only_candidate: tuple[str, ...]
    first_divergence: str | None
    """:func:`dump_key` of the first transform whose graphs differ in structure."""
    first_divergence_detail: str | None
    formats: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    unreadable: tuple[UnreadableDump, ...] = field(default=(), metadata=json_omit())
    classified: tuple[Finding, ...] = field(default=(), metadata=json_omit())
    """The graph findings the rules drew from this analysis (set in the explain stage, for the JSON)."""

    @property
    def findings(self) -> list[dict[str, Any]]:
        """The graph findings as the section's JSON lists them (the report's ``findings`` are complete)."""
        return [{"code": f.code, "category": f.category, "severity": f.severity, "message": f.message,
                 "stage": f.stage, "transform": f.transform, "evidence": dict(f.evidence)}
                for f in self.classified]
