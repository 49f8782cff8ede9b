"""The terminal view of a :class:`CandidateReport` (``ad-diff candidates`` on stdout): rich tables that fit.

Every name and message goes in as :class:`rich.text.Text`, so markup-looking text from a dump or a source
tree (``[bold]``, backticks) prints literally. Long cells fold inside their column instead of breaking the
table: the output fits the width it is given (the CLI passes the terminal's, or ``COLUMNS``).
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from ad_diff.candidates.model import Candidate, CandidateReport, LookupStatus, Recommendation
from ad_diff.candidates.render import evidence_item, layers_text, pattern_text, short_pattern
from ad_diff.candidates.source import AD_DIR
from ad_diff.core.sinks import values
from ad_diff.core.terminal import console

MIN_WIDTH, MAX_WIDTH = 40, 400
"""Widths outside this range are clamped (a stray ``COLUMNS=5`` must not produce one word per line)."""

_REC_STYLE = {
    Recommendation.USE_EXISTING_KERNEL: "green",
    Recommendation.NEEDS_TRITON_FALLBACK: "yellow",
    Recommendation.DEFER: "dim",
}
_LOOKUP_STYLE = {
    LookupStatus.FOUND: "green",
    LookupStatus.NOT_FOUND: "yellow",
    LookupStatus.NOT_SEARCHED: "dim",
}


def _layers(c: Candidate) -> str:
    return layers_text(c.layers)


WIDE = 120
"""From this width on the summary table also shows the pattern and the layers (narrower: in the detail)."""
_PREFIX = AD_DIR.as_posix() + "/"


def _summary(r: CandidateReport, width: int) -> Table:
    wide = width >= WIDE
    t = Table(box=box.SIMPLE_HEAD, expand=False, pad_edge=False)
    cols = [("#", "right"), ("candidate", "left")]
    cols += [("pattern", "left"), ("n", "right"), ("layers", "left")] if wide else [("n", "right")]
    cols += [("removed", "right"), ("lookup", "left"), ("recommendation", "left")]
    for name, just in cols:
        t.add_column(name, justify=just, overflow="fold", no_wrap=name in ("lookup", "recommendation"))  # type: ignore[arg-type]
    for i, c in enumerate(r.candidates, 1):
        row: list[str | Text] = [str(i), Text(c.name)]
        row += [Text(short_pattern(c)), str(c.count), _layers(c)] if wide else [str(c.count)]
        row += [
            str(c.nodes_removed),
            Text(c.lookup.status.value, style=_LOOKUP_STYLE[c.lookup.status]),
            Text(c.recommendation.value, style=_REC_STYLE[c.recommendation]),
        ]
        t.add_row(*row)
    return t


def _short_paths(text: str) -> str:
    return text.replace(_PREFIX, "")


def _detail(c: Candidate) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    grid.add_row("pattern", Text(pattern_text(c)))
    grid.add_row("where", Text(f"{c.count} instance(s), layers {_layers(c)}"))
    grid.add_row("lookup", Text(c.lookup.status.value, style=_LOOKUP_STYLE[c.lookup.status]))
    if c.lookup.status is LookupStatus.FOUND:
        for e in c.lookup.evidence:
            grid.add_row("evidence", Text(_short_paths(evidence_item(e))))
    grid.add_row("recommend", Text(c.recommendation.value, style=_REC_STYLE[c.recommendation]))
    for label, items, style in (
        ("strength", c.strengths, ""),
        ("weakness", c.weaknesses, "yellow"),
        ("risk", c.risks, ""),
    ):
        for s in items:
            grid.add_row(label, Text(_short_paths(s), style=style))
    return grid


def render_terminal(r: CandidateReport, width: int = 100, color: bool = False) -> str:
    """The report as terminal text, ``width`` columns wide; ``color`` adds ANSI styles."""
    r = values(r)  # every value on one line, bounded (core/sinks.py)
    width = max(MIN_WIDTH, min(MAX_WIDTH, width))
    con = console(width, color, soft_wrap=False)
    con.print(Text(f"Fusion candidates: {r.run}", style="bold"))
    con.print(
        Text(
            f"scanned {r.dump} (graph after {r.transform}, stage {r.stage}): {r.nodes_scanned} nodes, "
            f"{len(r.candidates)} repeated unfused pattern(s)"
        )
    )
    if r.source_tree is None:
        con.print(
            Text(
                "existing kernel lookup: not done (no --trtllm-src); every recommendation is defer",
                style="yellow",
            )
        )
    else:
        con.print(
            Text(
                f"existing kernel lookup: searched {r.source_tree} (paths below are relative to its "
                f"{_PREFIX})"
            )
        )
    if not r.candidates:
        con.print(Text("No repeated unfused pattern found."))
    else:
        con.print(_summary(r, width))
    for i, c in enumerate(r.candidates, 1):
        con.print(Text(f"{i}. {c.name}: {c.description}", style="bold"))
        con.print(_detail(c))
        con.print()
    for n in (*r.notes, *(f"source read: {x}" for x in r.source_notes)):
        con.print(Text(f"note: {n}", style="dim"))
    text = con.text()
    # rich pads grid rows to the full width; trailing blanks only make copied text ragged
    return text if color else "".join(line.rstrip() + "\n" for line in text.splitlines())
