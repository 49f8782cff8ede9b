"""Geometry of the HTML report's charts (inline SVG): the per-transform timeline and the drift plots.

Numbers only: the templates draw the shapes and write every name through Jinja's autoescape. No charting
library runs in the browser (the report is one file that works offline) and none is needed in Python: the
charts are bars, dots and lines on fixed axes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ad_diff.core.model import Side, State, TransformComparison
from ad_diff.report.common import side_text

STATE_GLYPH = {
    State.SKIPPED: "S",
    State.DISABLED: "D",
    State.FAILED: "F",
    State.INCOMPLETE: "I",
    State.RESTORED: "R",
    State.ABSENT: "\u2013",
}
"""The letter the timeline writes under a transform that did not apply in a run."""

COLUMN = 14
"""Narrowest width of one transform in the timeline (px): two bars and a gap."""
WIDE = 1200
"""Width the timeline spreads a short pipeline over (px); columns are at most 3 x :data:`COLUMN`."""
PLOT_HEIGHT = 160
LEFT, TOP = 40, 22
"""Margins (px): the count axis on the left, change markers on top."""
MAX_POINTS = 300
"""Points drawn per scatter plot (evenly strided from the measured samples)."""


@dataclass(frozen=True)
class Bar:
    """One run's mark at one transform: a bar for a match count, or a letter for another state."""

    x: float
    y: float
    w: float
    h: float
    state: str
    glyph: str
    """Letter written below the axis for a run whose transform did not apply (empty when it applied)."""


@dataclass(frozen=True)
class Column:
    """One transform in the timeline."""

    n: int
    """1-based position in the pipeline (the report's transform numbers)."""
    x: float
    changed: bool
    title: str
    """Tooltip: number, stage/transform, both sides."""
    baseline: Bar
    candidate: Bar


@dataclass(frozen=True)
class Timeline:
    """The per-transform chart: both runs' match counts (bars) and states (letters), changed ones marked,
    every transform's name under its column and every stage's name in full below."""

    width: float
    height: float
    plot_top: float
    plot_bottom: float
    column: float
    """Width of one transform (px)."""
    columns: tuple[Column, ...]
    ticks: tuple[tuple[float, str], ...]
    """``(y, label)`` of the count axis, evenly spaced."""
    names: tuple[tuple[float, float, str], ...]
    """``(x, y, label)``: each transform's name, written downwards (rotated 90°) from ``(x, y)``; cut to
    :data:`NAME_CHARS` characters (the full name is the column's tooltip)."""
    stages: tuple[tuple[float, float, str, float], ...]
    """``(x_start, x_end, stage, label_y)`` of each run of consecutive transforms in one stage. The name is
    written whole at ``(x_start, label_y)``: labels go to the first row where they overlap no other label."""


NAME_CHARS = 40
"""Longest transform name written under the timeline (AD's longest keys are about 35 characters)."""
STAGE_ROW = 12
"""Height of one row of stage labels (px)."""


