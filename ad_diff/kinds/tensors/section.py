"""What the reports show of the tensor comparison (:class:`~ad_diff.core.view.SectionView`): one table row
per output tensor, the node-capture summary, notes; the HTML page is :mod:`.page`.

Pure functions of :class:`~ad_diff.kinds.tensors.model.TensorAnalysis`; each reporter escapes every name.
Verdicts are the stored ones (``TensorComparison.verdict``); nothing here decides one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.core.view import (
    Aside,
    Block,
    Column,
    Details,
    Fit,
    Items,
    Line,
    Page,
    Para,
    Quote,
    SectionView,
    Stack,
    Table,
    Tone,
    ViewContext,
    code,
    inline,
    line,
    strong,
    text,
)
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorComparison, TensorKind, Unmatched, times
from ad_diff.kinds.tensors.plots import plotted

MAX_NODE_ROWS = 20


def _icon(c: TensorComparison) -> str:
    return "\u2705" if c.passed else "\u274c"


_COLUMNS = (Column(line("Tensor")), Column(line("Verdict")), Column(line("Judged by")),
            Column(line("Outlier rows"), right=True), Column(line("Cosine"), right=True))
"""Five narrow columns (a 780 px PR comment); the other statistics go in a folded list below the table."""


def _num(x: float | None, fmt: str = ".3g") -> str:
    return "" if x is None else format(x, fmt)


def shape_text(c: TensorComparison) -> str:
    """``BF16[2, 8]``, with ``→ <candidate>`` when the runs disagree on dtype or shape."""
    shape = f"{c.baseline.dtype}{list(c.baseline.shape)}"
    if c.mismatch:
        shape += f" → {c.candidate.dtype}{list(c.candidate.shape)}"
    return shape


def _row(c: TensorComparison) -> tuple[Line, ...]:
    v = c.verdict.value
    s, j = c.stats, c.judgement
    if s is None or j is None:
        return (line(code(c.name)), line(f"{_icon(c)} {v}"))
    rows = "—"
    if s.rows is not None:
        rows = f"{s.rows.outliers} / {s.rows.rows}"
        if s.rows.outliers:
            rows += f" · {list(s.rows.worst[0].index)}"
    judged = f"{j.statistic}: {j.value:.3g} (limit {j.limit:.3g})"
    return (line(code(c.name)), line(f"{_icon(c)} {v}"), line(judged), line(rows),
            line(_num(s.cosine, ".6f")))


def _stats_item(c: TensorComparison) -> Line:
    """The statistics that do not fit the table, one list item per tensor."""
    s = c.stats
    parts = [shape_text(c)]
    if s is not None:
        parts.append(f"NRMSE {_num(s.nrmse)}")
        parts.append(f"{s.outside_share:.1%} beyond the elementwise tolerance")
        if s.rows is not None:
            parts.append(f"rows judged: {rows_text(c)}")
        if s.reference is not None:
            parts.append(f"{s.reference.ratio:.2f}× the baseline's RMSE against the reference")
        if s.top1 is not None:
            top = f"top-1 {s.top1:.1%} / top-{s.k} {s.topk:.1%}"
            if s.rows is not None and s.rows.next_token is not None:
                top += f", next token {s.rows.next_token:.1%} of {s.rows.sequences}"
            parts.append(top)
        parts.append(f"NaN/Inf {s.nan_baseline}/{s.inf_baseline} → {s.nan_candidate}/{s.inf_candidate}")
    return line(code(c.name), ": " + "; ".join(parts))


def _stats(comparisons: list[TensorComparison], title: str) -> Details:
    return Details(line(title), (Items(tuple(_stats_item(c) for c in comparisons)),))


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


def plots_line(analysis: TensorAnalysis, plots_dir: str | None, html: str | None) -> Line:
    """Where the drift plots are, without links: a PR comment's relative link to a file of the job is dead on
    GitHub, so the sentence names the folder (and the HTML report, which holds the plots inline)."""
    n = len(plotted(analysis))
    if not n or (plots_dir is None and html is None):
        return ()
    where: list[Line] = []
    if html is not None:
        where.append(line("inline in the HTML report ", code(html)))
    if plots_dir is not None:
        where.append(line("as PNG files in ", code(plots_dir.rstrip("/") + "/"), " (",
                          code("<tensor>-<hash>-hist.png"), ", ", code("-scatter.png"), ")"))
    joined = [s for i, w in enumerate(where) for s in ((text(" and "),) if i else ()) + w]
    return line(f"Error histogram and baseline-vs-candidate scatter of {n} drifting tensor(s): ", *joined,
                ", in the job's artifact when this runs in CI.")


_VERDICTS = ("Verdicts: new NaN/Inf always fails; an outlier row (one token far worse than the baseline's "
             "same row, or than the typical row) is drift; otherwise the judged statistic decides (default: "
             "error against the recorded reference relative to the baseline's, else normalised RMSE ≤ rtol). "
             "The elementwise share is shown as evidence; in bf16 it is large even for rounding noise.")


def _nodes_line(analysis: TensorAnalysis, nodes: list[TensorComparison]) -> Line:
    beyond = [c for c in nodes if not c.passed]
    out = [text(f"Per-node captures: {len(nodes)} compared, {len(beyond)} beyond tolerance")]
    fd = analysis.first_drift
    if fd is not None and fd.node is not None:
        out += [text("; "), strong("first drifting node"), text(" "), code(fd.node)]
        if fd.transform:
            out += [text(" (introduced by transform "), code(fd.transform), text(")")]
        if fd.order_source:
            out.append(text(f", in the graph order of the {fd.order_source}"))
    elif fd is not None:
        out.append(text("; the first drifting node cannot be named (no graph order places them)"))
    return (*out, text("."))


def document(analysis: TensorAnalysis, plots_dir: str | None = None, html: str | None = None
             ) -> tuple[Block, ...]:
    """The section of the PR comment; ``plots_dir`` (where ``--plots`` wrote PNGs) and ``html`` (the HTML
    report) are paths relative to the report, named in a sentence (not linked)."""
    out: list[Block] = []
    outputs = [c for c in analysis.comparisons if c.kind is TensorKind.OUTPUT]
    nodes = [c for c in analysis.comparisons if c.kind is TensorKind.NODE]
    if outputs:
        out.append(Table(_COLUMNS, tuple(_row(c) for c in outputs)))
        where = plots_line(analysis, plots_dir, html)
        if where:
            out.append(Para(where))
        out.append(_stats(outputs, "dtype, shape, NRMSE, rows judged, reference, top-k, NaN/Inf per tensor"))
        out.append(Aside(line(_VERDICTS)))
    said = [line(f"\U0001f50e likely cause {i} of the drift: ", inline(cause.text))
            for i, cause in enumerate(analysis.causes[:3], 1)]
    said += [line("\u274c reference of ", code(ref.name), f" not used ({ref.why.replace('_', ' ')})")
             for ref in analysis.untrusted_references]
    if said:
        out.append(Items(tuple(said)))
    if nodes:
        out.append(Para(_nodes_line(analysis, nodes)))
        if analysis.first_drift is not None:
            beyond = [c for c in nodes if not c.passed]
            shown = beyond[:MAX_NODE_ROWS]  # analysis keeps node captures in graph order
            rows = [_row(c) for c in shown]
            if len(beyond) > len(shown):
                rows.append((line(f"… {len(beyond) - len(shown)} more"),))
            out.append(Details(line("Drifting node captures"),
                               (Table(_COLUMNS, tuple(rows)), Items(tuple(_stats_item(c) for c in shown)))))
    one_out, folds = one_sided(analysis.unmatched)
    if one_out:
        out.append(Stack((Para(line("Recorded in one run only:")),
                          Items(tuple(line(code(u.name), f" ({u.kind}): {u.reason}") for u in one_out)))))
    for summary, items in folds:
        listed = Items(tuple(line(code(u.name), f": {u.reason}") for u in items))
        out.append(Details(line(summary), (listed,)))
    tail: list[Block] = []  # the unreadable files and the notes, line under line
    if analysis.unreadable:
        tail.append(Items(tuple(line(f"\u274c unreadable {bad.run} file ", code(bad.path.name),
                                     f": {bad.message}") for bad in analysis.unreadable)))
    if analysis.notes:
        tail.append(Quote(tuple(line(n) for n in analysis.notes)))
    if tail:
        out.append(Stack(tuple(tail)))
    return tuple(out)


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


def _terminal_table(shown: list[TensorComparison], narrow: bool) -> Table:
    cols = _NARROW_COLUMNS if narrow else _WIDE_COLUMNS
    rows = []
    for c in shown:
        s, j = c.stats, c.judgement
        cells = {
            "tensor": c.name, "kind": c.kind.value,
            "verdict": text(c.verdict.value, Tone.GOOD if c.passed else Tone.BAD),
            "judged by": "" if j is None else f"{j.statistic} {j.value:.3g} ≤? {j.limit:.3g}",
            "rows (outliers)": "" if s is None or s.rows is None else f"{s.rows.rows} ({s.rows.outliers})",
            "beyond elementwise": "" if s is None else f"{s.outside_share:.1%}",
            "nrmse": "" if s is None else f"{s.nrmse:.3g}",
            "cosine": "" if s is None else f"{s.cosine:.6f}",
            "top-1": "" if s is None or s.top1 is None else f"{s.top1:.1%}",
        }
        rows.append(tuple(line(cells[col]) for col in cols))
    return Table(tuple(Column(line(col)) for col in cols), tuple(rows), "Recorded tensors")


def glance(analysis: TensorAnalysis) -> tuple[Block, ...]:
    """The terminal's table of output tensors, and the notes."""
    shown = [c for c in analysis.comparisons if c.kind is TensorKind.OUTPUT or not c.passed][:50]
    parts: list[Block] = [Fit((_terminal_table(shown, False),), (_terminal_table(shown, True),), at=WIDE_AT)]
    fd = analysis.first_drift
    if fd is not None and fd.node is not None:
        via = f" (transform {fd.transform})" if fd.transform else ""
        parts.append(Para(line(text(f"first drifting node: {fd.node}{via}", Tone.STRONG))))
    for i, cause in enumerate(analysis.causes[:3], 1):
        parts.append(Para(line(text(f"likely cause {i} of the drift: {cause.text.replace('`', '')}",
                                    Tone.STRONG))))
    for ref in analysis.untrusted_references:
        parts.append(Para(line(text(f"reference of {ref.name} not used ({ref.why.replace('_', ' ')})",
                                    Tone.BAD))))
    one_out, folds = one_sided(analysis.unmatched)
    for u in one_out:
        parts.append(Para(line(f"only in {u.present_in}: {u.name} ({u.kind})")))
    for summary, _ in folds:  # one line per run: the names are in --markdown, --html and --json
        parts.append(Para(line(summary)))
    for bad in analysis.unreadable:
        parts.append(Para(line(text(f"unreadable {bad.run} file {bad.path.name}: {bad.message}", Tone.BAD))))
    for note in analysis.notes:
        parts.append(Para(line(text(f"note: {note}", Tone.WARN))))
    return tuple(parts)


def view(analysis: TensorAnalysis, ctx: ViewContext, page: Page | None = None) -> SectionView:
    """What the reports show of the tensor comparison, with its HTML ``page`` (:func:`.page.page`); the JUnit
    report lists its output tensors."""
    outputs = sorted({c.name for c in analysis.comparisons if c.kind == "output"}
                     | {u.name for u in analysis.unmatched if u.kind == "output"})
    return SectionView("tensors", "Recorded tensors", document(analysis, ctx.plots, ctx.html),
                       glance(analysis), nav="Tensors", tensors=tuple(outputs), page=page)
