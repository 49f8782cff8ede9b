"""The tensor comparison in one function: discover -> pair -> measure -> judge -> classify.

:func:`analyze_tensors` is what the pipeline calls when both runs have ``tensors/``. Graph alignment
(another stage) supplies ``node_order`` (node names in graph order) and ``node_transform`` (node -> the
transform that introduced or rewrote it) for the first-drifting-node search; both are plain inputs here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from ad_diff.kinds.tensors import rules as tensor_rules
from ad_diff.kinds.tensors.measure import MeasureOptions, measure
from ad_diff.kinds.tensors.model import NodeDrift, TensorAnalysis, TensorComparison, TensorRecord, Unmatched
from ad_diff.kinds.tensors.parse import ChunkReader, RunTensors, discover
from ad_diff.kinds.tensors.tolerance import judge, merge_dtypes, resolve
from ad_diff.settings import Settings

LOGITS_GLOB = "*logits*"
"""Output names treated as logits (top-1/top-k agreement over the last dimension)."""
TOPK = 5
PLOT_SAMPLES = 20_000


def analyze_tensors(
    baseline_tensors: Path,
    candidate_tensors: Path,
    settings: Settings,
    node_order: Sequence[str] | None = None,
    node_transform: Mapping[str, str] | None = None,
    renamed: Mapping[str, str] | None = None,
) -> TensorAnalysis:
    """Compare the tensors two runs recorded (their ``tensors/`` folders) under ``settings``.

    ``renamed`` maps candidate node names to the baseline names that graph alignment paired them with
    (a pass added upstream shifts FX name counters), so per-node captures pair by node, not by name.
    Unreadable files, one-sided tensors and shape mismatches become values and findings; only an
    internal bug raises. Differences within tolerance produce no finding.
    """
    base = discover(baseline_tensors, "baseline")
    cand = discover(candidate_tensors, "candidate")
    notes: list[str] = []
    cand_outputs, n_renamed = _paired_names(cand.outputs, renamed or {})
    if n_renamed:
        notes.append(f"{n_renamed} candidate node capture(s) paired under their baseline names through graph "
                     "alignment (their FX names shifted)")
    device = _device(getattr(settings, "tensor_device", "cpu"), notes)
    plots = bool(getattr(settings, "tensor_plots", False))
    if plots and importlib.util.find_spec("matplotlib") is None:
        notes.append("plots were requested but matplotlib is not installed (pip install 'ad-diff[plots]')")
        plots = False
    comparisons: list[TensorComparison] = []
    unmatched: list[Unmatched] = []
    for name in sorted(set(base.outputs) | set(cand_outputs)):
        b, c = base.outputs.get(name), cand_outputs.get(name)
        if b is None or c is None:
            rec = b or c
            assert rec is not None
            side = "baseline" if b is not None else "candidate"
            other = "candidate" if b is not None else "baseline"
            lost = (cand if b is not None else base).unreadable
            why = f"not recorded by the {other} run" + (", which has unreadable tensor files" if lost else "")
            unmatched.append(Unmatched(name, rec.kind, side, why))
            continue
        comparisons.append(_compare(name, b, c, base, cand, settings, device, plots))
    findings = tensor_rules.unreadable_findings(base.unreadable + cand.unreadable)
    findings += _input_findings(base, cand)
    findings += tensor_rules.comparison_findings(comparisons)
    findings += tensor_rules.unmatched_findings(unmatched)
    comparisons = _graph_ordered(comparisons, node_order)
    drift = first_drifting_node(comparisons, node_order, node_transform)
    outputs_compared = any(c.kind == "output" for c in comparisons)
    findings += tensor_rules.node_finding(drift, outputs_compared)
    if any(c.kind == "node" for c in comparisons) and node_order is None:
        notes.append("per-node captures compared without graph order: first drifting node is by name order")
    return TensorAnalysis(
        comparisons=tuple(comparisons),
        unmatched=tuple(unmatched),
        unreadable=base.unreadable + cand.unreadable,
        findings=tuple(sorted(findings, key=lambda f: f.sort_key())),
        first_drift=drift,
        device=device,
        notes=tuple(notes),
    )


def _device(asked: str, notes: list[str]) -> str:
    if asked == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda" if asked == "auto" else asked
    if asked != "auto":
        notes.append(f"tensor device {asked!r} asked for but no GPU is available; compared on the CPU")
    return "cpu"


def _paired_names(outputs: Mapping[str, TensorRecord], renamed: Mapping[str, str]) -> tuple[dict[str, TensorRecord], int]:
    """Candidate records keyed by the baseline name of their node; outputs and unmapped nodes keep theirs.

    A rename that would collide with another capture's key is not applied (the name then pairs as is).
    """
    keys = {n: (renamed.get(n, n) if r.kind == "node" else n) for n, r in outputs.items()}
    counts: dict[str, int] = {}
    for k in keys.values():
        counts[k] = counts.get(k, 0) + 1
    out: dict[str, TensorRecord] = {}
    n_renamed = 0
    for n, r in outputs.items():
        k = keys[n] if counts[keys[n]] == 1 else n
        n_renamed += k != n
        out[k] = r
    return out, n_renamed


def _compare(
    name: str, b: TensorRecord, c: TensorRecord, base: RunTensors, cand: RunTensors,
    settings: Settings, device: str, plots: bool,
) -> TensorComparison:  # fmt: skip
    tol = resolve(name, b.dtype, settings.tolerances)
    mismatch = None
    if b.dtype != c.dtype:
        tol, mismatch = merge_dtypes(tol, resolve(name, c.dtype, settings.tolerances)), "dtype"
    ref = base.references.get(name) or cand.references.get(name)
    if b.shape != c.shape:
        return TensorComparison(name, b.kind, b, c, ref, tol, None, None, "shape")
    if ref is not None and ref.shape != b.shape:
        ref = None
    logits = b.kind == "output" and fnmatchcase(name, LOGITS_GLOB)
    opts = MeasureOptions(
        atol=tol.atol, rtol=tol.rtol, device=device, topk=TOPK if logits else 0,
        histogram=plots or tol.statistic == "quantile", samples=PLOT_SAMPLES if plots else 0,
    )  # fmt: skip
    stats = measure(b, c, opts, reference=ref)
    return TensorComparison(name, b.kind, b, c, ref, tol, stats, judge(stats, tol), mismatch)


def _input_findings(base: RunTensors, cand: RunTensors) -> list:
    if not base.inputs and not cand.inputs:
        return []
    problems = []
    for name in sorted(set(base.inputs) | set(cand.inputs)):
        b, c = base.inputs.get(name), cand.inputs.get(name)
        if b is None or c is None:
            problems.append(f"{name} recorded in one run only")
        elif (b.dtype, b.shape) != (c.dtype, c.shape):
            problems.append(f"{name}: {b.dtype}{list(b.shape)} vs {c.dtype}{list(c.shape)}")
        elif not _same_values(b, c):
            problems.append(f"{name}: values differ")
    return [tensor_rules.INPUTS.make(detail="; ".join(problems))] if problems else []


def _same_values(a: TensorRecord, b: TensorRecord) -> bool:
    import torch

    ra, rb = ChunkReader(a), ChunkReader(b)
    try:
        step = 1 << 22
        for start in range(0, a.numel, step):
            n = min(step, a.numel - start)
            if not torch.equal(ra.read(start, n), rb.read(start, n)):
                return False
        return True
    finally:
        ra.close()
        rb.close()


def first_drifting_node(
    comparisons: Sequence[TensorComparison],
    node_order: Sequence[str] | None,
    node_transform: Mapping[str, str] | None,
) -> NodeDrift | None:
    """The earliest node capture (graph order; unknown nodes last, by name) judged beyond tolerance.

    Captures of tuple outputs (``<node>.0``) count as their node.
    """
    position = {n: i for i, n in enumerate(node_order or ())}
    drifting = [c for c in comparisons if c.kind == "node" and not c]
    if not drifting:
        return None

    def key(c: TensorComparison) -> tuple[int, str]:
        node = _node_of(c.name, position)
        return (position.get(node, len(position)), c.name)

    first = min(drifting, key=key)
    node = _node_of(first.name, position)
    return NodeDrift(
        node=node,
        position=position.get(node, -1),
        transform=(node_transform or {}).get(node),
        drifting_nodes=len(drifting),
    )


def _graph_ordered(comparisons: list[TensorComparison], node_order: Sequence[str] | None) -> list[TensorComparison]:
    """Outputs by name, then node captures in graph order (unknown nodes last, by name)."""
    position = {n: i for i, n in enumerate(node_order or ())}
    outputs = [c for c in comparisons if c.kind != "node"]
    nodes = sorted(
        (c for c in comparisons if c.kind == "node"),
        key=lambda c: (position.get(_node_of(c.name, position), len(position)), c.name),
    )
    return outputs + nodes


def _node_of(name: str, position: Mapping[str, int]) -> str:
    if name in position:
        return name
    head, dot, tail = name.rpartition(".")
    return head if dot and tail.isdigit() else name
