"""The graph section's page in the HTML report (``page.html.j2`` beside this module): rewritten regions side
by side, nodes that lost metadata highlighted, every transform whose dumps differ. Plain data for the
template; every name stays a raw string (the HTML reporter escapes it).

Sizes are bounded by the report, not by the input: at most :data:`MAX_REGIONS` regions per transform,
:data:`MAX_LINES` lines per side of a region and :data:`LINE_BUDGET` region lines in all (the JSON report
lists every region).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ad_diff.core.escape import code_spans
from ad_diff.core.model import BASELINE
from ad_diff.core.view import Page, ViewContext
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

MAX_REGIONS = 8
"""New regions shown per transform."""
MAX_LINES = 40
"""Dump lines shown per side of a region."""
LINE_BUDGET = 3000
"""Region lines shown in the whole report (keeps a large model's report small; the JSON has every region)."""


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


def page(a: GraphAnalysis, ctx: ViewContext) -> Page:
    """The HTML page of the graph section: ``page.html.j2`` of this folder and its :func:`data`, built only
    when the HTML report is drawn."""
    return Page(__package__ or "", "page.html.j2", lambda: data(a, ctx.ignored_transforms))


def data(a: GraphAnalysis, ignored: Collection[str]) -> GraphView:
    """What the HTML page of the graph section draws."""
    div = (a.first_divergence, a.first_divergence_detail or "") if a.first_divergence else None
    view = GraphView(", ".join(a.formats) or "none", div)
    for d in a.transforms:
        if d.moved is not None:
            view.sentences.append(moved_text(d))
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


__all__ = ["GraphTransformView", "GraphView", "Line", "RegionView", "data", "page"]
