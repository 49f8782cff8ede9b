"""The tensor comparison in one function: discover -> pair -> measure -> judge (no findings here).

:func:`analyze_tensors` is what the tensors kind calls when both runs have ``tensors/``. Graph alignment
(another kind) supplies ``node_order`` (baseline node names in graph order, with ``order_source`` saying
where it came from) and ``node_transform`` (candidate node -> the transform that introduced or rewrote it)
for the first-drifting-node search; both are plain inputs here. ``classify.classify`` makes the findings.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np  # loaded with this module anyway: .gpu imports it

from ad_diff.core.model import BASELINE, CANDIDATE, other_run
from ad_diff.core.moe import MoeRouting
from ad_diff.errors import AdDiffError, UsageError
from ad_diff.kinds.tensors import ranks
from ad_diff.kinds.tensors.find import SUFFIXES, RunTensors, discover, read_index
from ad_diff.kinds.tensors.gpu import device_note, resolve_device
from ad_diff.kinds.tensors.measure import MeasureOptions, measure
from ad_diff.kinds.tensors.model import (
    LayerRouting,
    Mismatch,
    TensorAnalysis,
    TensorComparison,
    TensorKind,
    TensorRecord,
    TensorVerdict,
    Unmatched,
    UntrustedReference,
)
from ad_diff.kinds.tensors.order import first_drifting_node, graph_ordered, rows_origin
from ad_diff.kinds.tensors.reader import ChunkReader, compute_dtype, lanes
from ad_diff.kinds.tensors.tolerance import judge, merge_dtypes, needs_relative, resolve, row_limits, verdict
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
    order_source: str | None = None,
    gathered: Mapping[str, str] | None = None,
    moe: Sequence[MoeRouting] = (),
) -> TensorAnalysis:
    """Compare the tensors two runs recorded (their ``tensors/`` folders) under ``settings``.

    ``renamed`` maps candidate node names to the baseline names that graph alignment paired them with
    (a pass added upstream shifts FX name counters), so per-node captures pair by node, not by name.
    Unreadable files, one-sided tensors and shape mismatches become values; only an internal bug raises.
    ``order_source`` says where ``node_order`` came from (it is stated wherever the order is used).
    ``gathered`` maps a run to the evidence that its logits keep only the last position
    (``gather_logits_before_lm_head`` in its log or config): that run's ``[B, 1, V]`` logits are compared with
    the other run's last position, when the layout leaves no doubt. ``moe``: the baseline's MoE layers
    (:class:`ad_diff.core.moe.MoeRouting`), whose routing is compared where their routers were captured
    (:mod:`.flips`).
    """
    base = discover(baseline_tensors, BASELINE)
    cand = discover(candidate_tensors, CANDIDATE)
    notes: list[str] = []
    base, cand = _across_ranks(base, cand, notes)
    cand_outputs, n_renamed = _paired_names(cand.outputs, renamed or {})
    if n_renamed:
        notes.append(
            f"{n_renamed} candidate node capture(s) paired under their baseline names through graph "
            "alignment (their FX names shifted)"
        )
    device = _device(getattr(settings, "tensor_device", "cpu"), notes)
    plots = bool(getattr(settings, "tensor_plots", False))  # the plots' data (the HTML report draws them)
    wants_png = getattr(settings, "plots_dir", None) is not None
    if plots and wants_png and importlib.util.find_spec("matplotlib") is None:
        notes.append("plots were requested but matplotlib is not installed (pip install 'ad-diff[plots]')")
    pairs, unmatched = _pairs(base, cand, cand_outputs)
    refs, untrusted, source = trusted_references(base, cand, getattr(settings, "reference_dir", None))
    if source and source not in ("baseline", "both runs"):
        notes.append(f"references given with --reference {source}; the runs' own tensors/reference/ not used")
    ctx = _Ctx(base, cand, settings, device, plots, dict(gathered or {}), refs)
    comparisons = _compare_all(pairs, ctx)
    routing, comparisons = _routing(moe, comparisons, base, cand_outputs, node_order, ctx)
    notes += [c.shape_note for c in comparisons if c.shape_note]
    comparisons = graph_ordered(comparisons, node_order)
    drift = first_drifting_node(comparisons, node_order, node_transform, order_source)
    if any(c.kind is TensorKind.NODE for c in comparisons) and node_order is None:
        notes.append(
            "per-node captures compared without graph order (no graph dumps in both runs): "
            "the first drifting node cannot be named"
        )
    problems = _input_problems(base, cand)
    return TensorAnalysis(
        comparisons=tuple(comparisons),
        unmatched=tuple(unmatched),
        unreadable=base.unreadable + cand.unreadable,
        first_drift=drift,
        device=device,
        notes=tuple(notes),
        input_problems=tuple(p for _, p in problems),
        inputs_differing=tuple(n for n, _ in problems),
        rows_origin=rows_origin(comparisons, node_order),
        untrusted_references=tuple(untrusted),
        reference_source=source,
        routing=routing,
        moe_layers=len(moe),
    )


def _routing(
    moe: Sequence[MoeRouting], comparisons: list[TensorComparison], base: RunTensors,
    cand_outputs: dict[str, TensorRecord], node_order: Sequence[str] | None, ctx: _Ctx,
) -> tuple[tuple[LayerRouting, ...], list[TensorComparison]]:
    """Each MoE layer's routing and the comparisons it re-judges (:mod:`.flips`); nothing without MoE."""
    if not moe:
        return (), comparisons
    from ad_diff.kinds.tensors.flips import judge_routing  # lazy: only MoE graphs

    return judge_routing(
        moe, comparisons, base.outputs, cand_outputs, base.inputs, node_order,
        lambda c, rows: _compare(c.name, c.baseline, c.candidate, ctx, rows),
    )  # fmt: skip


