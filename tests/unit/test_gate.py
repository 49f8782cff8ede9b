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


def test_levels_are_one_enum_read_from_their_words(tmp_path) -> None:
    """The gate level is a FailOn wherever it travels: the CLI's word becomes one in Settings, a verdict
    carries one, and it prints as its word."""
    from ad_diff.cli.options import ResolvedOptions, build_settings
    from ad_diff.settings import FAIL_ON_CHOICES, FailOn

    assert [level.value for level in FailOn] == list(FAIL_ON_CHOICES)
    for level in FailOn:
        assert FailOn(level.value) is level
        assert f"--fail-on {level}" == f"--fail-on {level.value}"
        assert decide([], level.value).fail_on is level
    opts = {"rank": None, "fail_on": "collapse", "collapse_fraction": 0.5, "ignore_transforms": [],
            "ignore_codes": [], "graphs": True, "tensors": True}
    assert build_settings(ResolvedOptions(opts), tmp_path, tmp_path).fail_on is FailOn.COLLAPSE
