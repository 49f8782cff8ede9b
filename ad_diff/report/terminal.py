"""Terminal reporter: rich tables, rendered to a string (colour only when asked for)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ad_diff.core.model import Severity
from ad_diff.explain.links import hints
from ad_diff.gate import Verdict, gates
from ad_diff.kinds import SECTION_KINDS
from ad_diff.report.common import (
    counts,
    delta_text,
    group_gates,
    grouped,
    headline,
    ignored_text,
    log_summary,
    side_text,
)
from ad_diff.report.md_groups import consequence_line
from ad_diff.result import DiffResult

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}



def render(result: DiffResult, verdict: Verdict, color: bool = False, width: int = 120,
           show_unchanged: bool = False) -> str:
    """Render the terminal report; ``color`` adds ANSI styles (the CLI enables it on a TTY)."""
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, no_color=not color, width=width, highlight=False)
    style = "bold red" if verdict.verdict == "fail" else "bold green"
    con.print(Text(f"ad-diff: {headline(result, verdict)}", style=style))
    con.print(Text(" · ".join(c.text() for c in counts(result)) + f" · gate --fail-on {verdict.fail_on} "
                   f"\u2192 exit {verdict.exit_code}"))
    con.print(Text(f"baseline  {result.baseline.root}  [{log_summary(result.baseline_log)}]"))
    con.print(Text(f"candidate {result.candidate.root}  [{log_summary(result.candidate_log)}]"))
    if result.ignored_transforms:
        con.print(Text(ignored_text(result), style="dim"))
    findings, groups = grouped(result, verdict.fail_on)
    rows_by_name = {r.transform: r for r in reversed(result.transforms)}
    for g in groups:
        if g.severity is Severity.INFO and not group_gates(g, verdict.fail_on):
            continue
        mark = "x" if group_gates(g, verdict.fail_on) else "+" if g.cause.value == "improvement" else "-"
        con.print(Text(f" {mark} {g.id}. {g.title}" + (f"  ({g.stage})" if g.stage else ""),
                       style=_STYLE[g.severity] if mark != "+" else "green"))
        if g.evidence:
            con.print(Text(f"      {g.evidence}"))
        line = consequence_line(g, rows_by_name, str, str)
        if line:
            con.print(Text(f"      {line}"))

    if findings:
        t = Table(title=f"Findings ({len(findings)}), by root cause", title_justify="left", expand=False)
        for col in ("#", "sev", "code", "category", "where", "finding"):
            t.add_column(col, overflow="fold")
        for f in findings:
            where = " ".join(x for x in (f.transform, f.node and f"node={f.node}", f.tensor and f"tensor={f.tensor}") if x)
            sev = f.severity.value + ("*" if gates(f, verdict.fail_on) else "")
            msg = f.message
            if f.acknowledged:
                msg += f" [acknowledged: {f.acknowledged}]"
            if f.explained_by:
                msg += f" [explained by config: {f.explained_by}]"
            for h in hints(f):
                msg += f" [likely cause: {h.message}]"
            t.add_row(str(f.group or ""), Text(sev, style=_STYLE[f.severity]), f.code, f.category,
                      Text(where), Text(msg))
        con.print(t)
        con.print(Text("* = gates at --fail-on " + verdict.fail_on, style="dim"))

    rows = [(i, r) for i, r in enumerate(result.transforms, 1) if r.changed or show_unchanged]
    t = Table(title=f"Transforms ({sum(r.changed for r in result.transforms)} changed of {len(result.transforms)})",
              title_justify="left")
    for col, just in (("#", "right"), ("stage", "left"), ("transform", "left"), ("baseline", "right"),
                      ("candidate", "right"), ("delta", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for i, r in rows:
        d = r.delta
        t.add_row(str(i), r.stage, Text(r.transform), side_text(r.baseline), side_text(r.candidate),
                  Text(delta_text(d), style="red" if (d or 0) < 0 else "green" if (d or 0) > 0 else ""))
    if rows:
        con.print(t)
    for kind in SECTION_KINDS:
        section = result.sections.get(kind.key.name)
        if section is not None:
            con.print(kind.render_terminal(section, result))
    for n in result.notes:
        con.print(Text(f"note: {n}", style="dim"))
    return buf.getvalue()
