"""The PR comment's headline and counts tell the truth: root causes counted, kinds not compared said so,
ignored transforms shown as ignored, a fully acknowledged change said so; the step summary is the same."""

from __future__ import annotations

import json
from pathlib import Path

from ad_diff import gate, pipeline
from ad_diff.formats import Format
from ad_diff.report.common import headline, run_labels
from ad_diff.settings import Settings
from tests.ci_runs import pair
from tests.conftest import FIXTURES


def _render(settings: Settings, fmt: Format = Format.markdown) -> tuple[str, dict]:
    result = pipeline.run(settings)
    verdict = gate.judge(result.findings, result.groups, settings.fail_on)
    return fmt.render(result, verdict), json.loads(Format.json.render(result, verdict))


def _first_screen(md: str) -> str:
    return md.split("\n### ", 1)[0]


def test_log_only_says_what_was_not_analysed(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    md, js = _render(Settings(base, cand))
    head = _first_screen(md)
    assert "**metadata loss: not analysed (neither run has graphs/)**" in head
    assert "**numeric drift: not analysed (neither run has tensors/)**" in head
    assert "0 metadata losses" not in md
    assert "0 drifting tensors" not in md
    assert js["summary"]["not_analysed"] == {
        "metadata_loss": "neither run has graphs/",
        "numeric_drift": "neither run has tensors/",
    }
    assert js["skipped"]["graph"]["reason"] == "no_data"


def test_ignored_transforms_are_shown_as_ignored_everywhere() -> None:
    root = FIXTURES / "scenarios/metadata_loss"
    settings = Settings(root / "baseline", root / "candidate", ignore_transforms=("match_rope_layout",))
    md, js = _render(settings)
    assert js["summary"]["ignored_transforms"] == ["match_rope_layout"]
    assert js["summary"]["transforms"] == 26  # compared: 27 logged, one ignored
    assert "1 transform ignored (--ignore-transform): match_rope_layout" in _first_screen(md)
    assert "finding" in _first_screen(md).split("ignored", 1)[1]  # and how many findings it dropped
    graph = md.split("### Graph dumps", 1)[1]
    assert "| <code>match_rope_layout</code> | ignored | 6 / 2 · 2 (2) | 100.0% → 98.0% |" in graph
    assert "#### `pattern_matcher/match_rope_layout`" not in graph  # no details for an ignored transform
    assert all(f["transform"] != "match_rope_layout" for f in js["findings"])
    assert js["headline"] == "FAIL: 1 root cause (metadata lost at match_rope_pattern)"


def test_every_finding_acknowledged_says_so(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    exp = tmp_path / "expected.yaml"
    exp.write_text(
        "expected:\n  - transform: match_rope_pattern\n    reason: rope moved into attention\n"
        "  - transform: fuse_gemms\n    after: disabled\n    reason: disabled on purpose\n"
    )
    md, js = _render(Settings(base, cand, expected_changes=exp))
    assert js["verdict"] == "pass"
    assert js["headline"] == "PASS: every finding acknowledged or explained (2 root causes)"
    head = _first_screen(md)
    assert head.startswith("## \u2705 ad-diff: PASS: every finding acknowledged or explained (2 root causes)")
    assert "\u2705 acknowledged: rope moved into attention" in head


def test_headline_counts_root_causes_not_findings() -> None:
    root = FIXTURES / "scenarios/failed_transform"
    _, js = _render(Settings(root / "baseline", root / "candidate"))
    assert js["headline"] == "FAIL: 1 root cause (match_eager_attention failed) \u2192 3 match losses"
    assert js["summary"]["root_causes"] == 1
    assert js["summary"]["gated"] == 5
    group = js["groups"][0]
    assert [js["findings"][i]["code"] for i in group["root"]][:2] == ["ADL004", "ADL003"]
    assert {js["findings"][i]["role"] for i in group["consequences"]} == {"consequence"}


def test_step_summary_has_the_same_layout_as_the_comment() -> None:
    root = FIXTURES / "scenarios/op_form_change"
    settings = Settings(root / "baseline", root / "candidate")
    comment, _ = _render(settings)
    summary, _ = _render(settings, Format.step_summary)
    assert summary == comment


def test_run_paths_are_relative_to_their_common_parent() -> None:
    assert run_labels(Path("/ci/runs/base/llama"), Path("/ci/runs/cand/llama")) == (
        "base/llama",
        "cand/llama",
        "/ci/runs",
    )
    assert run_labels(Path("/a/llama"), Path("/b/llama")) == ("a/llama", "b/llama", None)
    assert run_labels(Path("/a/x"), Path("rel/y")) == ("x", "y", None)


def test_new_fusion_reads_as_a_success() -> None:
    root = FIXTURES / "scenarios/new_fusion"
    result = pipeline.run(Settings(root / "baseline", root / "candidate"))
    verdict = gate.judge(result.findings, result.groups, "error")
    assert (
        headline(result, verdict)
        == "PASS: 1 improvement (match_swiglu_pattern now runs and matches (disabled \u2192 2))"
    )
    assert [f for f in result.findings if f.severity.value != "info"] == []
