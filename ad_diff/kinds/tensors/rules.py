"""Numeric-drift rules (codes ``ADT0xx``): findings drawn from the measured tensor comparisons.

:func:`classify` is the only place tensor findings are made. Differences within tolerance are not
findings: the report's tensor table shows them as acceptable drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ad_diff.core.model import BASELINE, Category, Finding, Severity
from ad_diff.core.rules import Rule

# The model is imported by the functions that draw findings: the kind registry imports these rules for
# every comparison, and a comparison without tensors must not build the tensor model's classes.
if TYPE_CHECKING:
    # lazy: the model loads once tensors are compared (kinds/__init__ imports these rules for every run)
    from ad_diff.kinds.tensors.model import NodeDrift, TensorAnalysis, TensorComparison, Unmatched, Unreadable

DRIFT = Rule(
    "ADT001", "drift-beyond-tolerance", Category.NUMERIC_DRIFT, Severity.ERROR,
    "tensor {tensor}: drift beyond tolerance ({reason})",
    "An output tensor recorded in both runs differs by more than its tolerance under the judged statistic "
    "(by default: its RMSE against the recorded higher-precision reference is more than twice the "
    "baseline's, or, without a reference, its normalised RMSE exceeds the dtype's rtol), or one of its rows "
    "(a token) is an outlier: its error against the reference over 4x the same baseline row's, or, without a "
    "reference, over 4x the median row's. The message names the worst rows (index, ratio, cosine, argmax). "
    "The evidence "
    "lists the share of elements beyond the elementwise assert_close tolerance, cosine similarity and, for "
    "logits, top-1/top-k agreement. Look at the first drifting node (ADT007) to find the transform; if the "
    "change is intended, loosen the tolerance for this tensor in the config's `tolerances:`.",
)  # fmt: skip
NONFINITE = Rule(
    "ADT002", "nonfinite-introduced", Category.NUMERIC_DRIFT, Severity.ERROR,
    "tensor {tensor}: candidate has new NaN/Inf ({nan_c} NaN, {inf_c} Inf; "
    "baseline {nan_b} NaN, {inf_b} Inf)",
    "The candidate's tensor holds more NaN or Inf values than the baseline's. This is never rounding "
    "noise: an overflow (e.g. a dropped upcast before a reduction), a division by zero or an "
    "uninitialised buffer. No tolerance can accept it.",
)  # fmt: skip
SHAPE = Rule(
    "ADT003", "shape-changed", Category.NUMERIC_DRIFT, Severity.ERROR,
    "tensor {tensor}: shape changed from {base} to {cand}; values were not compared",
    "The same tensor name has different shapes in the two runs, so no element-by-element comparison is "
    "possible. Usually the runs used different inputs or settings (batch, sequence length, vocabulary "
    "padding), or a transform changed an output's layout.",
)  # fmt: skip
DTYPE = Rule(
    "ADT004", "dtype-changed", Category.NUMERIC_DRIFT, Severity.WARNING,
    "tensor {tensor}: dtype changed from {base} to {cand}; compared with the looser tolerance",
    "The same tensor has different dtypes in the two runs (e.g. bf16 logits became fp32). Values were "
    "still compared, under the looser of the two dtypes' tolerances; a precision change of an output is "
    "worth a look even when the values agree.",
)  # fmt: skip
MISSING = Rule(
    "ADT005", "output-missing", Category.NUMERIC_DRIFT, Severity.ERROR,
    "tensor {tensor}: recorded in the baseline only; the candidate did not record it",
    "An output recorded by the baseline run is absent from the candidate's tensors/. Without it there is "
    "no verdict on that output, which must not read as a pass. Record the same outputs in both runs.",
)  # fmt: skip
ADDED = Rule(
    "ADT006", "output-added", Category.NUMERIC_DRIFT, Severity.INFO,
    "tensor {tensor}: recorded in the candidate only",
    "The candidate recorded an output the baseline did not; there is nothing to compare it with.",
)  # fmt: skip
FIRST_NODE = Rule(
    "ADT007", "first-drifting-node", Category.NUMERIC_DRIFT, Severity.WARNING,
    "first drifting node in graph order: {node}{via} ({count} node capture(s) beyond tolerance; "
    "order from the {source})",
    "Per-node captures were compared in graph order and this is the earliest node whose output drifts "
    "beyond tolerance; everything after it inherits the drift. The order is the baseline's final graph "
    "dump, named in the message. When graph dumps show which transform created or rewrote the node, it is "
    "named. Warning when outputs were compared too (their own findings gate), error when only node "
    "captures exist.",
)  # fmt: skip
NODES_UNORDERED = Rule(
    "ADT011", "drifting-nodes-unordered", Category.NUMERIC_DRIFT, Severity.WARNING,
    "{count} node capture(s) beyond tolerance; the first drifting node cannot be named ({why})",
    "Per-node captures drift beyond tolerance, but the runs give no graph order that places them (no graph "
    "dumps in both runs, or the drifting captures are not nodes of the final dump). Name order says "
    "nothing about where drift starts, so no node is named; the tensor table lists the drifting captures. "
    "Record graph dumps (AD_DUMP_GRAPHS_DIR) in both runs to locate the first one. Warning when outputs were "
    "compared too, error when only node captures exist.",
)  # fmt: skip
UNREADABLE = Rule(
    "ADT008", "tensor-file-unreadable", Category.INPUT, Severity.ERROR,
    "{run} tensor file {path} could not be read: {reason}",
    "A file in tensors/ is not a valid safetensors file, is truncated, or is a .pt that needs more than "
    "weights_only loading (a pickle that could run code: it is refused and never executed). Its tensors "
    "are missing from the comparison, so this gates. Re-record with ad_diff.recording.save_tensors.",
)  # fmt: skip
INPUTS = Rule(
    "ADT009", "inputs-differ", Category.INPUT, Severity.ERROR,
    "the runs recorded different inputs ({detail}); output differences may not be the candidate's fault",
    "tensors/inputs.safetensors differs between the runs (names, shapes or values). Outputs of different "
    "prompts cannot be compared meaningfully. Record both runs from the same inputs.",
)  # fmt: skip
REFERENCE = Rule(
    "ADT010", "reference-unusable", Category.INPUT, Severity.WARNING,
    "tensor {tensor}: reference mode asked for but {why}; judged by normalised RMSE instead",
    "The tolerance for this tensor sets statistic: reference, but no usable higher-precision reference "
    "(tensors/reference/) was recorded with a matching shape. The tensor was judged without it.",
)  # fmt: skip

NODE_NONFINITE = Rule(
    "ADT013", "node-nonfinite-introduced", Category.NUMERIC_DRIFT, Severity.ERROR,
    "{count} per-node capture(s) hold new NaN/Inf in the candidate ({examples}){where}",
    "A per-node capture (`tensors/nodes/`) holds more NaN or Inf values in the candidate than in the "
    "baseline. Like ADT002 for outputs, and as the report's legend says, new NaN/Inf always fails: no "
    "tolerance accepts it, and finite outputs do not excuse it (a NaN in a branch the recorded prompt "
    "masks out, a padded position or an unused expert still comes back on other inputs). It gates even when "
    "every output passes, where ADT007 only warns. One finding names the captures (in graph order when the "
    "runs have graph dumps, the first one's transform when the dumps show it); the tensor table lists each.",
)  # fmt: skip

UNTRUSTED_REFERENCE = Rule(
    "ADT012", "reference-untrusted", Category.INPUT, Severity.ERROR,
    "tensor {tensor}: reference not used: {why}",
    "A higher-precision reference judges the candidate only when it is the baseline's (the candidate records "
    "none, or the same tensor: dtype, shape and every value), or the user gave it with `--reference DIR`. "
    "A reference that only the candidate records lets the run under review supply its own standard of "
    "truth (logits at `3x + 7` pass against a reference of `3x + 7`); references that differ between the "
    "runs leave no single truth to judge by. Either is not used (the tensor is judged without it) and gates: "
    "the numeric verdict it would have given cannot be trusted. Record the reference in the baseline run, "
    "or pass a trusted one with `--reference DIR`.",
)  # fmt: skip
_UNTRUSTED_WHY = {
    "candidate_only": "only the candidate recorded one (the run under review may not supply its own "
    "standard of truth)",
    "differs": "the runs' references differ (dtype, shape or values)",
}

RULES: tuple[Rule, ...] = (
    DRIFT, NONFINITE, SHAPE, DTYPE, MISSING, ADDED, FIRST_NODE, UNREADABLE, INPUTS, REFERENCE,
    NODES_UNORDERED, UNTRUSTED_REFERENCE, NODE_NONFINITE,
)  # fmt: skip


def classify(analysis: TensorAnalysis) -> list[Finding]:
    """Every tensor finding of one analysis, in the report's order."""
    # lazy: the model loads once tensors are compared (kinds/__init__ imports these rules for every run)
    from ad_diff.kinds.tensors.model import TensorKind

    findings = unreadable_findings(analysis.unreadable)
    if analysis.input_problems:
        findings.append(INPUTS.make(detail="; ".join(analysis.input_problems)))
    findings += [
        UNTRUSTED_REFERENCE.make(tensor=u.name, why=_UNTRUSTED_WHY.get(u.why, u.why), evidence={"why": u.why})
        for u in analysis.untrusted_references
    ]
    findings += comparison_findings(analysis.comparisons, analysis.rows_origin)
    findings += unmatched_findings(analysis.unmatched)
    outputs_compared = any(c.kind is TensorKind.OUTPUT for c in analysis.comparisons)
    findings += node_finding(analysis.first_drift, outputs_compared)
    findings += node_nonfinite_findings(analysis.comparisons, analysis.first_drift)
    return sorted(findings, key=lambda f: f.sort_key())


def comparison_findings(comparisons: Sequence[TensorComparison], origin: str | None = None) -> list[Finding]:
    """Findings for output tensors (node captures are summarised by :func:`node_finding`); ``origin`` is the
    first node capture where the outputs' bad rows appear."""
    # lazy: the model loads once tensors are compared (kinds/__init__ imports these rules for every run)
    from ad_diff.kinds.tensors.model import Mismatch, TensorKind, TensorVerdict

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
    # lazy: the model loads once tensors are compared (kinds/__init__ imports these rules for every run)
    from ad_diff.kinds.tensors.model import times

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
    # lazy: the model loads once tensors are compared (kinds/__init__ imports these rules for every run)
    from ad_diff.kinds.tensors.model import TensorKind

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
    # lazy: the model loads once tensors are compared (kinds/__init__ imports these rules for every run)
    from ad_diff.kinds.tensors.model import TensorKind

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
