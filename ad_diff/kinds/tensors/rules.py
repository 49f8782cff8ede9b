"""Numeric-drift rules (codes ``ADT0xx``): verdicts on measured tensor comparisons.

Differences within tolerance are not findings: the report's tensor table shows them as acceptable drift.
"""

from __future__ import annotations

from collections.abc import Sequence

from ad_diff.core.model import Finding, Severity
from ad_diff.core.rules import Rule
from ad_diff.kinds.tensors.model import NodeDrift, TensorComparison, Unmatched, Unreadable

DRIFT = Rule(
    "ADT001", "drift-beyond-tolerance", "numeric_drift", Severity.ERROR,
    "tensor {tensor}: drift beyond tolerance ({reason})",
    "An output tensor recorded in both runs differs by more than its tolerance under the judged statistic "
    "(by default: its RMSE against the recorded higher-precision reference is more than twice the "
    "baseline's, or, without a reference, its normalised RMSE exceeds the dtype's rtol). The evidence "
    "lists the share of elements beyond the elementwise assert_close tolerance, cosine similarity and, for "
    "logits, top-1/top-k agreement. Look at the first drifting node (ADT007) to find the transform; if the "
    "change is intended, loosen the tolerance for this tensor in the config's `tolerances:`.",
)  # fmt: skip
NONFINITE = Rule(
    "ADT002", "nonfinite-introduced", "numeric_drift", Severity.ERROR,
    "tensor {tensor}: candidate has new NaN/Inf ({nan_c} NaN, {inf_c} Inf; baseline {nan_b} NaN, {inf_b} Inf)",
    "The candidate's tensor holds more NaN or Inf values than the baseline's. This is never rounding "
    "noise: an overflow (e.g. a dropped upcast before a reduction), a division by zero or an "
    "uninitialised buffer. No tolerance can accept it.",
)  # fmt: skip
SHAPE = Rule(
    "ADT003", "shape-changed", "numeric_drift", Severity.ERROR,
    "tensor {tensor}: shape changed from {base} to {cand}; values were not compared",
    "The same tensor name has different shapes in the two runs, so no element-by-element comparison is "
    "possible. Usually the runs used different inputs or settings (batch, sequence length, vocabulary "
    "padding), or a transform changed an output's layout.",
)  # fmt: skip
DTYPE = Rule(
    "ADT004", "dtype-changed", "numeric_drift", Severity.WARNING,
    "tensor {tensor}: dtype changed from {base} to {cand}; compared with the looser tolerance",
    "The same tensor has different dtypes in the two runs (e.g. bf16 logits became fp32). Values were "
    "still compared, under the looser of the two dtypes' tolerances; a precision change of an output is "
    "worth a look even when the values agree.",
)  # fmt: skip
MISSING = Rule(
    "ADT005", "output-missing", "numeric_drift", Severity.ERROR,
    "tensor {tensor}: recorded in the baseline only; the candidate did not record it",
    "An output recorded by the baseline run is absent from the candidate's tensors/. Without it there is "
    "no verdict on that output, which must not read as a pass. Record the same outputs in both runs.",
)  # fmt: skip
ADDED = Rule(
    "ADT006", "output-added", "numeric_drift", Severity.INFO,
    "tensor {tensor}: recorded in the candidate only",
    "The candidate recorded an output the baseline did not; there is nothing to compare it with.",
)  # fmt: skip
FIRST_NODE = Rule(
    "ADT007", "first-drifting-node", "numeric_drift", Severity.WARNING,
    "first drifting node in graph order: {node}{via} ({count} node capture(s) beyond tolerance)",
    "Per-node captures were compared in graph order and this is the earliest node whose output drifts "
    "beyond tolerance; everything after it inherits the drift. When graph dumps show which transform "
    "created or rewrote the node, it is named. Warning when outputs were compared too (their own "
    "findings gate), error when only node captures exist.",
)  # fmt: skip
UNREADABLE = Rule(
    "ADT008", "tensor-file-unreadable", "input", Severity.ERROR,
    "{run} tensor file {path} could not be read: {reason}",
    "A file in tensors/ is not a valid safetensors file, is truncated, or is a .pt that needs more than "
    "weights_only loading (a pickle that could run code: it is refused and never executed). Its tensors "
    "are missing from the comparison, so this gates. Re-record with ad_diff.recording.save_tensors.",
)  # fmt: skip
INPUTS = Rule(
    "ADT009", "inputs-differ", "input", Severity.ERROR,
    "the runs recorded different inputs ({detail}); output differences may not be the candidate's fault",
    "tensors/inputs.safetensors differs between the runs (names, shapes or values). Outputs of different "
    "prompts cannot be compared meaningfully. Record both runs from the same inputs.",
)  # fmt: skip
REFERENCE = Rule(
    "ADT010", "reference-unusable", "input", Severity.WARNING,
    "tensor {tensor}: reference mode asked for but {why}; judged by normalised RMSE instead",
    "The tolerance for this tensor sets statistic: reference, but no usable higher-precision reference "
    "(tensors/reference/) was recorded with a matching shape. The tensor was judged without it.",
)  # fmt: skip

