"""What the comparison of two runs' dump folders measures, transform by transform: metadata coverage and
changes, per-run deltas, rewritten regions, root-cause hints, why a dump has no counterpart. Measurements
only: ``classify`` draws the findings. The JSON form comes from ``ad_diff.core.jsonable`` through the field
metadata below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Any

from ad_diff.core.jsonable import json_capped, json_first, json_omit, json_pairs
from ad_diff.core.model import BASELINE, Finding, RunId
from ad_diff.discover.dumps import FolderScan
from ad_diff.kinds.graph.model import MatchKind, Region, Unmatched, dump_key


class MetaChangeKind(str, Enum):
    """How the metadata of an aligned node differs between the runs."""

    LOST = "lost"
    """Known in the baseline, unknown in the candidate (``? : N/A``, ``? : unknown``): metadata loss."""
    CHANGED = "changed"
    """Known in both but another dtype or concrete shape: a shape change, not a loss."""
    GAINED = "gained"
    """Unknown in the baseline, known in the candidate."""


class Absence(str, Enum):
    """Why one run has no (readable) dump for a transform the other run dumped."""

    NOT_RUN = "not_run"
    """The run's log has no record of the transform: it ran in the other run only (added or removed)."""
    NOT_REACHED = "not_reached"
    """The run stopped before (or inside) the transform: its log says so, and the log's findings report it."""
    RESTORED = "restored"
    """The run restored a cached graph (AD's pipeline or graph cache) past the transform: restored, not
    compared (never a loss)."""
    CUT = "cut"
    """The log shows the transform ran, after the run's last dump: the dump folder stops early."""
    LOST = "lost"
    """The log shows the transform ran and the dump numbering has a hole where its dump belongs."""
    NOT_WRITTEN = "not_written"
    """The log shows the transform ran but no dump was written (no GraphModule to dump at that stage)."""
    UNREADABLE = "unreadable"
    """The dump file exists but could not be parsed."""


class HintKind(str, Enum):
    """What a root-cause hint rests on (see :mod:`ad_diff.kinds.graph.hints`)."""

    METADATA_LOST_UPSTREAM = "metadata_lost_upstream"
    OP_FORM_CHANGED_UPSTREAM = "op_form_changed_upstream"
    NO_UPSTREAM_DIFFERENCE = "no_upstream_difference"


@dataclass(frozen=True, slots=True)
class Coverage:
    """Share of nodes and node arguments that carry shape/dtype metadata in one dump."""

    __json_extra__ = ("nodes", "args")

    nodes_known: int
    nodes_total: int
    args_known: int
    args_total: int
    by_target: tuple[tuple[str, int, int], ...] = field(default=(), metadata=json_omit())
    """``(target, nodes with metadata, nodes without)`` of the call nodes, by target (sorted)."""

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
    replaced: int | None = None
    """For a transform that writes one known op per match (:data:`ad_diff.core.known.ONE_OP_PER_MATCH`): the
    instances of those ops its dump added (each op's increase, summed); ``None`` otherwise."""
    replaced_ops: tuple[str, ...] = ()
    """The ops of :attr:`replaced` whose count rose."""


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
    missing: Absence | None = None
    """Why the run without a dump has none (``None`` when both runs have a readable dump)."""
    moved: tuple[str, str] | None = None
    """For a transform the runs ran in another order: the dump key before it in each run (``-`` if first)."""
    bodies: tuple[bytes, bytes] | None = field(default=None, metadata=json_omit())
    """The digests of both dumps' bodies (what follows the two header lines), when both were read: two
    transforms with equal ``bodies`` compared the same two graphs (the accounting reads such a pair once)."""

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
    problem: str = ""
    """The error without file and line: dumps of one run failing alike are reported once."""
    file: str = ""


@dataclass(frozen=True, slots=True)
class FinalGraphs:
    """What the last dump of each run says about node names, for the tensor kind (per-node captures are
    named after the baseline's nodes): the baseline's graph order and the candidate's renamed nodes."""

    baseline_file: str
    """File name of the baseline's last dump."""
    order: tuple[str, ...]
    """The baseline's node names in graph order (every section, dump order)."""
    renamed: tuple[tuple[str, str], ...]
    """``(candidate name, baseline name)`` of the nodes the alignment paired under different names."""
    moe: tuple[Any, ...] = ()
    """The baseline's MoE layers and their routers (:class:`ad_diff.core.moe.MoeRouting`), for routing
    flips."""


@dataclass(frozen=True, slots=True)
class GraphAnalysis:
    """Everything the graph dumps of two runs measure, in pipeline order (no verdicts: see ``rules``)."""

    __json_extra__ = ("findings",)

    baseline_dir: Path
    candidate_dir: Path
    transforms: tuple[TransformGraphDiff, ...]
    only_baseline: tuple[str, ...]
    """:func:`dump_key` of the transforms that ran in the baseline only (dumps missing for another reason,
    restored, cut short or not reached, say so in their ``missing``)."""
    only_candidate: tuple[str, ...]
    first_divergence: str | None
    """:func:`dump_key` of the first transform whose graphs differ in structure."""
    first_divergence_detail: str | None
    formats: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    unreadable: tuple[UnreadableDump, ...] = field(default=(), metadata=json_omit())
    classified: tuple[Finding, ...] = field(default=(), metadata=json_omit())
    """The graph findings the rules drew from this analysis (set in the explain stage, for the JSON)."""
    final: FinalGraphs | None = field(default=None, metadata=json_omit())
    layers: tuple[int | None, int | None] = (None, None)
    """Decoder layers the baseline's and the candidate's first readable dump hold, by the layer numbers in
    their weight names (``model_layers_3_...``); ``None`` where no name carries one."""
    sizes: tuple[dict[str, int], dict[str, int]] = field(default=({}, {}), metadata=json_omit())
    """Vocabulary and hidden size each run's first readable dump shows (empty where it shows none)."""
    """Names in the runs' last dumps (``None`` unless both runs' last dump files were read)."""
    listings: tuple[FolderScan, FolderScan] | None = field(default=None, metadata=json_omit())
    """The baseline's and the candidate's ``graphs/`` listings the analysis read (for ADI002-005)."""

    @property
    def findings(self) -> list[dict[str, Any]]:
        """The graph findings as the section's JSON lists them (the report's ``findings`` are complete)."""
        return [{"code": f.code, "category": f.category, "severity": f.severity, "message": f.message,
                 "stage": f.stage, "transform": f.transform, "evidence": dict(f.evidence)}
                for f in self.classified]
