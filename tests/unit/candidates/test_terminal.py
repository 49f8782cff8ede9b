"""The terminal view: fits the width it is given, uses a wide one, prints hostile names literally."""

from __future__ import annotations

from ad_diff.candidates import find_candidates
from ad_diff.candidates.model import (
    Candidate,
    CandidateReport,
    Instance,
    KernelLookup,
    LookupStatus,
    Recommendation,
)
from ad_diff.candidates.terminal import render_terminal
from tests.unit.candidates.conftest import SRC, C


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_fits_80_columns_and_uses_200() -> None:
    r = find_candidates(C / "moe", trtllm_src=SRC)
    narrow = render_terminal(r, 80)
    wide = render_terminal(r, 200)
    assert _widest(narrow) <= 80
    assert 120 < _widest(wide) <= 200
    # the wide table shows the pattern column; the narrow one leaves it to the detail lines
    assert "pattern" in wide.splitlines()[4]
    assert "pattern" not in narrow.splitlines()[5]
    for text in (narrow, wide):
        assert "1. moe: mixture-of-experts block left unfused" in text
        assert "evidence  transform match_moe_pattern at transform/library/fused_moe.py:44" in text
    assert "\x1b[" not in narrow
    assert "\x1b[" in render_terminal(r, 80, color=True)


def test_markup_in_names_prints_literally() -> None:
    c = Candidate(
        "[bold]x[/bold]",
        "elementwise_chain",
        ("aten.mul.Tensor", "aten.add.Tensor"),
        "sig",
        (Instance("(root)", ("a", "b"), 0, 3), Instance("(root)", ("d", "e"), 1, 9)),
        2,
        KernelLookup(LookupStatus.NOT_SEARCHED),
        Recommendation.DEFER,
        weaknesses=("`code` and [red]markup[/red]",),
    )
    text = render_terminal(CandidateReport("run[1]", "d.txt", "t", "s", 10, (c,), None), 100)
    assert "[bold]x[/bold]" in text
    assert "`code` and [red]markup[/red]" in text
    assert "Fusion candidates: run[1]" in text


def test_width_is_clamped() -> None:
    r = find_candidates(C / "unfused")
    assert render_terminal(r, 5) == render_terminal(r, 40)
    assert render_terminal(r, 10**6) == render_terminal(r, 400)
