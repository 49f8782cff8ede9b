"""Iteration note pieces: risks with and without the optional analyses, path inference."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ad_diff import pipeline
from ad_diff.core.model import Finding, Severity
from ad_diff.settings import Settings
from ad_diff.workflows.note import OpCount, Validation, _path, _risks, build_note
from tests.conftest import FIXTURES

C = FIXTURES / "candidates"


def _result():
    return pipeline.run(Settings(baseline=C / "unfused", candidate=C / "norm_only"))


def test_absent_sections_are_not_analysed() -> None:
    v = Validation("pass", "ok", "a", "b")
    risks = _risks(replace(_result(), sections={}), v, None)
    assert "metadata loss: not analysed (the comparison produced no graph analysis)" in risks
    assert "numeric drift: not analysed (no recorded tensors compared)" in risks


def test_present_sections_and_findings_become_risks() -> None:
    f = Finding(
        "ADG001", "metadata_loss", Severity.WARNING, "fuse_rmsnorm dropped meta on 5 nodes", "fuse_rmsnorm"
    )
    r = replace(_result(), sections={"graph": object(), "tensors": object()}, findings=(f,))
    risks = _risks(r, Validation("pass", "ok", "a", "b"), None)
    assert "metadata loss: [ADG001] fuse_rmsnorm dropped meta on 5 nodes" in risks
    assert "numeric drift: none beyond tolerance" in risks
    assert not any("not analysed" in x for x in risks)


def test_path_inference() -> None:
    v = Validation("pass", "ok", "a", "b", fused_ops=(OpCount("auto_deploy.triton_rms_norm.default", 0, 4),))
    assert _path(None, v) == ("triton_fallback", "inferred")
    v2 = Validation("pass", "ok", "a", "b", fused_ops=(OpCount("auto_deploy.torch_rmsnorm.default", 4, 4),))
    assert _path(None, v2) == ("unknown", "unknown")
    assert _path("existing_kernel", v) == ("existing_kernel", "option")


def test_note_without_graphs_is_not_evaluated(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ad.log").write_text((C / "unfused" / "ad.log").read_text())
    n = build_note(tmp_path / "a", tmp_path / "b", "rmsnorm")
    assert n.validation.status == "not_evaluated"
    assert n.family == "rmsnorm"
    assert any("baseline graph not scanned" in x for x in n.notes)
    assert [r.transform for r in n.summary] == ["match_rmsnorm_pattern", "fuse_rmsnorm"]
