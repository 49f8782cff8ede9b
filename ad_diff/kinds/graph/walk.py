"""What the graph analysis remembers between transforms: each run's latest dump and the cross-run facts
that tell a *new* difference from one inherited from an earlier transform (names are stable within a run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.kinds.graph.aligned import AlignedSection
from ad_diff.kinds.graph.diff import Coverage, MetaChangeKind, TransformGraphDiff
from ad_diff.kinds.graph.measure import DumpAlignment
from ad_diff.kinds.graph.model import GraphDump

RegionSig = tuple[tuple[str, ...], tuple[str, ...]]
"""A region as its sorted baseline and candidate targets: the same region after a rename within a run."""


@dataclass
class RunState:
    """What is remembered of one run between transforms."""

    dump: GraphDump | None = None
    digest: bytes = b""
    cover: Coverage | None = None
    layers: int | None = None
    """Decoder layers its first readable dump holds (by weight names), when they say."""
    sizes: dict[str, int] | None = None
    """Vocabulary and hidden size its first readable dump's embedding shows (:func:`.identity.sizes_of`)."""
    simple: bool | None = None
    """Whether the latest dump is simple (:class:`~ad_diff.kinds.graph.measure.NodeTable`; ``None`` until a
    table of it was made)."""


@dataclass
class CrossState:
    """Cross-run facts carried forward to tell *new* differences from inherited ones."""

    lost_since: dict[str, str] = field(default_factory=dict)
    """Candidate node -> transform key where its metadata loss first appeared."""
    changed_since: dict[str, str] = field(default_factory=dict)
    unmatched_b_since: dict[str, str] = field(default_factory=dict)
    """Baseline node -> transform key where it first had no counterpart."""
    unmatched_c_since: dict[str, str] = field(default_factory=dict)
    region_sigs: set[RegionSig] = field(default_factory=set)
    """Signatures of the previous two-sided transform's regions."""
    pending_sigs: set[RegionSig] = field(default_factory=set)
    alignments: Sequence[AlignedSection] | None = None
    """Alignment of the previous two-sided transform (``None`` when it was byte-identical)."""
    identical_prev: bool = False
    pending: Sequence[AlignedSection] | None = None
    """Alignment of the current transform, promoted to ``alignments`` by :func:`advance`."""
    memo_key: tuple[bytes, bytes] | None = None
    """Body digests of the last aligned pair; the same pair again reuses ``memo`` (``None``: no reuse)."""
    memo: DumpAlignment | None = None
    last_key: tuple[bytes, bytes] | None = None
    """Body digests of the latest pair aligned (reused or not); ``last`` is its alignment."""
    last: DumpAlignment | None = None
    covers: dict[bytes, Coverage] | None = None
    """Coverage by body digest (``None``: no reuse)."""


def advance(cross: CrossState, d: TransformGraphDiff) -> None:
    """Carry the current transform's cross-run facts forward (names are stable within one run)."""
    key = d.key
    lost = {m.candidate for m in d.meta_changes if m.kind is MetaChangeKind.LOST}
    changed = {m.candidate for m in d.meta_changes if m.kind is MetaChangeKind.CHANGED}
    cross.lost_since = {n: cross.lost_since.get(n, key) for n in lost}
    cross.changed_since = {n: cross.changed_since.get(n, key) for n in changed}
    cross.unmatched_b_since = {
        u.name: cross.unmatched_b_since.get(u.name, key) for u in d.unmatched if u.run == BASELINE
    }
    cross.unmatched_c_since = {
        u.name: cross.unmatched_c_since.get(u.name, key) for u in d.unmatched if u.run == CANDIDATE
    }
    cross.region_sigs, cross.pending_sigs = (set(), set()) if d.identical else (cross.pending_sigs, set())
    cross.alignments = None if d.identical else cross.pending
    cross.identical_prev = d.identical
    cross.pending = None
