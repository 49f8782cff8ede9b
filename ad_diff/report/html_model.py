"""What the HTML report shows, built from the same :class:`~ad_diff.result.DiffResult` as every other report.

Plain data for the templates (``ad_diff/report/templates``): the verdict and root-cause groups in the PR
comment's order and numbering, the findings, the per-transform timeline, and each kind's section view
(:mod:`ad_diff.report.html_view`: the kind's own page, or its document drawn). Names stay raw strings here:
the templates escape every one of them (Jinja autoescape); text pieces meant as code are marked
``(text, True)``, never pre-rendered HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ad_diff import __version__
from ad_diff.core.escape import code_spans
from ad_diff.core.model import Finding, Severity
from ad_diff.explain.links import hints
from ad_diff.gate import FindingVerdict, GroupVerdict, Verdict
from ad_diff.report import svg
from ad_diff.report.common import (
    conflicts,
    counts,
    delta_text,
    headline,
    headline_parts,
    ignored_text,
    in_conflict,
    log_summary_parts,
    look,
    partition,
    plural,
    run_labels,
    status_pair,
)
from ad_diff.report.html_view import drawn, page_data, page_name
from ad_diff.report.json import SCHEMA_VERSION
from ad_diff.report.md_groups import LOOK, consequence_line, icon
from ad_diff.report.views import views
from ad_diff.result import DiffResult

Parts = list[tuple[str, bool]]
"""Text pieces, ``True`` where the piece is a name shown as code (or, in a log summary, emphasised)."""


@dataclass(frozen=True)
class FindingView:
    """One finding as the report lists it."""

    severity: str
    icon: str
    code: str
    category: str
    where: list[tuple[str, str]]
    """``(label, name)``: ``("", transform)``, ``("node", n)``, ``("tensor", t)``."""
    message: str
    gates: bool
    acknowledged: str | None
    explained_by: str | None
    hints: list[Parts]
    filter: str
    """Lower-case text the filter box matches."""


@dataclass(frozen=True)
class GroupView:
    """One root cause, numbered as in the PR comment."""

    n: int
    icon: str
    title: Parts
    stage: str | None
    evidence: Parts
    consequence: str
    settled: str
    """``acknowledged: <reason>`` / ``explained: <reason>`` for a settled group, else empty."""
    gated: bool
    findings: list[FindingView]
    root: int
    """How many of ``findings`` are the root cause's own (the rest are its consequences)."""
    filter: str


@dataclass(frozen=True)
class TransformRow:
    """One row of the per-transform table."""

    n: int
    stage: str
    transform: str
    baseline: str
    candidate: str
    delta: str
    sign: int
    changed: bool
    filter: str


@dataclass
class Report:
    """Everything the template draws."""

    title: str
    verdict: str
    headline: Parts
    counts: list[tuple[str, bool]]
    gate: str
    runs: list[dict[str, Any]]
    ignored: str
    primary: list[GroupView]
    secondary: list[GroupView]
    notes: list[FindingView]
    also: str
    stale: list[FindingView]
    """Entries of the expected-changes file that matched nothing (apart from the root causes)."""
    order: list[str]
    """The evidence sections (:data:`SECTIONS` that the page has), in the order of what the verdict rests on
    (:func:`section_order`)."""
    folded: set[str]
    """Sections drawn folded: the timeline and the transform table when no transform changed."""
    transforms: list[TransformRow]
    timeline: svg.Timeline
    nav: dict[str, str] = field(default_factory=dict)
    """Each evidence section's word in the navigation."""
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The kinds' own pages by section: ``template`` (a name :class:`~ad_diff.report.html_view.KindPages`
    loads) and the ``data`` it draws."""
    drawn: dict[str, Any] = field(default_factory=dict)
    """The sections of kinds without a page, drawn from their documents."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Kinds not compared, and why."""
    inputs: list[str] = field(default_factory=list)
    version: str = __version__
    schema: int = SCHEMA_VERSION


FRAME = ("timeline", "transforms")
"""The page's own evidence sections: the log kind's per-transform timeline and table. The kinds' sections
follow them, in pipeline order, when no finding ranks them."""
_NAV = {"timeline": "Timeline", "transforms": "Transforms"}


def section_order(result: DiffResult, verdict: Verdict, present: list[str]) -> tuple[list[str], set[str]]:
    """The sections of ``present`` (in their order when no finding ranks them) in the order of what the
    verdict rests on: the section of the first gating root cause's first finding first, then the next
    group's, ... (the verdict's group order, root findings before consequences); sections no problem is
    about after them; an unchanged timeline and transform table last, folded. Returns the order and the
    folded ones."""
    # lazy: the kinds' registry (their rule codes) is read only when an HTML report is built
    from ad_diff.kinds import KINDS, LOG

    kind_of = {r.code: k.key.name for k in (*KINDS, *result.section_kinds) for r in k.rules}
    # the log's findings are about what the frame's timeline and table show; a kind's, about its section
    shows = {name: FRAME if name == LOG.key.name else (name,) for name in kind_of.values()}
    conflict = conflicts(result.findings)
    changed = any(r.changed or in_conflict(r, conflict) for r in result.transforms)
    folded = set() if changed else {"timeline", "transforms"}
    rank: dict[str, tuple[int, int]] = {}
    problems = [f for gv in verdict.groups for f in gv.group.findings if f.severity is not Severity.INFO]
    for i, f in enumerate(problems):
        for s in shows.get(kind_of.get(f.code, ""), ()):
            rank.setdefault(s, (0, i))
    order = sorted(present, key=lambda s: (s in folded, rank.get(s, (1, present.index(s)))))
    return order, folded & set(present)


