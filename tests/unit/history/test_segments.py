"""Run-length segments (ad_diff/history/segments.py) against a naive per-run reference, on generated leaves:
every key's segments spell out exactly its value in each of its model's complete runs (absent where its
log does not show it), with no two neighbours of one value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.core.model import State
from ad_diff.history.columns import STATES, Columns, LeafData, from_strings
from ad_diff.history.load import build_table
from ad_diff.history.model import ERROR, INCOMPLETE, OK, SNAPSHOT, Leaf, LeafMeta
from ad_diff.history.segments import ABSENT, build, decode, encode

_ROW = st.tuples(
    st.sampled_from(["s1", "s2"]),  # stage
    st.sampled_from(["a", "b", "c"]),  # transform
    st.integers(0, 1),  # occurrence
    st.sampled_from(STATES),
    st.one_of(st.none(), st.integers(0, 3)),  # match count
)
_LEAF = st.tuples(st.sampled_from([OK, OK, OK, INCOMPLETE, ERROR]), st.lists(_ROW, max_size=6))
_RUNS = 5


@st.composite
def _history(draw: st.DrawFn) -> dict[tuple[int, int], tuple[str, list[tuple]]]:
    """(model, run) -> (status, rows) for some of 2 models x 5 runs."""
    cells = draw(st.sets(st.tuples(st.integers(0, 1), st.integers(0, _RUNS - 1)), max_size=10))
    return {c: draw(_LEAF) for c in sorted(cells)}


def _segments(hist: dict[tuple[int, int], tuple[str, list[tuple]]]):  # noqa: ANN202
    cols, leaves, datas = Columns(), [], []
    models, runs = ["m0", "m1"], [f"r{i}" for i in range(_RUNS)]
    for (m, r), (status, rows) in hist.items():
        leaves.append(Leaf(runs[r], models[m], Path(f"{m}-{r}"), SNAPSHOT))
        if status == ERROR:
            datas.append(LeafData(LeafMeta(ERROR, "unreadable")))
        else:
            datas.append(from_strings(cols, LeafMeta(status), *zip(*rows, strict=True)) if rows
                         else LeafData(LeafMeta(status)))
    used = [np.array(sorted(r for (mm, r), (s, _) in hist.items() if mm == m and s == OK), dtype=np.int64)
            for m in range(len(models))]
    return build(build_table(leaves, datas, runs, models, cols), used), used, cols


def _reference(hist, used) -> dict:  # noqa: ANN001
    """(model, transform, occurrence) -> (values per used run, stage and position in its last run)."""
    series: dict = {}
    last: dict = {}
    for m, runs in enumerate(used):
        keys = {(m, t, o) for r in runs for (_, t, o, _, _) in hist[(m, int(r))][1]}
        for key in keys:
            values = []
            for r in runs:
                rows = hist[(m, int(r))][1]
                hits = [(i, row) for i, row in enumerate(rows) if (row[1], row[2]) == key[1:]]
                if hits:  # a transform written twice: the last one counts
                    i, (stage, _, _, state, count) = hits[-1]
                    values.append((state, count))
                    last[key] = (stage, i)
                else:
                    values.append((State.ABSENT.value, None))
            series[key] = values
    return {k: (v, last[k]) for k, v in series.items()}


@settings(max_examples=150, deadline=None)
@given(_history())
def test_segments_spell_out_every_key_series(hist: dict) -> None:
    seg, used, cols = _segments(hist)
    got = {}
    for k in range(len(seg.key_model)):
        lo, hi = int(seg.key_first[k]), int(seg.key_first[k + 1])
        values: list = []
        for start, length, value in zip(seg.seg_start[lo:hi], seg.seg_length[lo:hi], seg.seg_value[lo:hi],
                                        strict=True):
            assert start == len(values)  # contiguous from the model's first used run
            values += [decode(int(value))] * int(length)
        assert all(seg.seg_value[i] != seg.seg_value[i + 1] for i in range(lo, hi - 1))  # merged
        key = (int(seg.key_model[k]), cols.transforms.names[seg.key_transform[k]], int(seg.key_occurrence[k]))
        got[key] = (values, (cols.stages.names[seg.key_stage[k]], int(seg.key_position[k])))
    assert got == _reference(hist, used)


@given(st.sampled_from(range(len(STATES))), st.one_of(st.just(-1), st.integers(0, 1 << 39)))
def test_value_codes_round_trip(state: int, count: int) -> None:
    code = int(encode(np.array([state]), np.array([count]))[0])
    assert decode(code) == (STATES[state], None if count == -1 else count)


def test_absent_is_the_absent_state_without_a_count() -> None:
    assert decode(ABSENT) == (State.ABSENT.value, None)
