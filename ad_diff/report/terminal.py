"""Terminal reporter: rich tables, rendered to a string (colour only when asked for) at the width it is given.

The CLI passes the terminal's width (or ``COLUMNS``); below :data:`~ad_diff.core.terminal.NARROW` columns
the tables switch to narrow layouts (the finding's details below its code instead of beside it), so an
80-column terminal gets tables that fit instead of lines the terminal wraps. Every name is literal text
(never rich markup); ad-diff's own ```op``` spans and a run's ``crashed`` end are styled, not shown raw.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ad_diff.core.model import Finding, Severity, TransformComparison
from ad_diff.core.sinks import values
from ad_diff.core.terminal import Responsive, console, inline, parts
from ad_diff.explain.links import hints
from ad_diff.gate import Band, FindingVerdict, Verdict
from ad_diff.kinds.log.model import RunLog
from ad_diff.report.common import (
    conflicts,
    counts,
    delta_text,
    headline_parts,
    ignored_text,
    in_conflict,
    log_summary_parts,
    look,
    status_pair,
)
from ad_diff.report.md_groups import consequence_line
from ad_diff.report.terminal_view import section
from ad_diff.report.views import views
from ad_diff.result import DiffResult

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_LOOK = {**{s.value: style for s, style in _STYLE.items()}, "acknowledged": "green"}
"""A finding's style by :func:`ad_diff.report.common.look` (an acknowledged one is no error)."""
DEFAULT_WIDTH = 120
"""Width when none is given (the CLI passes the terminal's)."""


def _run_line(label: str, result: DiffResult, log: RunLog | None) -> Text:
    root = result.baseline.root if label == "baseline" else result.candidate.root
    line = Text(f"{label:<9} ")
    line.append(str(root))
    line.append("  [")
    for s, strong in log_summary_parts(log):
        line.append(s, style="bold red" if strong else "")
    line.append("]")
    return line


def _where(f: Finding) -> str:
    parts = (f.transform, f.node and f"node={f.node}", f.tensor and f"tensor={f.tensor}")
    return " ".join(x for x in parts if x)


def _message(f: Finding) -> Text:
    msg = Text(f.message)
    if f.acknowledged:
        msg.append(f" [acknowledged: {f.acknowledged}]", style="green")
    if f.explained_by:
        msg.append(f" [{f.explanation}]", style="green")
    for h in hints(f):
        msg.append(" [likely cause: ")
        msg.append_text(inline(h.message))
        msg.append("]")
    return msg


def _findings(judged: tuple[FindingVerdict, ...]) -> RenderableType:
    title = f"Findings ({len(judged)}), by root cause"
    findings = [fv.finding for fv in judged]
    gated = {id(fv.finding) for fv in judged if fv.gated}

    def sev(f: Finding) -> Text:
        return Text(look(f) + ("*" if id(f) in gated else ""), style=_LOOK[look(f)])

    def wide() -> Table:
        t = Table(title=title, title_justify="left")
        for col in ("#", "sev", "code", "category", "where", "finding"):
            t.add_column(col, overflow="fold")
        for f in findings:
            t.add_row(str(f.group or ""), sev(f), f.code, str(f.category), Text(_where(f)), _message(f))
        return t

    def narrow() -> Table:  # two columns: what and where on the first line, the message below
        t = Table(title=title, title_justify="left")
        t.add_column("#", justify="right")
        t.add_column("finding", overflow="fold")
        for f in findings:
            cell = Text.assemble(sev(f), " ", (f.code, "bold"), f" {str(f.category)}")
            where = _where(f)
            if where:
                cell.append(" · ")
                cell.append(where)
            cell.append("\n")
            cell.append_text(_message(f))
            t.add_row(str(f.group or ""), cell)
        return t

    return Responsive(wide, narrow)


def _transforms(result: DiffResult, rows: list[tuple[int, TransformComparison]]) -> RenderableType:
    changed = sum(r.changed_anywhere for r in result.transforms)
    n_conflict = sum(in_conflict(r, conflicts(result.findings)) and not r.changed_anywhere for _, r in rows)
    title = f"Transforms ({changed} changed of {len(result.transforms)}" + (
        f"; {n_conflict} whose log and dumps disagree)" if n_conflict else ")")

    def delta(r: TransformComparison) -> Text:
        d = r.delta or 0
        return Text(delta_text(r.delta), style="red" if d < 0 else "green" if d > 0 else "")

    conflict = conflicts(result.findings)

    def table(with_stage: bool) -> Table:
        t = Table(title=title, title_justify="left")
        t.add_column("#", justify="right")
        if with_stage:
            t.add_column("stage", overflow="fold")
        t.add_column("transform", overflow="fold")
        for col in ("baseline", "candidate", "delta"):
            t.add_column(col, justify="right")
        for i, r in rows:
            cells = [Text(str(i)), *([Text(r.stage)] if with_stage else []), Text(r.transform)]
            base, cand = status_pair(r, conflict)
            t.add_row(*cells, Text(base), Text(cand), delta(r))
        return t

    return Responsive(lambda: table(True), lambda: table(False))


def render(result: DiffResult, verdict: Verdict, color: bool = False, width: int = DEFAULT_WIDTH,
           show_unchanged: bool = False) -> str:
    """Render the terminal report ``width`` columns wide; ``color`` adds ANSI styles (on a TTY)."""
    result, verdict = values((result, verdict))  # every value on one line, bounded (core/sinks.py)
    con = console(width, color)
    style = "bold red" if verdict.failed else "bold green"
    con.print(parts((("ad-diff: ", False), *headline_parts(result, verdict)), style=style))
    con.print(Text(" · ".join(c.text() for c in counts(result)) + f" · gate --fail-on {verdict.fail_on} "
                   f"\u2192 exit {verdict.exit_code}"))
    con.print(_run_line("baseline", result, result.baseline_log))
    con.print(_run_line("candidate", result, result.candidate_log))
    if result.ignored_transforms:
        con.print(Text(ignored_text(result), style="dim"))
    findings = verdict.findings
    rows_by_name = {r.transform: r for r in reversed(result.transforms)}
    for gv in verdict.groups:
        g = gv.group
        if g.severity is Severity.INFO and not gv.gated:
            continue
        if gv.band is Band.STALE:  # about the expected-changes file: no root cause, so no number
            con.print(parts(((" ! ", False), *g.title_parts), style=_STYLE[Severity.WARNING]))
            continue
        settled = gv.band is Band.SETTLED
        mark = "x" if gv.gated else "+" if g.cause.value == "improvement" else "\u2713" if settled else "-"
        head = parts(((f" {mark} {g.id}. ", False), *g.title_parts),
                     style="green" if mark in ("+", "\u2713") else _STYLE[g.severity])
        if g.stage:
            head.append(f"  ({g.stage})")
        con.print(head)
        if g.evidence:
            con.print(Text("      ").append_text(inline(g.evidence)))
        line = consequence_line(g, rows_by_name, str, str)
        if line:
            con.print(Text(f"      {line}"))

    if findings:
        con.print(_findings(findings))
        con.print(Text("* = gates at --fail-on " + verdict.fail_on, style="dim"))
    conflict = conflicts(result.findings)
    rows = [(i, r) for i, r in enumerate(result.transforms, 1)
            if r.changed_anywhere or show_unchanged or in_conflict(r, conflict)]
    if rows:
        con.print(_transforms(result, rows))
    for view in views(result):
        con.print(section(view))
    for n in result.notes:
        con.print(Text(f"note: {n}", style="dim"))
    return con.text()
