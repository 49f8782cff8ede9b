"""Turn a mined pattern group and its kernel lookup into a recommendation with strengths, weaknesses, risks.

The rules are few and stated in the text they produce, so a reviewer can check the reasoning:

- lookup ``not_searched`` -> ``defer`` (no claim about kernels without a source tree);
- lookup ``found`` -> ``use_existing_kernel``; an upstream search pattern whose ops differ from the graph's
  is named as the weakness (the model code or the pattern has to change), one that could not be read is a
  risk ("not compared");
- lookup ``not_found`` -> ``needs_triton_fallback`` for pointwise/reduction regions worth it (at least
  :data:`MIN_GAIN` nodes removed and seen at least twice), ``defer`` otherwise (layout glue is a transform's
  job, not a kernel's; small gains are not worth a new kernel; a MoE block needs a MoE kernel, not a
  pointwise fallback).
"""

from __future__ import annotations

from collections.abc import Mapping

from ad_diff.candidates.lookup import KNOWN
from ad_diff.candidates.model import Candidate, KernelLookup, LookupStatus, Recommendation
from ad_diff.candidates.scan import Group
from ad_diff.core.graphops import op_name

MIN_GAIN = 4
"""Fewest nodes removed (all instances) for which a new Triton kernel is recommended."""

_REDUCTIONS = {"mean", "sum", "amax", "softmax", "_softmax", "var", "linalg_vector_norm"}


def _where(g: Group) -> str:
    layers = sorted({i.layer for i in g.instances if i.layer is not None})
    out = sum(1 for i in g.instances if i.layer is None)
    text = f"{len(g.instances)} instance(s)"
    if layers:
        text += f" in {len(layers)} layer(s)"
    if out:
        text += f", {out} outside the layer stack"
    return text


