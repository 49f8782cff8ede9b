"""The ``tensors`` section of the reports: one table row per output tensor, node-capture summary, notes.

Pure functions of :class:`~ad_diff.kinds.tensors.model.TensorAnalysis`; every name is escaped. Verdicts are
the stored ones (``TensorComparison.verdict``); nothing here decides one.
"""

from __future__ import annotations

import math
from typing import Any

from ad_diff.core.escape import html_code, md_code, md_escape
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison, TensorKind, times
from ad_diff.kinds.tensors.plots import plot_files

MAX_NODE_ROWS = 20


def _icon(c: TensorComparison) -> str:
    return "\u2705" if c.passed else "\u274c"


_HEAD = "| Tensor | Verdict | Judged by | Outlier rows | Cosine |"
"""Five narrow columns (a 780 px PR comment); the other statistics go in a folded list below the table."""
_RULE = "|---|---|---|---:|---:|"
_COLS = 5


def _num(x: float | None, fmt: str = ".3g") -> str:
    return "" if x is None else format(x, fmt)


def _shape(c: TensorComparison) -> str:
    shape = f"{c.baseline.dtype}{list(c.baseline.shape)}"
    if c.mismatch:
        shape += f" → {c.candidate.dtype}{list(c.candidate.shape)}"
    return shape


def _row(c: TensorComparison, plots_dir_rel: str | None) -> str:
    v = c.verdict.value
    s, j = c.stats, c.judgement
    if s is None or j is None:
        return f"| {html_code(c.name)} | {_icon(c)} {v} |" + " |" * (_COLS - 2)
    verdict = f"{_icon(c)} {v}"
    if plots_dir_rel is not None and not c.passed and s.histogram is not None:
        hist, scatter = plot_files(c.name)
        verdict += f" ([hist]({plots_dir_rel}/{hist}), [scatter]({plots_dir_rel}/{scatter}))"
    rows = "—"
    if s.rows is not None:
        rows = f"{s.rows.outliers} / {s.rows.rows}"
        if s.rows.outliers:
            rows += f" · {list(s.rows.worst[0].index)}"
    cells = [html_code(c.name), verdict, md_escape(f"{j.statistic}: {j.value:.3g} (limit {j.limit:.3g})"),
             md_escape(rows), _num(s.cosine, ".6f")]
    return "| " + " | ".join(cells) + " |"


def _stats_item(c: TensorComparison) -> str:
    """The statistics that do not fit the table, one list item per tensor."""
    s = c.stats
    parts = [md_escape(_shape(c))]
    if s is not None:
        parts.append(f"NRMSE {_num(s.nrmse)}")
        parts.append(f"{s.outside_share:.1%} beyond the elementwise tolerance")
        if s.rows is not None:
            parts.append(md_escape(f"rows judged: {_rows_cell(c)}"))
        if s.reference is not None:
            parts.append(f"{s.reference.ratio:.2f}× the baseline's RMSE against the reference")
        if s.top1 is not None:
            top = f"top-1 {s.top1:.1%} / top-{s.k} {s.topk:.1%}"
            if s.rows is not None and s.rows.next_token is not None:
                top += f", next token {s.rows.next_token:.1%} of {s.rows.sequences}"
            parts.append(top)
        parts.append(f"NaN/Inf {s.nan_baseline}/{s.inf_baseline} → {s.nan_candidate}/{s.inf_candidate}")
    return f"- {md_code(c.name)}: " + "; ".join(parts)


def _stats(comparisons: list[TensorComparison], title: str) -> list[str]:
    items = [_stats_item(c) for c in comparisons]
    return [f"<details><summary>{title}</summary>", "", *items, "", "</details>", ""]


def _rows_cell(c: TensorComparison) -> str:
    rows = c.stats.rows if c.stats else None
    if rows is None:
        return "—"
    w = rows.worst[0]
    unit = "x baseline row's error vs ref" if rows.criterion == "reference" else "x median row"
    score = times(w.score) + (unit if math.isfinite(w.score) else "")
    text = f"{rows.rows}, {rows.outliers} outlier(s); {list(w.index)}: {score}, cos {w.cosine:.4f}"
    if w.argmax_candidate is not None:
        text += f", argmax {w.argmax_candidate}"
        if w.argmax_reference is not None:
            text += f" (ref {w.argmax_reference})"
    return text