def _device(asked: str, notes: list[str]) -> str:
    """``cpu`` (numpy) or ``cuda`` (torch); ``cuda`` that cannot be had raises a UsageError (exit 2)."""
    device, note = resolve_device(asked)
    notes += [n for n in (note, device_note(device)) if n]
    return device


def _paired_names(
    outputs: Mapping[str, TensorRecord], renamed: Mapping[str, str]
) -> tuple[dict[str, TensorRecord], int]:
    """Candidate records keyed by the baseline name of their node; outputs and unmapped nodes keep theirs.

    A rename that would collide with another capture's key is not applied (the name then pairs as is).
    """
    keys = {n: (renamed.get(n, n) if r.kind is TensorKind.NODE else n) for n, r in outputs.items()}
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


def _pairs(base: RunTensors, cand: RunTensors, cand_outputs: Mapping[str, TensorRecord]
           ) -> tuple[list[tuple[str, TensorRecord, TensorRecord]], list[Unmatched]]:
    """The outputs both runs recorded, by name, and the ones only one run did (with why)."""
    pairs: list[tuple[str, TensorRecord, TensorRecord]] = []
    unmatched: list[Unmatched] = []
    for name in sorted(set(base.outputs) | set(cand_outputs)):
        b, c = base.outputs.get(name), cand_outputs.get(name)
        if b is None or c is None:
            rec = b or c
            assert rec is not None
            side = BASELINE if b is not None else CANDIDATE
            lost = (cand if b is not None else base).unreadable
            why = f"not recorded by the {other_run(side)} run"
            if lost:
                why += ", which has unreadable tensor files"
            unmatched.append(Unmatched(name, rec.kind, side, why))
            continue
        pairs.append((name, b, c))
    return pairs, unmatched


def _across_ranks(base: RunTensors, cand: RunTensors, notes: list[str]) -> tuple[RunTensors, RunTensors]:
    """Both runs' outputs and inputs keyed so that each rank one run recorded meets its counterpart in the
    other (:mod:`.ranks`: a sharded run against an unsharded one, or two world sizes)."""
    bo, co, said = ranks.spread(base.outputs, cand.outputs)
    bi, ci, _ = ranks.spread(base.inputs, cand.inputs)  # the inputs follow the outputs: said once
    notes += said
    return replace(base, outputs=bo, inputs=bi), replace(cand, outputs=co, inputs=ci)


