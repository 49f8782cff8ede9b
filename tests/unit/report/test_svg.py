"""Geometry of the HTML report's charts: bars proportional to match counts, letters for other states, stages
in runs, a histogram with the tolerance where it belongs, scatter plots bounded in points."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.core.model import Side, State, TransformComparison
from ad_diff.report import svg


def _row(stage: str, name: str, b: Side, c: Side) -> TransformComparison:
    return TransformComparison(stage, name, 0, b, c)


def test_timeline_bars_letters_and_stages() -> None:
    rows = (
        _row("export", "a", Side(State.APPLIED, 8), Side(State.APPLIED, 8)),
        _row("pattern_matcher", "b", Side(State.APPLIED, 4), Side(State.APPLIED, 2)),
        _row("pattern_matcher", "c", Side(State.APPLIED, 3), Side(State.FAILED, None)),
        _row("compile", "d", Side(State.DISABLED, None), Side(State.ABSENT, None)),
    )
    t = svg.timeline(rows)
    a, b, c, d = t.columns
    assert [col.changed for col in t.columns] == [False, True, True, True]
    assert math.isclose(a.baseline.h, 2 * b.baseline.h)
    assert math.isclose(b.baseline.h, 2 * b.candidate.h)
    assert all(col.baseline.y + col.baseline.h == t.plot_bottom for col in t.columns)  # on the axis
    assert (c.candidate.glyph, d.baseline.glyph, d.candidate.glyph) == ("F", "D", "\u2013")
    assert c.candidate.h == 0
    assert a.baseline.glyph == ""
    assert [s[2] for s in t.stages] == ["export", "pattern_matcher", "compile"]
    assert [label for _, label in t.ticks] == ["0", "2", "4", "6", "8"]  # even steps up to 8
    assert [name for *_, name in t.names] == ["a", "b", "c", "d"]  # every name shown, not only on hover
    assert b.title == "2 pattern_matcher/b: baseline 4, candidate 2 (changed)"


def test_timeline_of_a_long_pipeline_keeps_its_columns() -> None:
    rows = tuple(_row("s", f"t{i}", Side(State.APPLIED, i), Side(State.APPLIED, i)) for i in range(200))
    t = svg.timeline(rows)
    assert t.column == svg.COLUMN
    assert t.width == svg.LEFT + 200 * svg.COLUMN + 8
    assert svg.timeline(rows[:4]).column == 3 * svg.COLUMN  # a short one is spread out, up to a limit


def test_histogram_marks_the_tolerance() -> None:
    h = svg.histogram(-8.0, 0.0, (100, 0, 0, 1, 0, 0, 0, 0), atol=1e-4)
    assert h.total == 101
    tall, _, _, small = h.bars[:4]
    assert math.isclose(small[3], tall[3] / 10)  # sqrt scale: 1/100 of the elements, 1/10 of the height
    assert h.atol_x is not None
    assert math.isclose(h.atol_x, svg.PAD + 0.5 * (svg.HIST_W - 2 * svg.PAD))  # 1e-4 is half way
    assert svg.histogram(-8.0, 0.0, (1,) * 8, atol=1.0).atol_x is not None
    assert svg.histogram(-8.0, 0.0, (1,) * 8, atol=10.0).atol_x is None  # off the axis: not drawn


def test_scatter_is_bounded_and_skips_non_finite() -> None:
    xs = tuple(float(i) for i in range(5000)) + (math.nan,)
    ys = tuple(float(i) + 1 for i in range(5000)) + (1.0,)
    s = svg.scatter(xs, ys)
    assert s is not None
    assert s.sampled == 5000
    assert s.shown <= svg.MAX_POINTS
    assert all(svg.PAD <= x <= s.width - svg.PAD and svg.PAD <= y <= s.height - svg.PAD for x, y in s.points)
    assert svg.scatter((math.inf,), (1.0,)) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**7))
def test_count_axis_is_even_and_covers_the_largest_count(most: int) -> None:
    rows = (_row("s", "t", Side(State.APPLIED, most), Side(State.APPLIED, 0)),)
    ticks = svg.timeline(rows).ticks
    values = [int(label) for _, label in ticks]
    assert values[0] == 0
    assert values[-1] >= most
    steps = {b - a for a, b in zip(values, values[1:], strict=False)}
    assert len(steps) == 1  # evenly spaced
    assert 4 <= len(values) <= 6
    step = steps.pop()
    assert step // 10 ** (len(str(step)) - 1) in (1, 2, 5)  # 1, 2 or 5 x 10^k
    gaps = {round(a[0] - b[0], 6) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(gaps) == 1  # and evenly drawn


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["factory", "export", "post_export", "pattern_matcher", "sharding",
                                           "weight_load", "post_load_fusion", "cache_init", "visualize",
                                           "compile", "x" * 30]),
                          st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=50)),
                min_size=1, max_size=120))
def test_stage_labels_are_whole_and_never_overlap(pipeline: list[tuple[str, str]]) -> None:
    one = Side(State.APPLIED, 1)
    rows = tuple(_row(stage, name, one, one) for stage, name in pipeline)
    t = svg.timeline(rows)
    by_row: dict[float, list[tuple[float, float]]] = {}
    for x0, _, stage, y in t.stages:
        by_row.setdefault(y, []).append((x0, x0 + 2 + len(stage) * svg.CHAR))
        assert x0 + 2 + len(stage) * svg.CHAR <= t.width  # inside the chart, never cut
        assert y <= t.height
    for spans in by_row.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    for (_, y, label), (_, name) in zip(t.names, pipeline, strict=True):
        assert label == name or (label.endswith("…") and name.startswith(label[:-1]))
        assert y + len(label) * svg.CHAR <= min(y for *_, y in t.stages)  # names end above the stages