def render_markdown(analysis: TensorAnalysis, plots_dir_rel: str | None = None) -> str:
    """Markdown for the PR comment; ``plots_dir_rel`` is where the PNGs were written, relative to it."""
    out = ["### Recorded tensors", ""]
    outputs = [c for c in analysis.comparisons if c.kind is TensorKind.OUTPUT]
    nodes = [c for c in analysis.comparisons if c.kind is TensorKind.NODE]
    if outputs:
        out += [_HEAD, _RULE]
        out += [_row(c, plots_dir_rel) for c in outputs]
        out.append("")
        out += _stats(outputs, "dtype, shape, NRMSE, rows judged, reference, top-k, NaN/Inf per tensor")
        out.append(
            "_Verdicts: new NaN/Inf always fails; an outlier row (one token far worse than the baseline's "
            "same "
            "row, or than the typical row) is drift; otherwise the judged statistic decides (default: error "
            "against the recorded reference relative to the baseline's, else normalised RMSE ≤ rtol). The "
            "elementwise share is shown as evidence; in bf16 it is large even for rounding noise._"
        )
        out.append("")
    if nodes:
        beyond = [c for c in nodes if not c.passed]
        line = f"Per-node captures: {len(nodes)} compared, {len(beyond)} beyond tolerance"
        fd = analysis.first_drift
        if fd is not None and fd.node is not None:
            line += f"; **first drifting node** {md_code(fd.node)}"
            if fd.transform:
                line += f" (introduced by transform {md_code(fd.transform)})"
            if fd.order_source:
                line += f", in the graph order of the {md_escape(fd.order_source)}"
        elif fd is not None:
            line += "; the first drifting node cannot be named (no graph order places them)"
        out += [line + ".", ""]
        if fd is not None:
            shown = beyond[:MAX_NODE_ROWS]  # analysis keeps node captures in graph order
            out += ["<details><summary>Drifting node captures</summary>", "", _HEAD, _RULE]
            out += [_row(c, None) for c in shown]
            if len(beyond) > len(shown):
                out.append(f"| … {len(beyond) - len(shown)} more |" + " |" * (_COLS - 1))
            out += ["", *(_stats_item(c) for c in shown), "", "</details>", ""]
    if analysis.unmatched:
        out.append("Recorded in one run only:")
        for u in analysis.unmatched:
            out.append(f"- {md_code(u.name)} ({md_escape(u.kind)}): {md_escape(u.reason)}")
        out.append("")
    for bad in analysis.unreadable:
        out.append(
            f"- \u274c unreadable {md_escape(bad.run)} file {md_code(bad.path.name)}: "
            f"{md_escape(bad.message)}"
        )
    for note in analysis.notes:
        out.append(f"> {md_escape(note)}")
    return "\n".join(out).rstrip() + "\n"


def render_terminal(analysis: TensorAnalysis) -> Any:
    """A rich renderable (table of output tensors plus notes)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Recorded tensors", show_lines=False)
    for col in (
        "tensor",
        "kind",
        "verdict",
        "judged by",
        "rows (outliers)",
        "beyond elementwise",
        "nrmse",
        "cosine",
        "top-1",
    ):
        table.add_column(col)
    shown = [c for c in analysis.comparisons if c.kind is TensorKind.OUTPUT or not c.passed]
    for c in shown[:50]:
        v = c.verdict.value
        s, j = c.stats, c.judgement
        style = "green" if c.passed else "red"
        table.add_row(
            Text(c.name), c.kind.value, Text(v, style=style),
            Text("" if j is None else f"{j.statistic} {j.value:.3g} ≤? {j.limit:.3g}"),
            "" if s is None or s.rows is None else f"{s.rows.rows} ({s.rows.outliers})",
            "" if s is None else f"{s.outside_share:.1%}", "" if s is None else f"{s.nrmse:.3g}",
            "" if s is None else f"{s.cosine:.6f}", "" if s is None or s.top1 is None else f"{s.top1:.1%}",
        )  # fmt: skip
    parts: list[Any] = [table]
    fd = analysis.first_drift
    if fd is not None and fd.node is not None:
        via = f" (transform {fd.transform})" if fd.transform else ""
        parts.append(Text(f"first drifting node: {fd.node}{via}", style="bold"))
    for u in analysis.unmatched:
        parts.append(Text(f"only in {u.present_in}: {u.name} ({u.kind})"))
    for bad in analysis.unreadable:
        parts.append(Text(f"unreadable {bad.run} file {bad.path.name}: {bad.message}", style="red"))
    for note in analysis.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)
