"""Tensor findings (``ADT0xx``) drawn from the measured comparisons, with the rules of :mod:`.rules`.

:func:`classify` is the only place tensor findings are made. Imported once tensors are compared: the kind
registry loads the rules for every comparison, this module (and with it the tensor model) only then.
"""

from __future__ import annotations

from collections.abc import Sequence

from ad_diff.core.model import BASELINE, Finding, Severity
from ad_diff.kinds.tensors.model import (
    Mismatch,
    NodeDrift,
    RoutingFlip,
    TensorAnalysis,
    TensorComparison,
    TensorKind,
    TensorVerdict,
    Unmatched,
    Unreadable,
    times,
)
from ad_diff.kinds.tensors.rules import (
    ADDED,
    DRIFT,
    DTYPE,
    FIRST_NODE,
    INPUTS,
    MISSING,
    NODE_NONFINITE,
    NODES_UNORDERED,
    NONFINITE,
    REFERENCE,
    ROUTING_NEAR_TIE,
    ROUTING_POSSIBLE,
    ROUTING_REGRESSION,
    SHAPE,
    UNREADABLE,
    UNTRUSTED_REFERENCE,
)

_UNTRUSTED_WHY = {
    "candidate_only": "only the candidate recorded one (the run under review may not supply its own "
    "standard of truth)",
    "differs": "the runs' references differ (dtype, shape or values)",
}


def classify(analysis: TensorAnalysis) -> list[Finding]:
    """Every tensor finding of one analysis, in the report's order."""
    findings = unreadable_findings(analysis.unreadable)
    if analysis.input_problems:
        # the inputs it is about, by name: the accounting's differences in those tensors are this one event
        findings.append(INPUTS.make(detail="; ".join(analysis.input_problems),
                                    evidence={"tensors": list(analysis.inputs_differing)}))
    findings += [
        UNTRUSTED_REFERENCE.make(tensor=u.name, why=_UNTRUSTED_WHY.get(u.why, u.why), evidence={"why": u.why})
        for u in analysis.untrusted_references
    ]
    findings += comparison_findings(analysis.comparisons, analysis.rows_origin)
    findings += unmatched_findings(analysis.unmatched)
    outputs_compared = any(c.kind is TensorKind.OUTPUT for c in analysis.comparisons)
    findings += node_finding(analysis.first_drift, outputs_compared)
    findings += node_nonfinite_findings(analysis.comparisons, analysis.first_drift)
    findings += routing_findings(analysis)
    return sorted(findings, key=lambda f: f.sort_key())


def _flip_text(f: RoutingFlip) -> str:
    rel = "\u2264" if f.near_tie else ">"
    return (f"token {list(f.token)}: experts {list(f.before)} \u2192 {list(f.after)}, margin {f.margin:.3g} "
            f"{rel} {f.limit:.3g}")


def _flip_evidence(f: RoutingFlip) -> dict[str, object]:
    return {"token": list(f.token), "before": list(f.before), "after": list(f.after), "margin": f.margin,
            "limit": f.limit, "near_tie": f.near_tie}


