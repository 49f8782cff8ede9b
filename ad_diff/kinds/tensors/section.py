"""The ``tensors`` section of the reports: one table row per output tensor, node-capture summary, notes.

Pure functions of :class:`~ad_diff.kinds.tensors.model.TensorAnalysis`; every name is escaped. Verdicts are
the stored ones (``TensorComparison.verdict``); nothing here decides one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy
from ad_diff.core.escape import html_code, md_code, md_escape, md_inline
from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison, TensorKind, Unmatched, times
from ad_diff.kinds.tensors.plots import plotted

if TYPE_CHECKING:
    import rich.console as rich_console
    import rich.table as rich_table
    import rich.text as rich_text
else:
    rich_table = lazy.module("rich.table")
    rich_text = lazy.module("rich.text")
    rich_console = lazy.module("rich.console")

MAX_NODE_ROWS = 20


def _icon(c: TensorComparison) -> str:
    return "\u2705" if c.passed else "\u274c"


_HEAD = "| Tensor | Verdict | Judged by | Outlier rows | Cosine |"
"""Five narrow columns (a 780 px PR comment); the other statistics go in a folded list below the table."""
_RULE = "|---|---|---|---:|---:|"
_COLS = 5


def _num(x: float | None, fmt: str = ".3g") -> str:
    return "" if x is None else format(x, fmt)


def shape_text(c: TensorComparison) -> str:
    """``BF16[2, 8]``, with ``→ <candidate>`` when the runs disagree on dtype or shape."""
    shape = f"{c.baseline.dtype}{list(c.baseline.shape)}"
    if c.mismatch:
        shape += f" → {c.candidate.dtype}{list(c.candidate.shape)}"
    return shape


def _row(c: TensorComparison) -> str:
    v = c.verdict.value
    s, j = c.stats, c.judgement
    if s is None or j is None:
        return f"| {html_code(c.name)} | {_icon(c)} {v} |" + " |" * (_COLS - 2)
    verdict = f"{_icon(c)} {v}"
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
    parts = [md_escape(shape_text(c))]
    if s is not None:
        parts.append(f"NRMSE {_num(s.nrmse)}")
        parts.append(f"{s.outside_share:.1%} beyond the elementwise tolerance")
        if s.rows is not None:
            parts.append(md_escape(f"rows judged: {rows_text(c)}"))
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


def rows_text(c: TensorComparison) -> str:
    """The rows judged, the outliers and the worst row's figures, in one line (``—`` without rows)."""
    rows = c.stats.rows if c.stats else None
    if rows is None:
        return "—"
    w = rows.worst[0]
    unit = " the baseline row's error vs ref" if rows.criterion == "reference" else " the median row"
    score = times(w.score) + (unit if math.isfinite(w.score) else "")
    text = f"{rows.rows}, {rows.outliers} outlier(s); {list(w.index)}: {score}, cos {w.cosine:.4f}"
    if w.argmax_candidate is not None:
        text += f", argmax {w.argmax_candidate}"
        if w.argmax_reference is not None:
            text += f" (ref {w.argmax_reference})"
    return text


def plots_line(analysis: TensorAnalysis, plots_dir: str | None, html: str | None) -> str:
    """Where the drift plots are, without links: a PR comment's relative link to a file of the job is dead on
    GitHub, so the sentence names the folder (and the HTML report, which holds the plots inline)."""
    n = len(plotted(analysis))
    if not n or (plots_dir is None and html is None):
        return ""
    where = []
    if html is not None:
        where.append(f"inline in the HTML report {md_code(html)}")
    if plots_dir is not None:
        where.append(f"as PNG files in {md_code(plots_dir.rstrip('/') + '/')} (`<tensor>-<hash>-hist.png`, "
                     "`-scatter.png`)")
    return (f"Error histogram and baseline-vs-candidate scatter of {n} drifting tensor(s): "
            + " and ".join(where) + ", in the job's artifact when this runs in CI.")


def render_markdown(analysis: TensorAnalysis, plots_dir: str | None = None, html: str | None = None) -> str:
    """Markdown for the PR comment; ``plots_dir`` (where ``--plots`` wrote PNGs) and ``html`` (the HTML
    report) are paths relative to the report, named in a sentence (not linked)."""
    out = ["### Recorded tensors", ""]
    outputs = [c for c in analysis.comparisons if c.kind is TensorKind.OUTPUT]
    nodes = [c for c in analysis.comparisons if c.kind is TensorKind.NODE]
    if outputs:
        out += [_HEAD, _RULE]
        out += [_row(c) for c in outputs]
        out.append("")
        where = plots_line(analysis, plots_dir, html)
        if where:
            out += [where, ""]
        out += _stats(outputs, "dtype, shape, NRMSE, rows judged, reference, top-k, NaN/Inf per tensor")
        out.append(
            "_Verdicts: new NaN/Inf always fails; an outlier row (one token far worse than the baseline's "
            "same "
            "row, or than the typical row) is drift; otherwise the judged statistic decides (default: error "
            "against the recorded reference relative to the baseline's, else normalised RMSE ≤ rtol). The "
            "elementwise share is shown as evidence; in bf16 it is large even for rounding noise._"
        )
        out.append("")
    for i, cause in enumerate(analysis.causes[:3], 1):
        out.append(f"- \U0001f50e likely cause {i} of the drift: {md_inline(cause.text)}")
    for ref in analysis.untrusted_references:
        why = md_escape(ref.why.replace("_", " "))
        out.append(f"- \u274c reference of {md_code(ref.name)} not used ({why})")
    if analysis.causes or analysis.untrusted_references:
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
            out += [_row(c) for c in shown]
            if len(beyond) > len(shown):
                out.append(f"| … {len(beyond) - len(shown)} more |" + " |" * (_COLS - 1))
            out += ["", *(_stats_item(c) for c in shown), "", "</details>", ""]
    one_out, folds = one_sided(analysis.unmatched)
    if one_out:
        out.append("Recorded in one run only:")
        for u in one_out:
            out.append(f"- {md_code(u.name)} ({md_escape(u.kind)}): {md_escape(u.reason)}")
        out.append("")
    for summary, items in folds:
        out += [f"<details><summary>{md_escape(summary)}</summary>", ""]
        out += [f"- {md_code(u.name)}: {md_escape(u.reason)}" for u in items]
        out += ["", "</details>", ""]
    for bad in analysis.unreadable:
        out.append(
            f"- \u274c unreadable {md_escape(bad.run)} file {md_code(bad.path.name)}: "
            f"{md_escape(bad.message)}"
        )
    for note in analysis.notes:
        out.append(f"> {md_escape(note)}")
    return "\n".join(out).rstrip() + "\n"