RULES: tuple[Rule, ...] = (DRIFT, NONFINITE, SHAPE, DTYPE, MISSING, ADDED, FIRST_NODE, UNREADABLE, INPUTS, REFERENCE)


def comparison_findings(comparisons: Sequence[TensorComparison]) -> list[Finding]:
    """Findings for output tensors (node captures are summarised by :func:`node_finding`)."""
    out: list[Finding] = []
    for c in comparisons:
        if c.kind != "output":
            continue
        if c.mismatch == "shape":
            out.append(SHAPE.make(tensor=c.name, base=list(c.baseline.shape), cand=list(c.candidate.shape)))
            continue
        if c.mismatch == "dtype":
            out.append(DTYPE.make(tensor=c.name, base=c.baseline.dtype, cand=c.candidate.dtype))
        s, j = c.stats, c.judgement
        if s is None or j is None:
            continue
        if s.new_nonfinite:
            ev = {"nan_candidate": s.nan_candidate, "inf_candidate": s.inf_candidate}
            out.append(
                NONFINITE.make(
                    tensor=c.name, evidence=ev, nan_c=s.nan_candidate, inf_c=s.inf_candidate,
                    nan_b=s.nan_baseline, inf_b=s.inf_baseline,
                )  # fmt: skip
            )
        elif not j.within:
            out.append(DRIFT.make(tensor=c.name, reason=j.reason, evidence=evidence(c)))
        if c.tolerance.statistic == "reference" and s.reference is None:
            why = "no reference was recorded" if c.reference is None else "the reference's shape differs"
            out.append(REFERENCE.make(tensor=c.name, why=why))
    return out


def evidence(c: TensorComparison) -> dict[str, object]:
    """The facts that decided a drift verdict, for the finding's ``evidence``."""
    s, j = c.stats, c.judgement
    assert s is not None and j is not None
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
    return ev


def unmatched_findings(unmatched: Sequence[Unmatched]) -> list[Finding]:
    """Missing/added outputs; one-sided node captures are expected when transforms fuse nodes."""
    out = []
    for u in unmatched:
        if u.kind != "output":
            continue
        out.append((MISSING if u.present_in == "baseline" else ADDED).make(tensor=u.name))
    return out


def unreadable_findings(unreadable: Sequence[Unreadable]) -> list[Finding]:
    """One error per unreadable file."""
    return [UNREADABLE.make(run=u.run, path=u.path.name, reason=u.message) for u in unreadable]


def node_finding(drift: NodeDrift | None, outputs_compared: bool) -> list[Finding]:
    """The first-drifting-node finding, if any node drifted."""
    if drift is None:
        return []
    via = f" (introduced by transform {drift.transform})" if drift.transform else ""
    return [
        FIRST_NODE.make(
            node=drift.node, transform=drift.transform, via=via, count=drift.drifting_nodes,
            severity=Severity.WARNING if outputs_compared else Severity.ERROR,
            evidence={"position": drift.position, "drifting_nodes": drift.drifting_nodes},
        )  # fmt: skip
    ]