def _nice_ticks(v: int) -> tuple[int, int]:
    """``(step, top)``: an even count axis from 0 to ``top >= v`` in at most five steps of 1, 2 or 5 x 10^k
    (four steps of one for counts up to 4). Integer arithmetic only: a count is any integer a log holds (a
    310-digit one overflowed the float this once went through)."""
    if v <= 4:
        return 1, 4
    mag = 10 ** (len(str(v // 5)) - 1)
    for unit in (1, 2, 5, 10):
        step = unit * mag
        if -(-v // step) <= 5:
            return step, step * -(-v // step)
    return 10 * mag, 10 * mag * -(-v // (10 * mag))  # pragma: no cover - unit 10 always fits


def _height(count: int, top: int) -> float:
    """The bar height of ``count`` on an axis up to ``top``: the ratio first (exact for integers of any
    size), then pixels."""
    return PLOT_HEIGHT * (count / top)


def count_label(v: int) -> str:
    """A count as an axis label: as written up to 12 digits, else ``1.23e+310`` from its digits (a float
    cannot hold it)."""
    s = str(v)
    return s if len(s) <= 12 else f"{s[0]}.{s[1:3]}e+{len(s) - 1}"


def _bar(s: Side, x: float, w: float, top: int, base: float) -> Bar:
    if s.state is State.APPLIED:
        h = _height(s.matches or 0, top)
        return Bar(x, base - h, w, h, s.state.value, "")
    return Bar(x, base, w, 0.0, s.state.value, STATE_GLYPH.get(s.state, "?"))


StagePlace = tuple[float, float, str, float]


def _stage_rows(spans: list[tuple[float, float, str]], top: float) -> tuple[StagePlace, ...]:
    """Place each stage's whole name in the first row where it overlaps no label placed before it."""
    ends: list[float] = []  # right end of the last label in each row
    out = []
    for x0, x1, stage in spans:
        right = x0 + 2 + len(stage) * CHAR
        row = next((i for i, end in enumerate(ends) if end + CHAR <= x0), len(ends))
        if row == len(ends):
            ends.append(right)
        else:
            ends[row] = right
        out.append((x0, x1, stage, top + (row + 1) * STAGE_ROW))
    return tuple(out)


def timeline(rows: tuple[TransformComparison, ...]) -> Timeline:
    """Lay out ``rows`` (pipeline order) as one column per transform."""
    most = max((s.matches or 0 for r in rows for s in (r.baseline, r.candidate) if s.state is State.APPLIED),
               default=0)
    step, top = _nice_ticks(most)
    base = TOP + PLOT_HEIGHT
    col = max(COLUMN, min(3 * COLUMN, WIDE // max(len(rows), 1)))
    bar = (col - 2) / 2
    columns = []
    for i, r in enumerate(rows):
        x = LEFT + i * col
        title = (f"{i + 1} {r.stage}/{r.transform}: baseline {side_text(r.baseline)}, candidate "
                 f"{side_text(r.candidate)}" + (" (changed)" if r.changed_anywhere else ""))
        columns.append(Column(i + 1, x, r.changed_anywhere, title, _bar(r.baseline, x + 1, bar, top, base),
                              _bar(r.candidate, x + 1 + bar, bar, top, base)))
    ticks = tuple((base - _height(v, top), count_label(v)) for v in range(0, top + 1, step))
    name_top = base + GLYPHS
    longest = max((min(len(r.transform), NAME_CHARS) for r in rows), default=0)
    names = tuple((LEFT + i * col + col / 2 - 3, name_top, _fit(r.transform, NAME_CHARS * CHAR))
                  for i, r in enumerate(rows))
    spans: list[tuple[float, float, str]] = []
    for i, r in enumerate(rows):
        x = LEFT + i * col
        if spans and spans[-1][2] == r.stage:
            spans[-1] = (spans[-1][0], x + col, r.stage)
        else:
            spans.append((x, x + col, r.stage))
    stage_top = name_top + longest * CHAR + 6
    stages = _stage_rows(spans, stage_top)
    bottom = max((y for *_, y in stages), default=stage_top) + 6
    labels_end = max((x0 + 2 + len(st) * CHAR for x0, _, st, _ in stages), default=0)
    width = max(LEFT + len(rows) * col + 8, labels_end)
    return Timeline(width, bottom, TOP, base, col, tuple(columns), ticks, names, stages)


CHAR = 5.5
"""Width of one character of a label (px, at the chart's 9 px font)."""
GLYPHS = 28
"""Room under the axis for the two rows of state letters (px)."""


def _fit(label: str, room: float) -> str:
    n = int((room - 4) // CHAR)
    if len(label) <= n:
        return label
    return label[: n - 1] + "…" if n >= 3 else ""


@dataclass(frozen=True)
class Histogram:
    """The error histogram of one tensor: bars over log10 |error|, the absolute tolerance as a line."""

    width: float
    height: float
    bars: tuple[tuple[float, float, float, float, int], ...]
    """``(x, y, w, h, count)``."""
    atol_x: float | None
    ticks: tuple[tuple[float, str], ...]
    """``(x, label)`` of the error axis (powers of ten)."""
    total: int


HIST_W, HIST_H, PAD = 360, 150, 28


def histogram(lo: float, hi: float, counts: tuple[int, ...], atol: float) -> Histogram:
    """Bars of ``counts`` (equal bins of log10 |error| from ``lo`` to ``hi``), heights on a sqrt scale so a
    few outliers stay visible beside millions of rounding errors."""
    peak = max(counts, default=0) or 1
    n = len(counts) or 1
    w = (HIST_W - 2 * PAD) / n
    plot_h = HIST_H - 2 * PAD
    bars = []
    for i, c in enumerate(counts):
        h = math.sqrt(c / peak) * plot_h if c else 0.0
        bars.append((PAD + i * w, HIST_H - PAD - h, max(w - 0.5, 0.5), h, c))

    def x_of(v: float) -> float:
        return PAD + (v - lo) / (hi - lo) * (HIST_W - 2 * PAD) if hi > lo else PAD

    atol_x = x_of(math.log10(atol)) if atol > 0 and lo <= math.log10(atol) <= hi else None
    step = max(1, math.ceil((hi - lo) / 6))
    ticks = tuple((x_of(e), f"1e{e}") for e in range(math.ceil(lo), math.floor(hi) + 1, step))
    return Histogram(HIST_W, HIST_H, tuple(bars), atol_x, ticks, sum(counts))


@dataclass(frozen=True)
class Scatter:
    """Baseline (x) against candidate (y) values at sampled positions, with the diagonal."""

    width: float
    height: float
    points: tuple[tuple[float, float], ...]
    lo: float
    hi: float
    shown: int
    sampled: int


SCATTER = 220


def scatter(xs: tuple[float, ...], ys: tuple[float, ...]) -> Scatter | None:
    """At most :data:`MAX_POINTS` of the sampled pairs, on a square with equal axes; ``None`` without any
    finite pair."""
    pairs = [(x, y) for x, y in zip(xs, ys, strict=False) if math.isfinite(x) and math.isfinite(y)]
    if not pairs:
        return None
    stride = max(1, math.ceil(len(pairs) / MAX_POINTS))
    shown = pairs[::stride]
    lo = min(min(x, y) for x, y in pairs)
    hi = max(max(x, y) for x, y in pairs)
    span = (hi - lo) or 1.0
    size = SCATTER - 2 * PAD

    def px(v: float) -> float:
        return round(PAD + (v - lo) / span * size, 1)

    points = tuple((px(x), round(SCATTER - px(y), 1)) for x, y in shown)
    return Scatter(SCATTER, SCATTER, points, lo, hi, len(shown), len(pairs))


__all__ = ["Bar", "Column", "Histogram", "Scatter", "Timeline", "histogram", "scatter", "timeline"]
