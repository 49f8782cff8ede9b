"""Expected changes: matching findings are acknowledged (not gating), counts must match, stale entries
warn."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff import gate, pipeline
from ad_diff.errors import InputError
from ad_diff.explain.expected import load
from ad_diff.settings import Settings
from tests.ci_runs import PARTIAL_LOG, pair


def _run(tmp_path: Path, expected: str, cand_log: str | None = None, model: str | None = None):
    base, cand = pair(tmp_path) if cand_log is None else pair(tmp_path, cand_log)
    exp = tmp_path / "expected.yaml"
    exp.write_text(expected)
    result = pipeline.run(Settings(base, cand, expected_changes=exp, model=model))
    return result, gate.judge(result.findings, result.groups, "error")


ROPE_16_TO_0 = """\
expected:
  - transform: match_rope_pattern
    before: 16
    after: 0
    reason: rope is matched by the fused attention now
  - transform: fuse_gemms
    after: disabled
    reason: fuse_gemms disabled on purpose for model X
"""


def test_matching_findings_are_acknowledged_and_do_not_gate(tmp_path: Path) -> None:
    result, verdict = _run(tmp_path, ROPE_16_TO_0)
    by_code = {f.code: f for f in result.findings}
    assert by_code["ADL001"].acknowledged == "rope is matched by the fused attention now"
    assert by_code["ADL003"].acknowledged == "fuse_gemms disabled on purpose for model X"
    assert not any(f.gating for f in result.findings if f.code.startswith("ADL"))
    assert "ADX001" not in by_code
    assert verdict.exit_code == 0


def test_counts_must_match_16_to_0_does_not_acknowledge_16_to_3(tmp_path: Path) -> None:
    result, verdict = _run(tmp_path, ROPE_16_TO_0, cand_log=PARTIAL_LOG)
    rope = next(f for f in result.findings if f.transform == "match_rope_pattern")
    assert rope.acknowledged is None
    assert rope.gating
    assert verdict.exit_code == 1
    stale = [f for f in result.findings if f.code == "ADX001"]
    # both entries are stale here: rope went 16 -> 3, and fuse_gemms still runs
    assert len(stale) == 2
    assert all(f.severity.value == "warning" for f in stale)
    assert "expected.yaml:2" in stale[0].message or "expected.yaml:2" in stale[1].message


def test_entry_for_another_model_is_neither_applied_nor_stale(tmp_path: Path) -> None:
    text = "- transform: fuse_gemms\n  model: llama-*\n  reason: only llama\n"
    result, verdict = _run(tmp_path, text, model="mistral-7b")
    assert not any(f.acknowledged for f in result.findings)
    assert not any(f.code == "ADX001" for f in result.findings)
    result, _ = _run(tmp_path, text, model="llama-3-8b")
    assert any(f.acknowledged == "only llama" for f in result.findings)


def test_acknowledged_finding_is_shown_in_every_report(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    exp = tmp_path / "e.yaml"
    exp.write_text(ROPE_16_TO_0)
    res = cli(base, cand, "--expected", exp, "-f", "markdown")
    assert res.code == 0
    assert "acknowledged: rope is matched by the fused attention now" in res.out


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("- transform: x\n", "needs a non-empty `reason`", 1),
        ("- reason: r\n", "must name at least one of", 1),
        (
            "- transform: a\n  reason: r\n- transform: b\n  reason: r\n  befor: 3\n",
            "unknown field 'befor'",
            3,
        ),
        ("- transform: a\n  reason: r\n  after: lots\n", "must be a match count", 1),
        ("expectations: []\n", "unknown top-level key 'expectations'", 1),
        ("- [a\n", "not valid YAML", None),
    ],
)
def test_malformed_files_are_input_errors_with_line(tmp_path: Path, text: str, message: str, line) -> None:
    p = tmp_path / "e.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load(p)
    assert message in str(e.value)
    if line is not None:
        assert e.value.line == line


def test_first_matching_entry_wins_and_later_duplicate_is_stale(tmp_path: Path) -> None:
    text = ROPE_16_TO_0 + "  - code: ADL001\n    reason: duplicate\n"
    result, _ = _run(tmp_path, text)
    rope = next(f for f in result.findings if f.code == "ADL001")
    assert rope.acknowledged.startswith("rope")
    assert [dict(f.evidence)["line"] for f in result.findings if f.code == "ADX001"] == [9]