@dataclass(frozen=True)
class _Ctx:
    base: RunTensors
    cand: RunTensors
    settings: Settings
    device: str
    plots: bool
    gathered: dict[str, str]
    references: dict[str, TensorRecord]
    """The trusted references (:func:`trusted_references`)."""


def _compare_all(pairs: list[tuple[str, TensorRecord, TensorRecord]], ctx: _Ctx) -> list[TensorComparison]:
    """Every pair, in name order; ``settings.tensor_jobs`` threads (each comparison is independent)."""
    jobs = min(max(1, ctx.settings.tensor_jobs), len(pairs))
    if jobs <= 1:
        return [_compare(n, b, c, ctx) for n, b, c in pairs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda p: _compare(p[0], p[1], p[2], ctx), pairs))


def last_position(full: TensorRecord, gathered: TensorRecord) -> TensorRecord | None:
    """``full``'s last position of dim -2, when ``gathered`` is exactly that layout (``[B, S, V]`` vs
    ``[B, 1, V]``, every other dim equal, ``S > 1``); ``None`` when the shapes allow another reading."""
    fs, gs = full.shape, gathered.shape
    if len(fs) != len(gs) or len(fs) < 2 or gs[-2] != 1 or fs[-2] <= 1:
        return None
    if fs[:-2] != gs[:-2] or fs[-1] != gs[-1]:
        return None
    return replace(full, shape=gs, select=(fs[-2], fs[-2] - 1))


def _explained_shape(
    name: str, b: TensorRecord, c: TensorRecord, ref: TensorRecord | None, ctx: _Ctx
) -> tuple[TensorRecord, TensorRecord, TensorRecord | None, str] | None:
    """Records to compare when a known transform explains the shape change, plus the note saying so."""
    if b.kind is not TensorKind.OUTPUT or not fnmatchcase(ranks.plain(name), LOGITS_GLOB):
        return None
    for run, (full, kept) in ((CANDIDATE, (b, c)), (BASELINE, (c, b))):
        why = ctx.gathered.get(run)
        sel = last_position(full, kept) if why else None
        if sel is None:
            continue
        rsel = (
            None
            if ref is None
            else (
                last_position(ref, kept)
                if ref.shape == full.shape
                else (ref if ref.shape == kept.shape else None)
            )
        )
        note = (
            f"{name}: the {run} run keeps only the last position ({list(kept.shape)}; {why}); compared with "
            f"the last position of the {other_run(run)} run's {list(full.shape)}"
        )
        return (sel, c, rsel, note) if run == CANDIDATE else (b, sel, rsel, note)
    return None


def _compare(
    name: str, b: TensorRecord, c: TensorRecord, ctx: _Ctx, exclude: frozenset[int] = frozenset()
) -> TensorComparison:
    """One pair measured and judged; ``exclude``: rows left out (tokens a near-tie routing flip moved)."""
    settings, device, plots = ctx.settings, ctx.device, ctx.plots
    plain = ranks.plain(name)  # a rank's tensor is judged as the tensor it is (tolerances, reference, logits)
    tol = resolve(plain, b.dtype, settings.tolerances)
    mismatch = None
    if b.dtype != c.dtype:
        tol, mismatch = merge_dtypes(tol, resolve(plain, c.dtype, settings.tolerances)), Mismatch.DTYPE
    ref = ctx.references.get(name) or ctx.references.get(plain)
    note = None
    if b.shape != c.shape:
        explained = _explained_shape(name, b, c, ref, ctx)
        if explained is None:
            return TensorComparison(
                name, b.kind, b, c, ref, tol, None, None, TensorVerdict.SHAPE_MISMATCH, Mismatch.SHAPE
            )
        mb, mc, ref, note = explained
    else:
        mb, mc = b, c
    if ref is not None and ref.shape != mb.shape:
        ref = None
    logits = b.kind is TensorKind.OUTPUT and fnmatchcase(plain, LOGITS_GLOB)
    opts = MeasureOptions(
        atol=tol.atol, rtol=tol.rtol, device=device, topk=TOPK if logits else 0,
        histogram=plots or tol.statistic == "quantile", samples=PLOT_SAMPLES if plots else 0,
        relative=needs_relative(tol), rows=row_limits(tol), exclude=exclude,
    )  # fmt: skip
    stats = measure(mb, mc, opts, reference=ref)
    j = judge(stats, tol)
    return TensorComparison(
        name, b.kind, b, c, ref, tol, stats, j, verdict(stats, j, mismatch), mismatch, note
    )


