"""Frozen dataclasses of the fusion-candidate scan and the kernel lookup (JSON: docs/candidates.md)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

SCHEMA_VERSION = 3
"""2: evidence carries ``via`` and ``note``, lookups carry ``pattern_checks``, report ``source_notes``;
3: candidates carry ``bytes_saved``, ``bytes_unknown`` and ``nested`` (ranked by what a fusion saves)."""


class LookupStatus(str, Enum):
    """Outcome of the existing-kernel lookup for one candidate."""

    FOUND = "found"
    NOT_FOUND = "not_found"
    NOT_SEARCHED = "not_searched"
    """No source tree was given: nothing is claimed either way."""


class Recommendation(str, Enum):
    """What to do with a candidate."""

    USE_EXISTING_KERNEL = "use_existing_kernel"
    NEEDS_TRITON_FALLBACK = "needs_triton_fallback"
    DEFER = "defer"


@dataclass(frozen=True, slots=True)
class Instance:
    """One occurrence of a pattern in the dump."""

    section: str
    """GraphModule section of the dump (``(root)`` for single-module dumps)."""
    nodes: tuple[str, ...]
    """Node names as written in the dump, in dump order."""
    layer: int | None
    """Decoder layer index read from the node or parameter names (``model_layers_3_...``); ``None`` outside
    the layer stack or when the names carry no index."""
    line: int
    """Dump line of the first node."""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"section": self.section, "nodes": list(self.nodes), "layer": self.layer, "line": self.line}


@dataclass(frozen=True, slots=True)
class Tie:
    """Where a transform's module names an op: the second half of an op's evidence."""

    transform: str
    role: str
    """``inserts`` (``graph.call_function``, a replacement function), ``backend`` (a value of a backend
    map) or ``matches`` (``is_op``, a comparison, a search pattern): docs/candidates.md."""
    path: str
    line: int
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "transform": self.transform,
            "role": self.role,
            "path": self.path,
            "line": self.line,
            "detail": self.detail,
        }

    @property
    def text(self) -> str:
        """``backend map key 'flashinfer' of fuse_rmsnorm at path:line``."""
        what = self.detail or self.role
        return f"{what} of {self.transform} at {self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Evidence:
    """A registration in the TensorRT-LLM source tree that covers a pattern."""

    kind: str
    """``custom_op`` (``torch.library.custom_op``), ``library_define`` (``torch.library.define`` /
    ``Library.define``), ``transform`` (``TransformRegistry.register``) or ``op_reference`` (an op a
    transform's module names whose registration is not in the tree: C++, or generated)."""
    symbol: str
    """``auto_deploy::torch_rmsnorm`` for ops, the registry key for transforms."""
    path: str
    """File relative to the source tree root, POSIX separators."""
    line: int
    matched_by: str
    """``source`` (a found transform's module names the op: see ``via``), ``table`` (a known op/transform
    name of this family: :data:`~ad_diff.candidates.lookup.KNOWN`) or ``op_tokens`` (the name
    contains every distinctive op of the pattern)."""
    via: tuple[Tie, ...] = ()
    """For ops: the found transforms whose text names this op, with the role the text shows."""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "kind": self.kind,
            "symbol": self.symbol,
            "path": self.path,
            "line": self.line,
            "matched_by": self.matched_by,
            "via": [t.to_json() for t in self.via],
            "note": self.note,
        }

    @property
    def where(self) -> str:
        """``path:line symbol``."""
        return f"{self.path}:{self.line} {self.symbol}"


@dataclass(frozen=True, slots=True)
class PatternCheck:
    """An upstream search pattern beside this graph's instance: "exists, but did not match this graph"."""

    transform: str
    function: str | None
    """The search pattern function, ``None`` when the transform registers none."""
    path: str
    line: int
    status: str
    """``differs`` (the ops differ), ``same_ops`` (same ops: the text cannot say why it did not match),
    ``unreadable`` (the function could not be read with confidence) or ``no_pattern`` (the transform's
    matcher is code, not a registered search pattern)."""
    message: str
    upstream_ops: tuple[str, ...] = ()
    graph_ops: tuple[str, ...] = ()
    only_upstream: tuple[str, ...] = ()
    only_graph: tuple[str, ...] = ()
    upstream_formula: str = ""
    graph_formula: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "transform": self.transform,
            "function": self.function,
            "path": self.path,
            "line": self.line,
            "status": self.status,
            "message": self.message,
            "upstream_ops": list(self.upstream_ops),
            "graph_ops": list(self.graph_ops),
            "only_upstream": list(self.only_upstream),
            "only_graph": list(self.only_graph),
            "upstream_formula": self.upstream_formula,
            "graph_formula": self.graph_formula,
        }


