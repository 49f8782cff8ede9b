"""The gate: which findings fail the run at each --fail-on level."""

from __future__ import annotations

import dataclasses

import pytest

from ad_diff.gate import decide
from ad_diff.kinds.log.rules import COLLAPSE, GAIN, INCOMPLETE, PARTIAL, STATE

collapse = COLLAPSE.make(transform="t", before=4, after=0, collapse=True)
partial = PARTIAL.make(transform="t", before=4, after=3, pct=25)
incomplete = INCOMPLETE.make(run="candidate", detail="crashed")
warning = STATE.make(transform="t", bstate="applied", cstate="disabled")
info = GAIN.make(transform="t", before=1, after=2)


@pytest.mark.parametrize(
    ("findings", "fail_on", "code"),
    [
        ([], "error", 0),
        ([warning, info], "error", 0),
        ([partial], "error", 1),
        ([partial], "match_loss", 1),
        ([partial], "collapse", 0),
        ([collapse], "collapse", 1),
        ([incomplete], "collapse", 1),
        ([collapse, incomplete], "never", 0),
        ([dataclasses.replace(collapse, gating=False)], "error", 0),
    ],
)
def test_gate_levels(findings, fail_on: str, code: int) -> None:
    v = decide(findings, fail_on)
    assert v.exit_code == code
    assert v.verdict == ("fail" if code else "pass")
    assert bool(v) is (code == 0)


def test_unknown_level_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown fail_on"):
        decide([partial], "sometimes")