def _where(f: Finding) -> list[tuple[str, str]]:
    out = [("", f.transform)] if f.transform else []
    if f.node:
        out.append(("node", f.node))
    if f.tensor:
        out.append(("tensor", f.tensor))
    return out


def finding_view(fv: FindingVerdict) -> FindingView:
    """How one finding reads (its message without the transform prefix the ``where`` part already shows)."""
    f = fv.finding
    msg = f.message
    if f.transform and msg.startswith(f.transform + ": "):
        msg = msg[len(f.transform) + 2 :]
    hs = [code_spans(h.message) for h in hints(f)]
    words = [f.code, str(f.category), *(n for _, n in _where(f)), msg, *(h.message for h in hints(f))]
    text = " ".join(words)
    return FindingView(look(f), LOOK[look(f)], f.code, str(f.category), _where(f), msg,
                       fv.gated, f.acknowledged, f.explained_by, hs, text.lower())


def _group(n: int, gv: GroupVerdict, rows: dict[str, Any]) -> GroupView:
    g = gv.group
    settled = ""
    if g.settled:
        reason = next(
            (f.acknowledged or f.explained_by for f in g.findings if f.acknowledged or f.explained_by), ""
        )
        how = "acknowledged" if any(f.acknowledged for f in g.findings) else "explained"
        settled = f"{how}: {reason}"
    findings = [finding_view(fv) for fv in gv.findings]
    text = " ".join([g.title, g.stage or "", g.evidence, *(f.filter for f in findings)])
    return GroupView(n, icon(gv), list(g.title_parts), g.stage, code_spans(g.evidence),
                     consequence_line(g, rows, str, str), settled,
                     gv.gated, findings, len(g.root), text.lower())


def _also(verdict: Verdict) -> str:
    p = partition(verdict)
    if not verdict.failed:
        return ""
    kinds = [
        plural(len(p.below_gate), "root cause") + " below the gate level" if p.below_gate else "",
        plural(len(p.review), "warning") + " to review" if p.review else "",
        f"{len(p.settled)} acknowledged or explained" if p.settled else "",
        plural(len(p.improvements), "improvement") if p.improvements else "",
    ]
    kinds = [k for k in kinds if k]
    return "Also: " + ", ".join(kinds) + " (below)." if kinds else ""


def _runs(result: DiffResult) -> list[dict[str, Any]]:
    b, c, parent = run_labels(result.baseline.root, result.candidate.root)
    return [
        {"run": "baseline", "label": b, "path": str(result.baseline.root), "parent": parent,
         "log": list(log_summary_parts(result.baseline_log)), "notes": list(result.baseline.notes)},
        {"run": "candidate", "label": c, "path": str(result.candidate.root), "parent": parent,
         "log": list(log_summary_parts(result.candidate_log)), "notes": list(result.candidate.notes)},
    ]


def build(result: DiffResult, verdict: Verdict, title: str | None = None) -> Report:
    """The report of one comparison; ``title`` names it in the browser tab (default: the headline)."""
    p = partition(verdict)
    rows_by_name = {r.transform: r for r in reversed(result.transforms)}
    others = [*p.below_gate, *p.review, *p.settled, *p.improvements]
    primary, secondary = (list(p.gated), others) if verdict.failed else (others, [])
    groups = [_group(i, g, rows_by_name) for i, g in enumerate([*primary, *secondary], 1)]
    conflict = conflicts(result.findings)
    transforms = [
        TransformRow(i, r.stage, r.transform, *status_pair(r, conflict),
                     delta_text(r.delta), (r.delta or 0) and (1 if (r.delta or 0) > 0 else -1),
                     r.changed_anywhere,
                     f"{i} {r.stage} {r.transform} {' '.join(status_pair(r, conflict))}".lower())
        for i, r in enumerate(result.transforms, 1)
    ]
    shown = views(result)
    order, folded = section_order(result, verdict, [*FRAME, *(v.key for v in shown)])
    return Report(
        title=title or f"ad-diff: {headline(result, verdict)}",
        verdict=verdict.verdict.value,
        headline=list(headline_parts(result, verdict)),
        counts=[(c.text(), bool(c.count or c.not_analysed)) for c in counts(result)],
        gate=f"gate --fail-on {verdict.fail_on} \u2192 exit {verdict.exit_code}",
        runs=_runs(result),
        ignored=ignored_text(result),
        primary=groups[: len(primary)],
        secondary=groups[len(primary) :],
        notes=[finding_view(fv) for g in p.notes for fv in g.findings],
        stale=[finding_view(fv) for g in p.stale for fv in g.findings],
        also=_also(verdict),
        transforms=transforms,
        timeline=svg.timeline(result.transforms),
        nav=_NAV | {v.key: v.nav or v.title for v in shown},
        pages={v.key: {"template": page_name(v), "data": page_data(v)} for v in shown if v.page is not None},
        drawn={v.key: drawn(v) for v in shown if v.page is None},
        skipped={k: s.detail for k, s in result.skipped.items()},
        order=order,
        folded=folded,
        inputs=list(result.notes),
    )


__all__ = ["FindingView", "GroupView", "Report", "TransformRow", "build", "finding_view"]
