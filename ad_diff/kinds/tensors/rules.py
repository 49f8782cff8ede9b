"""Numeric-drift rules (codes ``ADT0xx``): what each finding of the measured tensor comparisons means.

This module only describes the findings; :mod:`.classify` draws them. Differences within tolerance are not
findings: the report's tensor table shows them as acceptable drift.
"""

from __future__ import annotations

from ad_diff.core.model import Category, Severity
from ad_diff.core.rules import Role, Rule

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
    role=Role.DRIFT,
)  # fmt: skip
NONFINITE = Rule(
    "ADT002", "nonfinite-introduced", Category.NUMERIC_DRIFT, Severity.ERROR,
    "tensor {tensor}: candidate has new NaN/Inf ({nan_c} NaN, {inf_c} Inf; "
    "baseline {nan_b} NaN, {inf_b} Inf)",
    "The candidate's tensor holds more NaN or Inf values than the baseline's. This is never rounding "
    "noise: an overflow (e.g. a dropped upcast before a reduction), a division by zero or an "
    "uninitialised buffer. No tolerance can accept it.",
    role=Role.DRIFT,
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
    role=Role.FIRST_DRIFT_NODE, heads=8,
)  # fmt: skip
NODES_UNORDERED = Rule(
    "ADT011", "drifting-nodes-unordered", Category.NUMERIC_DRIFT, Severity.WARNING,
    "{count} node capture(s) beyond tolerance; the first drifting node cannot be named ({why})",
    "Per-node captures drift beyond tolerance, but the runs give no graph order that places them (no graph "
    "dumps in both runs, or the drifting captures are not nodes of the final dump). Name order says "
    "nothing about where drift starts, so no node is named; the tensor table lists the drifting captures. "
    "Record graph dumps (AD_DUMP_GRAPHS_DIR) in both runs to locate the first one. Warning when outputs were "
    "compared too, error when only node captures exist.",
    role=Role.DRIFT_NODES_UNORDERED,
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
    role=Role.INPUTS_DIFFER, heads=7,
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
ROUTING_NEAR_TIE = Rule(
    "ADT014", "routing-flip-near-tie", Category.NUMERIC_DRIFT, Severity.WARNING,
    "MoE layer {layer} ({op}): {count} token(s) changed experts at a near tie ({examples}); their rows are "
    "left out of {tensors} downstream tensor(s), the rest is judged as usual",
    "Both runs captured this MoE layer's router logits (the node feeding the MoE op's routing input, found "
    "in the graph dump), and some tokens' sets of experts differ between the runs. Each such token's margin "
    "(the "
    "gap its change crossed in the baseline's logits: how far the lowest expert taken in sat below the k-th "
    "score, or the highest expert dropped above the (k+1)-th) is within the margin rule: at most 6 times the "
    "logits' run-to-run noise (the RMS over tokens of how far the gap between any two experts moved), or one "
    "rounding step of the logits' dtype. A harmless kernel change that moves the logits by an ulp flips such "
    "near ties, and the flipped token's output then moves a lot: that is a routing flip, not drift. So the "
    "rows of those tokens are left out of the judgement of every tensor after the layer and the rest is "
    "judged as usual; a pair whose only drift is such flips passes with this warning. The captures between "
    "the router and the MoE op (softmax, top-k, routing weights) are judged through this analysis. Tokens "
    "that the flipped token reaches later through attention are still judged as usual.",
)  # fmt: skip
ROUTING_REGRESSION = Rule(
    "ADT015", "routing-regression", Category.NUMERIC_DRIFT, Severity.ERROR,
    "MoE layer {layer} ({op}): routing regression: {what}; {where}",
    "Tokens changed experts at margins well beyond the router logits' run-to-run noise (above the margin "
    "rule of ADT014), or the router logits themselves drift beyond tolerance: the change routes tokens "
    "differently, which rounding does not do. Attributed to the router (its logits drift) or, when the "
    "logits agree but the experts chosen from them differ, to the routing between the router and the MoE op "
    "(a fused routing kernel, the softmax or top-k) or the MoE op. The message names the first such layer "
    "in graph order and its clearest flips (token, experts before and after, margin against the limit); "
    "later layers that also change experts are listed in the evidence (usually a consequence).",
)  # fmt: skip
ROUTING_POSSIBLE = Rule(
    "ADT016", "routing-flip-possible", Category.NUMERIC_DRIFT, Severity.WARNING,
    "tensor {tensor}: drift confined to {rows} of a MoE model ({layers} MoE layer(s)): a routing flip is "
    "possible; {record}",
    "The tensor drifts only in a few rows (outlier rows while the whole tensor is within tolerance) and the "
    "graph holds MoE ops, but the runs did not capture the router logits that would tell a near-tie routing "
    "flip (ADT014) from a broken token. The drift still gates. Record the router logits (the linear feeding "
    "each MoE op's routing) in both runs: docs/recording-tensors.md, section \"Mixture-of-experts models\".",
)  # fmt: skip
RULES: tuple[Rule, ...] = (
    DRIFT, NONFINITE, SHAPE, DTYPE, MISSING, ADDED, FIRST_NODE, UNREADABLE, INPUTS, REFERENCE,
    NODES_UNORDERED, UNTRUSTED_REFERENCE, NODE_NONFINITE, ROUTING_NEAR_TIE, ROUTING_REGRESSION,
    ROUTING_POSSIBLE,
)  # fmt: skip
