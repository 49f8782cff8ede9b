"""Step detection on hand-written segment series, and how each change is judged (the pair rules)."""

from __future__ import annotations

import numpy as np
import pytest

from ad_diff.core.model import State
from ad_diff.history.columns import STATE_CODE
from ad_diff.history.model import Value
from ad_diff.history.segments import encode
from ad_diff.history.steps import KeyContext, _Seg, analyse_key, judge

OPTS = (0.5, "error")


def _v(text: str) -> int:
    state, count = ("applied", int(text)) if text.isdigit() else (text, -1)
    return int(encode(np.array([STATE_CODE[state]]), np.array([count]))[0])


def _series(values: str) -> list[_Seg]:
    """``"4 4 4 3 4 4"`` -> merged segments."""
    out: list[_Seg] = []
    for i, v in enumerate(values.split()):
        code = _v(v)
        if out and out[-1].value == code:
            out[-1] = _Seg(code, out[-1].start, out[-1].length + 1)
        else:
            out.append(_Seg(code, i, 1))
    return out


CTX = KeyContext("m", "pattern_matcher", "fuse_moe", 0, [f"r{i}" for i in range(20)], np.arange(20), {}, 0)


def _run(values: str, min_run: int = 2, since: int = 0):  # noqa: ANN202
    return analyse_key(CTX, _series(values), min_run, OPTS, since)


def test_step_names_last_before_and_first_after() -> None:
    steps, pending, flaky, mark = _run("8 8 8 0 0 0")
    [s] = steps
    assert (s.change, s.last_before, s.first_after, s.confirmed, s.held) == ("8 -> 0", "r2", "r3", "r4", 3)
    assert (s.category, s.codes, s.gating, s.gates) == ("collapse", ("ADL001",), True, True)
    assert pending == []
    assert flaky == []
    assert mark == "down"


def test_blip_is_flaky_not_a_step() -> None:
    steps, pending, flaky, mark = _run("4 4 3 4 4 0 4 4")
    assert steps == []
    assert pending == []
    assert mark == "flaky"
    [f] = flaky
    assert f.value == Value(State.APPLIED, 4)
    assert [(d.run, d.value.text()) for d in f.deviations] == [("r2", "3"), ("r5", "0")]


def test_change_at_the_end_is_pending_until_it_holds() -> None:
    steps, pending, _, mark = _run("5 5 5 2")
    assert steps == []
    assert mark == "pending"
    [p] = pending
    assert (p.kind, p.change, p.first_after, p.confirmed, p.held, p.gates) == (
        "pending",
        "5 -> 2",
        "r3",
        None,
        1,
        False,
    )
    # the last run alone is a step with --min-run 1
    [s], _, _, _ = _run("5 5 5 2", min_run=1)
    assert s.gates


def test_unsettled_runs_are_listed_via() -> None:
    [s], _, flaky, _ = _run("6 6 6 3 1 0 0")
    assert (s.change, s.last_before, s.first_after) == ("6 -> 0", "r2", "r3")
    assert [(v.run, v.value.text()) for v in s.via] == [("r3", "3"), ("r4", "1")]
    assert flaky == []


def test_old_value_coming_back_before_the_step() -> None:
    [s], _, [f], _ = _run("6 6 3 6 0 0")
    assert (s.last_before, s.first_after, s.via) == ("r3", "r4", ())
    assert [d.run for d in f.deviations] == ["r2"]


def test_two_steps_down_and_up() -> None:
    steps, _, _, mark = _run("4 4 0 0 4 4")
    assert [(s.change, s.category, s.gating) for s in steps] == [
        ("4 -> 0", "collapse", True),
        ("0 -> 4", "new_matches", False),
    ]
    assert mark == "up"  # the latest step
    # --since: the collapse became known in r3; a window from r4 on holds only the recovery
    steps, _, _, _ = _run("4 4 0 0 4 4", since=4)
    assert [s.gates for s in steps] == [False, False]


def test_never_settled_is_flaky_around_the_longest_value() -> None:
    steps, pending, [f], _ = _run("1 2 2 1 2 2 1", min_run=3)
    assert steps == []
    assert pending == []
    assert f.value.text() == "2"  # held 4 runs in all, 1 held 3
    assert [(d.run, d.value.text()) for d in f.deviations] == [("r0", "1"), ("r3", "1"), ("r6", "1")]


@pytest.mark.parametrize(
    ("before", "after", "category", "codes", "gates_at"),
    [
        ("10", "8", "partial_loss", ("ADL002",), {"error", "match_loss"}),
        ("10", "5", "collapse", ("ADL001",), {"error", "match_loss", "collapse"}),
        ("10", "skipped", "collapse", ("ADL003",), {"error", "match_loss", "collapse"}),
        ("0", "failed", "state_change", ("ADL004",), {"error"}),
        ("2", "7", "new_matches", ("ADL008",), set()),
        ("absent", "3", "new_matches", ("ADL006",), set()),
        ("0", "disabled", "state_change", ("ADL005",), set()),
        ("absent", "0", "state_change", (), set()),
    ],
)
def test_judge_uses_the_pair_rules(
    before: str, after: str, category: str, codes: tuple[str, ...], gates_at: set[str]
) -> None:
    def value(t: str) -> Value:
        return Value(State.APPLIED, int(t)) if t.isdigit() else Value(State(t), None)

    for fail_on in ("error", "match_loss", "collapse", "never"):
        j = judge("s", "t", value(before), value(after), 0.5, fail_on)
        assert (j.category, j.codes) == (category, codes)
        assert j.gating == (fail_on in gates_at), fail_on


def test_collapse_fraction_moves_the_line() -> None:
    assert (
        judge("s", "t", Value(State.APPLIED, 10), Value(State.APPLIED, 6), 0.5, "error").category
        == "partial_loss"
    )
    assert (
        judge("s", "t", Value(State.APPLIED, 10), Value(State.APPLIED, 6), 0.4, "error").category
        == "collapse"
    )
