"""The tensor section's page in the HTML report (``page.html.j2`` beside this module): the tensor table with
each drifting tensor's error histogram and baseline-vs-candidate scatter (figures the HTML reporter draws).
Plain data for the template; every name stays a raw string (the HTML reporter escapes it).

At most :data:`MAX_NODE_ROWS` drifting node captures are listed and :data:`MAX_PLOTS` tensors plotted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ad_diff.core.view import Histogram, Page, Scatter, ViewContext
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison, TensorKind
from ad_diff.kinds.tensors.section import one_sided, rows_text, shape_text

MAX_NODE_ROWS = 50
"""Drifting node captures listed (graph order)."""
MAX_PLOTS = 12
"""Drifting tensors plotted: the outputs first, then node captures in graph order (where drift starts)."""


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
    histogram: Histogram | None
    scatter: Scatter | None
    filter: str


def _tensor_row(c: TensorComparison, plots: list[int]) -> TensorRow:
    """One row; plots while ``plots[0]`` (the plots left to draw) is positive."""
    s, j = c.stats, c.judgement
    hist = scat = None
    if s is not None and not c.passed and s.histogram is not None and plots[0] > 0:
        plots[0] -= 1
        h = s.histogram
        hist = Histogram(h.lo, h.hi, tuple(h.abs_counts), c.tolerance.atol)
        if s.samples:
            scat = Scatter(*s.samples)
    return TensorRow(
        c.name, c.kind.value, c.verdict.value, c.passed,
        "" if j is None else f"{j.statistic}: {j.value:.3g} (limit {j.limit:.3g})",
        rows_text(c), "" if s is None else f"{s.cosine:.6f}", "" if s is None else f"{s.nrmse:.3g}",
        "" if s is None else f"{s.outside_share:.1%}", shape_text(c), hist, scat,
        f"{c.name} {c.verdict.value}".lower(),
    )


def page(a: TensorAnalysis, ctx: ViewContext) -> Page:
    """The HTML page of the tensor section: ``page.html.j2`` of this folder and its :func:`data`, built only
    when the HTML report is drawn."""
    return Page(__package__ or "", "page.html.j2", lambda: data(a))


def data(a: TensorAnalysis) -> dict[str, Any]:
    """What the HTML page of the tensor section draws: output tensors, drifting node captures (graph order),
    one-sided and unreadable."""
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


__all__ = ["TensorRow", "data", "page"]
