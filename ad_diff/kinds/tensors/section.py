"""The ``tensors`` section of the reports: one table row per output tensor, node-capture summary, notes.

Pure functions of :class:`~ad_diff.tensor_model.TensorAnalysis`; every name is escaped.
"""

from __future__ import annotations

from typing import Any

from ad_diff.core.escape import html_code, md_code, md_escape
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison
from ad_diff.kinds.tensors.plots import plot_files

MAX_NODE_ROWS = 20


def verdict_text(c: TensorComparison) -> str:
    """``identical``, ``acceptable drift``, ``beyond tolerance``, ``new NaN/Inf`` or ``shape mismatch``."""
    if c.mismatch == "shape" or c.stats is None:
        return "shape mismatch"
    if c.stats.new_nonfinite:
        return "new NaN/Inf"
    if c.judgement is not None and not c.judgement.within:
        return "beyond tolerance"
    if c.stats.max_abs == 0 and c.stats.outside == 0:
        return "identical"
    return "acceptable drift"


_ICON = {"identical": "\u2705", "acceptable drift": "\u2705", "beyond tolerance": "\u274c",
         "new NaN/Inf": "\u274c", "shape mismatch": "\u274c"}  # fmt: skip
_HEAD = "| Tensor | Verdict | Judged by | NRMSE | Cosine |"
"""Five narrow columns (a 780 px PR comment); the other statistics go in a folded list below the table."""
_RULE = "|---|---|---|---:|---:|"


def _num(x: float | None, fmt: str = ".3g") -> str:
    return "" if x is None else format(x, fmt)


def _shape(c: TensorComparison) -> str:
    shape = f"{c.baseline.dtype}{list(c.baseline.shape)}"
    if c.mismatch:
        shape += f" → {c.candidate.dtype}{list(c.candidate.shape)}"
    return shape


def _row(c: TensorComparison, plots_dir_rel: str | None) -> str:
    v = verdict_text(c)
    s, j = c.stats, c.judgement
    if s is None or j is None:
        return f"| {html_code(c.name)} | {_ICON[v]} {v} | | | |"
    verdict = f"{_ICON[v]} {v}"
    if plots_dir_rel is not None and v != "identical" and not c and s.histogram is not None:
        hist, scatter = plot_files(c.name)
        verdict += f" ([hist]({plots_dir_rel}/{hist}), [scatter]({plots_dir_rel}/{scatter}))"
    cells = [html_code(c.name), verdict, md_escape(f"{j.statistic}: {j.value:.3g} (limit {j.limit:.3g})"),
             _num(s.nrmse), _num(s.cosine, ".6f")]
    return "| " + " | ".join(cells) + " |"


def _stats_item(c: TensorComparison) -> str:
    """The statistics that do not fit the table, one list item per tensor."""
    s = c.stats
    parts = [md_escape(_shape(c))]
    if s is not None:
        parts.append(f"{s.outside_share:.1%} beyond the elementwise tolerance")
        if s.reference is not None:
            parts.append(f"{s.reference.ratio:.2f}× the baseline's RMSE against the reference")
        if s.top1 is not None:
            parts.append(f"top-1 {s.top1:.1%} / top-{s.k} {s.topk:.1%}")
        parts.append(f"NaN/Inf {s.nan_baseline}/{s.inf_baseline} → {s.nan_candidate}/{s.inf_candidate}")
    return f"- {md_code(c.name)}: " + "; ".join(parts)


def _stats(comparisons: list[TensorComparison], title: str) -> list[str]:
    items = [_stats_item(c) for c in comparisons]
    return [f"<details><summary>{title}</summary>", "", *items, "", "</details>", ""]


def render_markdown(analysis: TensorAnalysis, plots_dir_rel: str | None = None) -> str:
    """Markdown for the PR comment; ``plots_dir_rel`` is where the PNGs were written, relative to it."""
    out = ["### Recorded tensors", ""]
    outputs = [c for c in analysis.comparisons if c.kind == "output"]
    nodes = [c for c in analysis.comparisons if c.kind == "node"]
    if outputs:
        out += [_HEAD, _RULE]
        out += [_row(c, plots_dir_rel) for c in outputs]
        out.append("")
        out += _stats(outputs, "dtype, shape, elementwise share, reference, top-k, NaN/Inf per tensor")
        out.append(
            "_Verdicts: new NaN/Inf always fails; otherwise the judged statistic decides (default: error "
            "against the recorded reference relative to the baseline's, else normalised RMSE ≤ rtol). The "
            "elementwise share is shown as evidence; in bf16 it is large even for rounding noise._"
        )
        out.append("")
    if nodes:
        beyond = [c for c in nodes if not c]
        line = f"Per-node captures: {len(nodes)} compared, {len(beyond)} beyond tolerance"
        fd = analysis.first_drift
        if fd is not None:
            line += f"; **first drifting node** {md_code(fd.node)}"
            if fd.transform:
                line += f" (introduced by transform {md_code(fd.transform)})"
        out += [line + ".", ""]
        if fd is not None:
            shown = beyond[:MAX_NODE_ROWS]  # analysis keeps node captures in graph order
            out += ["<details><summary>Drifting node captures</summary>", "", _HEAD, _RULE]
            out += [_row(c, None) for c in shown]
            if len(beyond) > len(shown):
                out.append(f"| … {len(beyond) - len(shown)} more | | | | |")
            out += ["", *(_stats_item(c) for c in shown), "", "</details>", ""]
    if analysis.unmatched:
        out.append("Recorded in one run only:")
        for u in analysis.unmatched:
            out.append(f"- {md_code(u.name)} ({md_escape(u.kind)}): {md_escape(u.reason)}")
        out.append("")
    for u in analysis.unreadable:
        out.append(f"- \u274c unreadable {md_escape(u.run)} file {md_code(u.path.name)}: {md_escape(u.message)}")
    for note in analysis.notes:
        out.append(f"> {md_escape(note)}")
    return "\n".join(out).rstrip() + "\n"


def render_terminal(analysis: TensorAnalysis) -> Any:
    """A rich renderable (table of output tensors plus notes)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Recorded tensors", show_lines=False)
    for col in ("tensor", "kind", "verdict", "judged by", "beyond elementwise", "nrmse", "cosine", "top-1"):
        table.add_column(col)
    shown = [c for c in analysis.comparisons if c.kind == "output" or not c]
    for c in shown[:50]:
        v = verdict_text(c)
        s, j = c.stats, c.judgement
        style = "green" if v in ("identical", "acceptable drift") else "red"
        table.add_row(
            Text(c.name), c.kind, Text(v, style=style),
            Text("" if j is None else f"{j.statistic} {j.value:.3g} ≤? {j.limit:.3g}"),
            "" if s is None else f"{s.outside_share:.1%}", "" if s is None else f"{s.nrmse:.3g}",
            "" if s is None else f"{s.cosine:.6f}", "" if s is None or s.top1 is None else f"{s.top1:.1%}",
        )  # fmt: skip
    parts: list[Any] = [table]
    if analysis.first_drift is not None:
        fd = analysis.first_drift
        via = f" (transform {fd.transform})" if fd.transform else ""
        parts.append(Text(f"first drifting node: {fd.node}{via}", style="bold"))
    for u in analysis.unmatched:
        parts.append(Text(f"only in {u.present_in}: {u.name} ({u.kind})"))
    for u in analysis.unreadable:
        parts.append(Text(f"unreadable {u.run} file {u.path.name}: {u.message}", style="red"))
    for note in analysis.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)
