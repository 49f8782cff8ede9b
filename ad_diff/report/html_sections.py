"""The kinds' sections of the HTML report: rewritten regions side by side, the tensor table with its drift
plots, the config diff. Plain data for the templates, built from each kind's section of the result; every
name stays a raw string (the templates escape it).

Sizes are bounded by the report, not by the input: at most :data:`MAX_REGIONS` regions per transform,
:data:`MAX_LINES` lines per side of a region and :data:`LINE_BUDGET` region lines in all (the JSON report
lists every region); at most :data:`MAX_NODE_ROWS` drifting node captures; plots hold at most
:data:`ad_diff.report.svg.MAX_POINTS` points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ad_diff.core.escape import code_spans
from ad_diff.core.model import BASELINE
from ad_diff.kinds.config import CONFIG
from ad_diff.kinds.config.model import ConfigAnalysis
from ad_diff.kinds.config.section import CHECK_TEXT, change_label
from ad_diff.kinds.graph import GRAPH
from ad_diff.kinds.graph.diff import GraphAnalysis, MetaChangeKind, TransformGraphDiff
from ad_diff.kinds.graph.model import Region
from ad_diff.kinds.graph.section import (
    ABSENCE_TEXT,
    interesting,
    is_new,
    moved_text,
    not_compared,
    regression_transforms,
)
from ad_diff.kinds.tensors import TENSORS
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison, TensorKind
from ad_diff.kinds.tensors.section import one_sided, rows_text, shape_text
from ad_diff.report import svg
from ad_diff.result import DiffResult

MAX_REGIONS = 8
"""New regions shown per transform."""
MAX_LINES = 40
"""Dump lines shown per side of a region."""
LINE_BUDGET = 3000
"""Region lines shown in the whole report (keeps a large model's report small; the JSON has every region)."""
MAX_NODE_ROWS = 50
"""Drifting node captures listed (graph order)."""
MAX_PLOTS = 12
"""Drifting tensors plotted: the outputs first, then node captures in graph order (where drift starts)."""


@dataclass(frozen=True)
class Line:
    """One dump line of a region; ``lost`` names where its node lost the metadata the baseline has."""

    name: str
    text: str
    lost: str | None = None


@dataclass(frozen=True)
class RegionView:
    """A rewritten region, baseline | candidate."""

    id: int
    kind: str
    section: str
    baseline: list[Line]
    candidate: list[Line]
    more_baseline: int
    more_candidate: int
    lost: int
    """Candidate lines of the region whose node lost metadata (highlighted)."""


@dataclass(frozen=True)
class GraphTransformView:
    """A transform where something new appears in the graphs."""

    key: str
    anchor: str
    status: str
    hints: list[list[tuple[str, bool]]]
    lost: list[tuple[str, str, str]]
    """``(candidate node, baseline shape : dtype, candidate shape : dtype)`` of metadata lost here."""
    coverage: str
    regions: list[RegionView]
    more_regions: int
    filter: str


@dataclass
class GraphView:
    """The graph section."""

    formats: str
    divergence: tuple[str, str] | None
    sentences: list[str] = field(default_factory=list)
    changed: list[GraphTransformView] = field(default_factory=list)
    table: list[dict[str, Any]] = field(default_factory=list)
    """Every transform whose dumps differ (the markdown's table)."""
    later: int = 0
    budget_hit: bool = False


def _cov(c: Any) -> str:
    return "-" if c is None else f"{100 * c.nodes:.1f}%"


def _status(d: TransformGraphDiff) -> str:
    if not d.two_sided:
        return "one run only"
    return "identical" if d.identical else "same structure" if d.structure_equal else "differs"


def _lines(names: tuple[str, ...], lines: tuple[str, ...], lost: dict[str, str] | None) -> list[Line]:
    return [Line(n, t, (lost or {}).get(n)) for n, t in zip(names, lines, strict=False)]


def _region(r: Region, lost: dict[str, str], budget: list[int]) -> RegionView:
    nb, nc = min(len(r.baseline_lines), MAX_LINES), min(len(r.candidate_lines), MAX_LINES)
    budget[0] -= nb + nc
    cand = _lines(r.candidate, r.candidate_lines[:nc], lost)
    return RegionView(r.id, r.kind.value, r.section, _lines(r.baseline, r.baseline_lines[:nb], None), cand,
                      len(r.baseline) - nb, len(r.candidate) - nc, sum(1 for ln in cand if ln.lost))


def graph_view(a: GraphAnalysis, ignored: tuple[str, ...]) -> GraphView:
    """The graph section of the HTML report."""
    div = (a.first_divergence, a.first_divergence_detail or "") if a.first_divergence else None
    view = GraphView(", ".join(a.formats) or "none", div)
    for d in a.transforms:
        if d.moved is not None:
            view.sentences.append(moved_text(d, code=False))
    for label, keys in (("baseline", a.only_baseline), ("candidate", a.only_candidate)):
        if keys:
            view.sentences.append(f"Dumps only in the {label} (it alone ran them): " + ", ".join(keys))
    for run, why, missing in not_compared(a):
        view.sentences.append(f"{ABSENCE_TEXT[why].format(run=run)}: " + ", ".join(missing))
    rows = [d for d in a.transforms if interesting(d)]
    view.later = sum(1 for d in rows if not is_new(d))
    for d in rows:
        nb = sum(1 for u in d.unmatched if u.run == BASELINE)
        view.table.append({"key": d.key, "status": "ignored" if d.transform in ignored else _status(d),
                           "unmatched": f"{nb} / {len(d.unmatched) - nb}",
                           "regions": f"{len(d.regions)} ({len(d.new_regions)} new)",
                           "coverage": f"{_cov(d.coverage.baseline)} \u2192 {_cov(d.coverage.candidate)}",
                           "new": is_new(d)})
    lost_at: dict[str, str] = {}  # candidate node -> the transform where it lost its metadata
    budget = [LINE_BUDGET]
    wanted = {d.key for d in regression_transforms(a) if d.transform not in ignored}
    for d in a.transforms:
        for m in d.new_meta_changes:
            if m.kind is MetaChangeKind.LOST:
                lost_at.setdefault(m.candidate, d.key)
        if d.key not in wanted:
            continue
        new = [r for r in d.regions if r.new]
        shown: list[RegionView] = []
        for r in new[:MAX_REGIONS]:
            if budget[0] <= 0:
                view.budget_hit = True
                break
            shown.append(_region(r, lost_at, budget))
        lost = [(m.candidate, m.before, m.after) for m in d.new_meta_changes if m.kind is MetaChangeKind.LOST]
        text = " ".join([d.key, *(h.message for h in d.hints), *(n for n, _, _ in lost)])
        view.changed.append(GraphTransformView(
            d.key, "g-" + str(len(view.changed) + 1), _status(d), [code_spans(h.message) for h in d.hints],
            lost[:50], f"{_cov(d.coverage.candidate_before)} \u2192 {_cov(d.coverage.candidate)}", shown,
            len(new) - len(shown), text.lower()))
    return view


@dataclass(frozen=True)
class TensorRow:
    """One tensor of the tensor table, with its plots when it drifts."""

    name: str
    kind: str
    verdict: str
    passed: bool
    judged: str
    rows: str
    cosine: str
    nrmse: str
    beyond: str
    shape: str
    histogram: svg.Histogram | None
    scatter: svg.Scatter | None
    filter: str


def _tensor_row(c: TensorComparison, plots: list[int]) -> TensorRow:
    """One row; plots while ``plots[0]`` (the plots left to draw) is positive."""
    s, j = c.stats, c.judgement
    hist = scat = None
    if s is not None and not c.passed and s.histogram is not None and plots[0] > 0:
        plots[0] -= 1
        h = s.histogram
        hist = svg.histogram(h.lo, h.hi, h.abs_counts, c.tolerance.atol)
        if s.samples:
            scat = svg.scatter(*s.samples)
    return TensorRow(
        c.name, c.kind.value, c.verdict.value, c.passed,
        "" if j is None else f"{j.statistic}: {j.value:.3g} (limit {j.limit:.3g})",
        rows_text(c), "" if s is None else f"{s.cosine:.6f}", "" if s is None else f"{s.nrmse:.3g}",
        "" if s is None else f"{s.outside_share:.1%}", shape_text(c), hist, scat,
        f"{c.name} {c.verdict.value}".lower(),
    )


def tensor_view(a: TensorAnalysis) -> dict[str, Any]:
    """The tensor section: output tensors, drifting node captures (graph order), one-sided and unreadable."""
    plots = [MAX_PLOTS]
    outputs = [_tensor_row(c, plots) for c in a.comparisons if c.kind is TensorKind.OUTPUT]
    beyond = [c for c in a.comparisons if c.kind is TensorKind.NODE and not c.passed]
    nodes_shown = [_tensor_row(c, plots) for c in beyond[:MAX_NODE_ROWS]]
    nodes = sum(1 for c in a.comparisons if c.kind is TensorKind.NODE)
    one_output, folds = one_sided(a.unmatched)
    fd = a.first_drift
    return {
        "outputs": outputs,
        "nodes": nodes_shown,
        "plots_capped": plots[0] <= 0 and sum(1 for c in a.comparisons if not c.passed) > MAX_PLOTS,
        "max_plots": MAX_PLOTS,
        "more_nodes": max(0, len(beyond) - MAX_NODE_ROWS),
        "node_count": nodes,
        "first_drift": None if fd is None or fd.node is None else
        {"node": fd.node, "transform": fd.transform, "order": fd.order_source},
        "unmatched": [(u.name, u.kind.value, u.present_in, u.reason) for u in one_output],
        "folded": [(summary, [(u.name, u.reason) for u in items]) for summary, items in folds],
        "unreadable": [(b.run, b.path.name, b.message) for b in a.unreadable],
        "notes": list(a.notes),
    }


def config_view(a: ConfigAnalysis) -> dict[str, Any]:
    """The config section: where each run's config came from, what changed, what the logs contradict."""
    sources = [
        {"run": run, "kind": cfg.source.kind.value, "files": list(cfg.source.files),
         "rule": cfg.source.order_rule}
        if cfg is not None else {"run": run, "kind": "none", "files": [], "rule": ""}
        for run, cfg in (("baseline", a.baseline), ("candidate", a.candidate))
    ]
    diff = a.diff
    changes = [(t.transform, t.stage or "", change_label(c), c.before_text, c.after_text, c.origin() or "")
               for t in (diff.transforms if diff else ()) for c in t.changes]
    settings = [(s.key, s.before_text, s.after_text, s.origin() or "")
                for s in (diff.settings if diff else ())]
    checks = [(ch.run, ch.transform, CHECK_TEXT[ch.kind], ch.config_value, ch.log_value, ch.origin or "")
              for ch in a.checks]
    explained, unexplained = a.explained, a.unexplained  # as the markdown section lists them
    notes = [*a.notes] + [f"{run}: {n}" for run, cfg in (("baseline", a.baseline), ("candidate", a.candidate))
                          if cfg is not None for n in cfg.source.notes]
    return {
        "sources": sources, "identical": diff is not None and diff.identical, "changes": changes,
        "settings": settings, "checks": checks, "unexplained": [f.message for f in unexplained],
        "explained": [(f.message, f.explained_by, f.gating) for f in explained], "notes": notes,
    }


def sections(result: DiffResult) -> dict[str, Any]:
    """Each compared kind's view by its section name, plus why the others were not compared."""
    out: dict[str, Any] = {}
    g = result.section(GRAPH.key)
    if isinstance(g, GraphAnalysis):
        out["graph"] = graph_view(g, result.ignored_transforms)
    t = result.section(TENSORS.key)
    if isinstance(t, TensorAnalysis):
        out["tensors"] = tensor_view(t)
    c = result.section(CONFIG.key)
    if isinstance(c, ConfigAnalysis):
        out["config"] = config_view(c)
    out["skipped"] = {k: s.detail for k, s in result.skipped.items()}
    return out


__all__ = ["GraphView", "Line", "RegionView", "TensorRow", "config_view", "graph_view", "sections",
           "tensor_view"]