def one_sided(unmatched: Sequence[Unmatched]) -> tuple[list[Unmatched], list[tuple[str, list[Unmatched]]]]:
    """The tensors recorded by one run only, as reports show them: the outputs one by one (each is a finding),
    the node captures folded into one line per run with a count (``135 nodes recorded by the baseline
    only``): a fused node has no capture in the other run, so there are many and each says little."""
    outputs = [u for u in unmatched if u.kind is TensorKind.OUTPUT]
    folds = []
    for run in (BASELINE, CANDIDATE):
        items = [u for u in unmatched if u.kind is not TensorKind.OUTPUT and u.present_in == run]
        if items:
            noun = "node" if len(items) == 1 else "nodes"
            folds.append((f"{len(items)} {noun} recorded by the {run} only", items))
    return outputs, folds


_WIDE_COLUMNS = ("tensor", "kind", "verdict", "judged by", "rows (outliers)", "beyond elementwise", "nrmse",
                 "cosine", "top-1")
_NARROW_COLUMNS = ("tensor", "kind", "verdict", "judged by", "cosine")
WIDE_AT = 120
"""From this width the terminal table shows every statistic (narrower: the five that decide)."""


def _terminal_table(shown: list[TensorComparison], narrow: bool) -> Any:
    Table = rich_table.Table
    Text = rich_text.Text

    table = Table(title="Recorded tensors", show_lines=False)
    for col in _NARROW_COLUMNS if narrow else _WIDE_COLUMNS:
        table.add_column(col, overflow="fold")
    for c in shown:
        s, j = c.stats, c.judgement
        cells = {
            "tensor": Text(c.name), "kind": Text(c.kind.value),
            "verdict": Text(c.verdict.value, style="green" if c.passed else "red"),
            "judged by": Text("" if j is None else f"{j.statistic} {j.value:.3g} ≤? {j.limit:.3g}"),
            "rows (outliers)": Text(
                "" if s is None or s.rows is None else f"{s.rows.rows} ({s.rows.outliers})"
            ),
            "beyond elementwise": Text("" if s is None else f"{s.outside_share:.1%}"),
            "nrmse": Text("" if s is None else f"{s.nrmse:.3g}"),
            "cosine": Text("" if s is None else f"{s.cosine:.6f}"),
            "top-1": Text("" if s is None or s.top1 is None else f"{s.top1:.1%}"),
        }
        table.add_row(*(cells[col] for col in (_NARROW_COLUMNS if narrow else _WIDE_COLUMNS)))
    return table


def render_terminal(analysis: TensorAnalysis) -> Any:
    """A rich renderable (table of output tensors plus notes); every name is literal text."""
    Group = rich_console.Group
    Text = rich_text.Text

    from ad_diff.core.terminal import Responsive  # lazy: rich loads only for the terminal report

    shown = [c for c in analysis.comparisons if c.kind is TensorKind.OUTPUT or not c.passed][:50]
    parts: list[Any] = [
        Responsive(lambda: _terminal_table(shown, False), lambda: _terminal_table(shown, True), at=WIDE_AT)
    ]
    fd = analysis.first_drift
    if fd is not None and fd.node is not None:
        via = f" (transform {fd.transform})" if fd.transform else ""
        parts.append(Text(f"first drifting node: {fd.node}{via}", style="bold"))
    for i, cause in enumerate(analysis.causes[:3], 1):
        parts.append(Text(f"likely cause {i} of the drift: {cause.text.replace('`', '')}", style="bold"))
    for ref in analysis.untrusted_references:
        parts.append(Text(f"reference of {ref.name} not used ({ref.why.replace('_', ' ')})", style="red"))
    one_out, folds = one_sided(analysis.unmatched)
    for u in one_out:
        parts.append(Text(f"only in {u.present_in}: {u.name} ({u.kind})"))
    for summary, _ in folds:  # one line per run: the names are in --markdown, --html and --json
        parts.append(Text(summary))
    for bad in analysis.unreadable:
        parts.append(Text(f"unreadable {bad.run} file {bad.path.name}: {bad.message}", style="red"))
    for note in analysis.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)
