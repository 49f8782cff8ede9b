"""The history model (ad_diff/history/model.py): how a value reads, and when a change gates."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ad_diff.core.model import State
from ad_diff.history.model import Change, Value


@pytest.mark.parametrize("state", list(State))
def test_a_value_reads_as_its_count_only_when_applied(state: State) -> None:
    assert Value(state, 5).text() == ("5" if state is State.APPLIED else state.value)
    assert Value(state, None).text() == state.value


def _change(**kw: object) -> Change:
    base = Change("step", "m", "s", "t", 0, Value(State.APPLIED, 8), Value(State.SKIPPED, None), "r1", "r2",
                  "r3", 2, (), "state_change", (), "", gating=True, in_window=True)
    return replace(base, **kw)  # type: ignore[arg-type]


def test_change_text_joins_both_values() -> None:
    assert _change().change == "8 -> skipped"


@pytest.mark.parametrize(("kind", "gating", "in_window"), [
    ("step", True, True), ("pending", True, True), ("step", False, True), ("step", True, False),
])
def test_only_a_gating_step_in_the_window_gates(kind: str, gating: bool, in_window: bool) -> None:
    assert _change(kind=kind, gating=gating, in_window=in_window).gates == (
        kind == "step" and gating and in_window
    )