def human_bytes(n: int) -> str:
    """``1536`` -> ``1.5 KiB``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _saving(g: Group) -> list[str]:
    """The strength sentences saying what a fusion saves (nodes, bytes, fragments it subsumes)."""
    text = f"{_where(g)}; fusing removes {g.removed_per_instance} node(s) each, {g.nodes_removed} in all"
    if g.bytes_saved:
        text += f", and writes {human_bytes(g.bytes_saved)} less (intermediates at the nominal size)"
    out = [text]
    if g.bytes_unknown:
        out.append(f"{g.bytes_unknown} intermediate node(s) of unknown size are not counted in the bytes")
    if g.nested:
        out.append(
            "subsumes the fragments inside it: "
            + ", ".join(f"{f} x{n} ({r} node(s))" for f, n, r in g.nested)
        )
    return out


def _found(lk: KernelLookup, strengths: list[str], weaknesses: list[str], risks: list[str]) -> None:
    """Sentences for a ``found`` lookup."""
    kernels = [e for e in lk.evidence if e.kind in ("custom_op", "library_define")]
    passes = [e for e in lk.evidence if e.kind == "transform"]
    unregistered = sorted({e.symbol for e in lk.evidence if e.kind == "op_reference"})
    if unregistered:
        weaknesses.append(
            "named by a found transform but registered nowhere in the tree's Python text: "
            + ", ".join(unregistered)
        )
    if kernels:
        strengths.append("existing op " + ", ".join(sorted({e.symbol for e in kernels})) + " covers it")
    else:
        weaknesses.append(
            "no op registration found, only transform(s): the kernel may live in C++ or a "
            "library; check what the transform emits"
        )
    if passes:
        strengths.append(
            "transform(s) " + ", ".join(sorted({e.symbol for e in passes})) + " already target it"
        )
    elif kernels:
        weaknesses.append("no transform found that rewrites this pattern into the op: a matcher is needed")
    if all(e.matched_by == "op_tokens" for e in lk.evidence):
        risks.append(
            "matched by op names only: confirm the op computes exactly this pattern (eps, casts, layout)"
        )
    for c in lk.pattern_checks:
        (weaknesses if c.status in ("differs", "same_ops") else risks).append(c.message)


def _not_found(g: Group, complete: bool, strengths: list[str], weaknesses: list[str]) -> Recommendation:
    """The recommendation and sentences for a ``not_found`` lookup."""
    if not complete:
        weaknesses.append("the source tree was only partly read (see the notes): an op may exist unread")
    if g.family in _BLOCKS:
        weaknesses.append(_BLOCKS[g.family])
        return Recommendation.DEFER
    if g.family == "attention_layout":
        weaknesses.append("layout glue, not arithmetic: a layout transform (not a kernel) should remove it")
        return Recommendation.DEFER
    if g.nodes_removed < MIN_GAIN or len(g.instances) < 2:
        weaknesses.append(f"small gain ({g.nodes_removed} node(s) in all): not worth a new kernel on its own")
        return Recommendation.DEFER
    strengths.append("pointwise/reduction region: a Triton kernel is straightforward to write and test")
    weaknesses.append("no existing op or transform found: a new op, matcher and tests are needed")
    return Recommendation.NEEDS_TRITON_FALLBACK


_BLOCKS = {
    "moe": "no fused MoE op or transform found: a MoE kernel (routing, grouped GEMMs) is not a pointwise "
    "Triton fallback",
    "attention": "no attention op or transform found: an attention kernel (online softmax, masks, sinks) is "
    "not a pointwise Triton fallback",
}


def _states(g: Group, lk: KernelLookup, states: Mapping[str, str]) -> list[str]:
    """Weaknesses from the run's log: the family's transforms disabled or matching nothing."""
    out = []
    found_transforms = {e.symbol for e in lk.evidence if e.kind == "transform"}
    for t in sorted(set(KNOWN.get(g.family, ((), ()))[1]) | found_transforms):
        st = states.get(t)
        if st == "disabled":
            out.append(f"transform {t} is disabled in this run: enabling it is the likely fix")
        elif st is not None and st != "applied":
            out.append(f"transform {t} is {st} in this run: its matcher does not catch these instances")
    return out


def _risks(g: Group, variants: tuple[str, ...], unknown_meta: int) -> list[str]:
    """Risks of fusing ``g``: routing, reductions, casts, other variants, nodes without metadata."""
    ops = {op_name(t) for t in g.pattern}
    out = []
    if g.family == "moe":
        out.append(
            "routing: the fused op must use the same scoring (softmax or sigmoid), top-k and renormalisation "
            "of the routing weights as this graph"
        )
    elif g.family == "attention":
        out.append(
            "attention: the fused op must keep this graph's scale, mask (causal or sliding window), sinks "
            "and softmax precision"
        )
    elif ops & _REDUCTIONS:
        out.append(
            "contains a reduction: keep fp32 accumulation and the eps placement to stay numerically equal"
        )
    if ops & {"to", "_to_copy", "type_as"}:
        out.append("casts inside the pattern: the fused op must reproduce the dtype round-trip")
    if variants:
        out.append(
            "other variant(s) of this family in the graph (" + ", ".join(variants) + "): one matcher must "
            "cover all or some stay unfused"
        )
    if unknown_meta:
        out.append(
            f"{unknown_meta} node(s) of the instances have no shape/dtype metadata: matchers reading "
            "meta['val'] may miss them"
        )
    return out


def recommend(
    name: str,
    g: Group,
    lk: KernelLookup,
    states: Mapping[str, str],
    variants: tuple[str, ...] = (),
    unknown_meta: int = 0,
    complete: bool = True,
) -> Candidate:
    """Build the :class:`Candidate` for group ``g``.

    ``states`` maps transform keys to their state in the run's log (``disabled``, ``skipped``,
    ``applied:0`` ...), ``variants`` names the other candidates of the same family, ``unknown_meta`` counts
    instance nodes dumped without shape/dtype metadata, ``complete`` is false when the source read was cut
    short by a limit (a ``not_found`` is then weaker).
    """
    strengths = _saving(g)
    weaknesses: list[str] = []
    risks: list[str] = []
    if lk.status is LookupStatus.NOT_SEARCHED:
        rec = Recommendation.DEFER
        weaknesses.append(
            "existing kernel lookup not done (no --trtllm-src): rerun with it before choosing a path"
        )
    elif lk.status is LookupStatus.FOUND:
        rec = Recommendation.USE_EXISTING_KERNEL
        _found(lk, strengths, weaknesses, risks)
    else:
        rec = _not_found(g, complete, strengths, weaknesses)
    weaknesses += _states(g, lk, states)
    risks += _risks(g, variants, unknown_meta)
    return Candidate(
        name=name,
        family=g.family,
        pattern=g.pattern,
        signature=g.signature,
        instances=g.instances,
        nodes_removed=g.nodes_removed,
        lookup=lk,
        recommendation=rec,
        strengths=tuple(strengths),
        weaknesses=tuple(weaknesses),
        risks=tuple(risks),
        description=g.description,
        bytes_saved=g.bytes_saved,
        bytes_unknown=g.bytes_unknown,
        nested=g.nested,
    )