def routing_findings(analysis: TensorAnalysis) -> list[Finding]:
    """ADT014 per layer with near-tie flips only, ADT015 for the first layer whose routing regressed (the
    later ones in its evidence), ADT016 for a MoE model's drift confined to rows with no router judged."""
    out: list[Finding] = []
    regressed = [r for r in analysis.routing if r.regression]
    for r in analysis.routing:
        if not r.judged or r.regression or not r.near_ties:
            continue
        near = [f for f in r.flips if f.near_tie]
        tensors = sum(1 for c in analysis.comparisons if c.routed_rows)
        examples = "; ".join(_flip_text(f) for f in near[:3])
        if r.near_ties > 3:
            examples += f"; and {r.near_ties - 3} more"
        out.append(ROUTING_NEAR_TIE.make(
            layer=r.layer, op=r.op, count=r.near_ties, examples=examples, tensors=tensors, node=r.op,
            evidence={"layer": r.layer, "router": r.router, "k": r.k, "scheme": r.scheme,
                      "tokens": r.tokens, "chosen_from": r.chosen_from, "noise": r.noise,
                      "flips": [_flip_evidence(f) for f in near]},
        ))  # fmt: skip
    if regressed:
        r = regressed[0]
        clear = [f for f in r.flips if not f.near_tie]
        parts = []
        if r.router_passed is False:
            parts.append(f"router logits {r.router} drift beyond tolerance ({r.router_reason})")
        if r.clear:
            flips = "; ".join(_flip_text(f) for f in clear[:3])
            parts.append(f"{r.clear} of {r.tokens} tokens changed experts at clear margins ({flips})")
        where = (f"at the router {r.router}" if r.router_passed is False else
                 f"router logits {r.router} agree: the routing between them and the MoE op ({r.scheme}), or "
                 f"{r.op}")
        out.append(ROUTING_REGRESSION.make(
            layer=r.layer, op=r.op, what="; ".join(parts), where=where, node=r.op,
            evidence={"layer": r.layer, "router": r.router, "router_passed": r.router_passed, "k": r.k,
                      "scheme": r.scheme, "tokens": r.tokens, "clear": r.clear, "near_ties": r.near_ties,
                      "noise": r.noise, "chosen_from": r.chosen_from, "attributed_to": "router"
                      if r.router_passed is False else "routing",
                      "flips": [_flip_evidence(f) for f in clear[:10]],
                      "later_layers": [x.layer for x in regressed[1:]]},
        ))  # fmt: skip
    if analysis.moe_layers and not any(r.judged for r in analysis.routing):
        missing = [r.router for r in analysis.routing if r.note and "not captured" in r.note]
        record = (f"record the router logits ({', '.join(missing[:4])}) in both runs" if missing else
                  "record each MoE op's router logits in both runs")
        for c in analysis.comparisons:
            rows = c.stats.rows if c.stats else None
            j = c.judgement
            if c.kind is not TensorKind.OUTPUT or rows is None or j is None:
                continue
            if not j.statistic.startswith("rows:"):
                continue
            out.append(ROUTING_POSSIBLE.make(
                tensor=c.name, rows=f"{rows.outliers} of {rows.rows} rows", layers=analysis.moe_layers,
                record=record, evidence={"outliers": rows.outliers, "rows": rows.rows, "routers": missing},
            ))  # fmt: skip
    return out


def comparison_findings(comparisons: Sequence[TensorComparison], origin: str | None = None) -> list[Finding]:
    """Findings for output tensors (node captures are summarised by :func:`node_finding`); ``origin`` is the
    first node capture where the outputs' bad rows appear."""
    out: list[Finding] = []
    for c in comparisons:
        if c.kind is not TensorKind.OUTPUT:
            continue
        if c.mismatch is Mismatch.SHAPE:
            out.append(SHAPE.make(tensor=c.name, base=list(c.baseline.shape), cand=list(c.candidate.shape)))
            continue
        if c.mismatch is Mismatch.DTYPE:
            out.append(DTYPE.make(tensor=c.name, base=c.baseline.dtype, cand=c.candidate.dtype))
        s, j = c.stats, c.judgement
        if s is None or j is None:
            continue
        if c.verdict is TensorVerdict.NONFINITE:
            ev = {"nan_candidate": s.nan_candidate, "inf_candidate": s.inf_candidate}
            out.append(
                NONFINITE.make(
                    tensor=c.name,
                    evidence=ev,
                    nan_c=s.nan_candidate,
                    inf_c=s.inf_candidate,
                    nan_b=s.nan_baseline,
                    inf_b=s.inf_baseline,
                )  # fmt: skip
            )
        elif c.verdict is TensorVerdict.BEYOND:
            out.append(
                DRIFT.make(
                    tensor=c.name, reason=j.reason + worst_rows_text(c, origin), evidence=evidence(c, origin)
                )
            )
        if c.tolerance.statistic == "reference" and s.reference is None:
            why = "no reference was recorded" if c.reference is None else "the reference's shape differs"
            out.append(REFERENCE.make(tensor=c.name, why=why))
    return out


def worst_rows_text(c: TensorComparison, origin: str | None = None) -> str:
    """``; worst rows: [2, 127] 16.1x cos 0.978 argmax 311 (ref 95) ...`` for a tensor with outlier rows."""
    rows = c.stats.rows if c.stats else None
    if rows is None or rows.outliers == 0:
        return ""
    parts = []
    for w in [w for w in rows.worst if w.outlier][:3]:
        text = f"{list(w.index)} {times(w.score)}, cos {w.cosine:.4f}"
        if w.argmax_candidate is not None:
            has_ref = w.argmax_reference is not None
            ref, label = (w.argmax_reference, "ref") if has_ref else (w.argmax_baseline, "baseline")
            text += f", argmax {w.argmax_candidate} ({label} {ref})"
        parts.append(text)
    where = f"; bad rows first appear at node capture {origin}" if origin else ""
    return f"; worst rows: {', '.join(parts)}{where}"