def trusted_references(
    base: RunTensors, cand: RunTensors, user: Path | None = None
) -> tuple[dict[str, TensorRecord], list[UntrustedReference], str | None]:
    """The references that may judge the candidate, the ones that may not, and where the trusted ones come
    from.

    Invariant: the run under review never supplies its own standard of truth. A reference judges only when
    the user gave it (``--reference DIR``: then the runs' own are not consulted), or it is the baseline's and
    the candidate records none or the same tensor (dtype, shape and every value). A reference only the
    candidate records, or one that differs between the runs, is returned as untrusted (a gating finding).
    """
    if user is not None:
        return read_reference_dir(user), [], str(user)
    refs: dict[str, TensorRecord] = {}
    untrusted: list[UntrustedReference] = []
    for name in sorted(set(base.references) | set(cand.references)):
        b, c = base.references.get(name), cand.references.get(name)
        if b is None:
            untrusted.append(UntrustedReference(name, "candidate_only"))
        elif c is not None and not ((b.dtype, b.shape) == (c.dtype, c.shape) and _same_values(b, c)):
            untrusted.append(UntrustedReference(name, "differs"))
        else:
            refs[name] = b
    source = None if not refs else ("both runs" if all(n in cand.references for n in refs) else "baseline")
    return refs, untrusted, source


def read_reference_dir(folder: Path) -> dict[str, TensorRecord]:
    """The reference tensors of a ``--reference`` folder (tensor files keyed by output name, as
    ``tensors/reference/``); a folder that is missing, empty or unreadable is a usage error."""
    if not folder.is_dir():
        raise UsageError(f"--reference {folder}: not a folder; expected a folder of reference tensor files")
    out: dict[str, TensorRecord] = {}
    for path in sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES):
        try:
            records = read_index(path, TensorKind.REFERENCE)
        except AdDiffError as e:
            raise UsageError(f"--reference {folder}: {path.name} could not be read: {e}") from e
        for rec in records:
            if rec.name in out:
                raise UsageError(f"--reference {folder}: tensor '{rec.name}' is in {out[rec.name].path.name} "
                                 f"and {path.name}")
            out[rec.name] = rec
    if not out:
        raise UsageError(f"--reference {folder}: no tensor files (*.safetensors, *.pt) in it")
    return out


def _input_problems(base: RunTensors, cand: RunTensors) -> list[tuple[str, str]]:
    """``(name, how)`` of each recorded input that differs between the runs (names, dtypes and shapes,
    values)."""
    problems: list[tuple[str, str]] = []
    for name in sorted(set(base.inputs) | set(cand.inputs)):
        b, c = base.inputs.get(name), cand.inputs.get(name)
        if b is None or c is None:
            problems.append((name, f"{name} recorded in one run only"))
        elif (b.dtype, b.shape) != (c.dtype, c.shape):
            problems.append((name, f"{name}: {b.dtype}{list(b.shape)} vs {c.dtype}{list(c.shape)}"))
        elif not _same_values(b, c):
            problems.append((name, f"{name}: values differ"))
    return problems


def _same_values(a: TensorRecord, b: TensorRecord) -> bool:
    ra, rb = ChunkReader(a), ChunkReader(b)
    step = 1 << 20
    dtype = compute_dtype(a.dtype, b.dtype)
    bufs = np.empty(step * lanes(a.dtype), dtype), np.empty(step * lanes(a.dtype), dtype)
    try:
        for start in range(0, a.numel, step):
            n = min(step, a.numel - start)
            if not np.array_equal(ra.read(start, n, bufs[0]), rb.read(start, n, bufs[1]), equal_nan=True):
                return False
        return True
    finally:
        ra.close()
        rb.close()


__all__ = ["analyze_tensors", "first_drifting_node", "last_position", "read_reference_dir", "rows_origin",
           "trusted_references"]