@dataclass(frozen=True, slots=True)
class KernelLookup:
    """Result of searching the source tree for an op or transform covering a pattern."""

    status: LookupStatus
    evidence: tuple[Evidence, ...] = ()
    searched: tuple[str, ...] = ()
    """Names looked for (table names and op tokens), for the record."""
    pattern_checks: tuple[PatternCheck, ...] = ()
    """One per search pattern of every found transform (and one per found transform without any)."""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "status": self.status.value,
            "evidence": [e.to_json() for e in self.evidence],
            "searched": list(self.searched),
            "pattern_checks": [c.to_json() for c in self.pattern_checks],
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A repeated unfused pattern, with where it occurs and what to do about it."""

    name: str
    """Short name, unique in one report (``rmsnorm``, ``swiglu``, ``gemm_epilogue_2``)."""
    family: str
    """Pattern family: ``rmsnorm``, ``swiglu``, ``silu_mul``, ``gemm_epilogue``, ``attention_layout`` ..."""
    pattern: tuple[str, ...]
    """Op targets of one instance, in dump order."""
    signature: str
    """Canonical form (targets, in-pattern wiring, literals; no node names) that all instances share."""
    instances: tuple[Instance, ...]
    nodes_removed: int
    """Nodes a fusion would remove over all instances."""
    lookup: KernelLookup
    recommendation: Recommendation
    strengths: tuple[str, ...] = ()
    weaknesses: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()
    description: str = ""
    bytes_saved: int = 0
    """Bytes of intermediate tensors a fusion would not write, all instances, symbolic sizes at the nominal
    size (docs/candidates.md)."""
    bytes_unknown: int = 0
    """Intermediate nodes whose size the dump does not give (counted 0 in :attr:`bytes_saved`)."""
    nested: tuple[tuple[str, int, int], ...] = ()
    """Fragments inside this block, listed under it rather than beside it: ``(family, instances, nodes
    removed)``."""

    @property
    def count(self) -> int:
        """Number of instances (recurrence)."""
        return len(self.instances)

    @property
    def layers(self) -> tuple[int, ...]:
        """Distinct layer indices of the instances, sorted."""
        return tuple(sorted({i.layer for i in self.instances if i.layer is not None}))

    @property
    def outside_layers(self) -> int:
        """Instances with no layer index (embedding side, final norm, unnamed graphs)."""
        return sum(1 for i in self.instances if i.layer is None)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "family": self.family,
            "description": self.description,
            "pattern": list(self.pattern),
            "signature": self.signature,
            "count": self.count,
            "layers": list(self.layers),
            "outside_layers": self.outside_layers,
            "nodes_per_instance": len(self.pattern),
            "nodes_removed": self.nodes_removed,
            "bytes_saved": self.bytes_saved,
            "bytes_unknown": self.bytes_unknown,
            "nested": [{"family": f, "count": n, "nodes_removed": r} for f, n, r in self.nested],
            "instances": [i.to_json() for i in self.instances],
            "lookup": self.lookup.to_json(),
            "recommendation": self.recommendation.value,
            "strengths": list(self.strengths),
            "weaknesses": list(self.weaknesses),
            "risks": list(self.risks),
        }


@dataclass(frozen=True, slots=True)
class CandidateReport:
    """Everything ``ad-diff candidates`` found in one dump."""

    run: str
    dump: str
    """The dump file scanned."""
    transform: str
    stage: str
    nodes_scanned: int
    candidates: tuple[Candidate, ...]
    """Ranked: most nodes removed first, then recurrence, then name."""
    source_tree: str | None
    """``--trtllm-src`` as given, ``None`` when the lookup was not done."""
    notes: tuple[str, ...] = ()
    source_notes: tuple[str, ...] = ()
    """What the source read left out (limits, unreadable files): a ``not_found`` is weaker then."""

    def get(self, name: str) -> Candidate | None:
        """The candidate called ``name`` (or, failing that, the first of family ``name``)."""
        for c in self.candidates:
            if c.name == name:
                return c
        return next((c for c in self.candidates if c.family == name), None)

    def to_json(self) -> dict[str, Any]:
        """JSON form (``schema_version`` first)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "candidates",
            "run": self.run,
            "dump": self.dump,
            "transform": self.transform,
            "stage": self.stage,
            "nodes_scanned": self.nodes_scanned,
            "source_tree": self.source_tree,
            "lookup_done": self.source_tree is not None,
            "candidates": [c.to_json() for c in self.candidates],
            "notes": list(self.notes),
            "source_notes": list(self.source_notes),
        }