def evidence(c: TensorComparison, origin: str | None = None) -> dict[str, object]:
    """The facts that decided a drift verdict, for the finding's ``evidence``."""
    s, j = c.stats, c.judgement
    assert s is not None
    assert j is not None
    ev: dict[str, object] = {
        "statistic": j.statistic,
        "value": j.value,
        "limit": j.limit,
        "outside_share": round(s.outside_share, 6),
        "nrmse": s.nrmse,
        "cosine": s.cosine,
        "max_abs": s.max_abs,
    }
    if s.reference is not None:
        ev["reference_ratio"] = s.reference.ratio
    if s.top1 is not None:
        ev["top1_agreement"] = s.top1
        ev[f"top{s.k}_agreement"] = s.topk
    if s.rows is not None:
        ev["rows_judged"] = s.rows.rows
        ev["rows_outliers"] = s.rows.outliers
        ev["worst_rows"] = [
            {
                "index": list(w.index),
                "score": w.score,
                "cosine": w.cosine,
                "argmax_candidate": w.argmax_candidate,
                "argmax_baseline": w.argmax_baseline,
                "argmax_reference": w.argmax_reference,
            }
            for w in s.rows.worst
            if w.outlier
        ][:3]
        if s.rows.next_token is not None:
            ev["next_token_agreement"] = s.rows.next_token
    if origin:
        ev["rows_origin"] = origin
    return ev


def unmatched_findings(unmatched: Sequence[Unmatched]) -> list[Finding]:
    """Missing/added outputs; one-sided node captures are expected when transforms fuse nodes."""
    out = []
    for u in unmatched:
        if u.kind is not TensorKind.OUTPUT:
            continue
        out.append((MISSING if u.present_in == BASELINE else ADDED).make(tensor=u.name))
    return out


def unreadable_findings(unreadable: Sequence[Unreadable]) -> list[Finding]:
    """One error per unreadable file."""
    return [UNREADABLE.make(run=u.run, path=u.path.name, reason=u.message) for u in unreadable]


def node_nonfinite_findings(
    comparisons: Sequence[TensorComparison], drift: NodeDrift | None
) -> list[Finding]:
    """ADT013: the node captures with new NaN/Inf, in the order of ``comparisons`` (graph order when the runs
    give one: ``drift``, :func:`ad_diff.kinds.tensors.analysis.first_drifting_node`, says)."""
    bad = [(c, c.stats) for c in comparisons
           if c.kind is TensorKind.NODE and c.stats is not None and c.stats.new_nonfinite]
    if not bad:
        return []
    first = bad[0][0]
    ordered = drift is not None and drift.order_source is not None
    # the first drifting node is the first capture with new NaN/Inf unless an earlier one only drifts
    transform = None
    if drift is not None and drift.node is not None and first.name.split(".")[0] == drift.node:
        transform = drift.transform
    examples = ", ".join(f"{c.name}: {s.nan_candidate} NaN, {s.inf_candidate} Inf" for c, s in bad[:3])
    if len(bad) > 3:
        examples += f", and {len(bad) - 3} more"
    where = f"; first in graph order: {first.name}" if ordered else ""
    if transform:
        where += f", introduced by transform {transform}"
    nodes = [[c.name, s.nan_candidate, s.inf_candidate, s.nan_baseline, s.inf_baseline] for c, s in bad[:50]]
    return [NODE_NONFINITE.make(count=len(bad), examples=examples, where=where, node=first.name,
                                transform=transform,
                                evidence={"nodes": nodes, "graph_order": ordered})]


def node_finding(drift: NodeDrift | None, outputs_compared: bool) -> list[Finding]:
    """The drifting-node finding, if any node drifted: names the first node only under a real graph order."""
    if drift is None:
        return []
    severity = Severity.WARNING if outputs_compared else Severity.ERROR
    evidence: dict[str, object] = {"drifting_nodes": drift.drifting_nodes, "order_source": drift.order_source}
    if drift.node is None:
        why = (
            "no graph order: the runs have no graph dumps to take it from"
            if drift.order_source is None
            else f"none of them is a node of the graph order ({drift.order_source})"
        )
        return [
            NODES_UNORDERED.make(count=drift.drifting_nodes, why=why, severity=severity, evidence=evidence)
        ]
    via = f" (introduced by transform {drift.transform})" if drift.transform else ""
    evidence["position"] = drift.position
    return [
        FIRST_NODE.make(
            node=drift.node,
            transform=drift.transform,
            via=via,
            count=drift.drifting_nodes,
            source=drift.order_source,
            severity=severity,
            evidence=evidence,
        )  # fmt: skip
    ]
