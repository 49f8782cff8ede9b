"""Tests of explain_findings (ad_diff.kinds.config.explain) on the three config scenarios, and of the ADC
rule catalogue."""

from __future__ import annotations

import pytest

from ad_diff.kinds.config.rules import RULES
from tests.conftest import FIXTURES
from tests.unit.kinds.config.scenarios import run_scenario


def by(findings, code: str, transform: str | None = None):
    return [f for f in findings if f.code == code and (transform is None or f.transform == transform)]


def test_explained_toggle_does_not_gate_by_default() -> None:
    _, findings = run_scenario("explained")
    [state] = by(findings, "ADL003", "fuse_gemms")  # matched 12, now disabled
    assert state.explained_by == (
        "fuse_gemms: disabled in candidate config "
        "(transforms.fuse_gemms.enabled: true -> false, from config/model_x.yaml:4)"
    )
    assert state.gating is False
    assert dict(state.evidence)["config_explanation"] == "explained"


def test_downstream_loss_still_gates_with_likely_cause() -> None:
    _, findings = run_scenario("explained")
    [loss] = by(findings, "ADL002", "fuse_rmsnorm")  # 33 -> 17
    assert loss.gating is True
    assert loss.explained_by is not None
    assert loss.explained_by.startswith("likely cause: fuse_gemms: disabled")
    assert dict(loss.evidence)["config_source"] == "config/model_x.yaml:4"
    assert not by(findings, "ADC008")


def test_setting_makes_explained_toggle_gate() -> None:
    _, findings = run_scenario("explained", gates=True)
    assert by(findings, "ADL003", "fuse_gemms")[0].gating is True


def test_unexplained_state_change_called_out() -> None:
    _, findings = run_scenario("unexplained")
    [adc8] = by(findings, "ADC008")
    assert adc8.transform == "fuse_rmsnorm"
    assert adc8.message == ("fuse_rmsnorm: applied -> disabled with no config change behind it "
                            "(transforms.fuse_rmsnorm.enabled is true in both configs)")
    [state] = by(findings, "ADL003")
    assert state.explained_by is None
    assert state.gating is True
    assert dict(state.evidence)["config_explanation"] == "unexplained"
    # the candidate's own config disagrees with its log too
    assert by(findings, "ADC003", "fuse_rmsnorm")


def test_not_applied_flagged() -> None:
    _, findings = run_scenario("not_applied")
    [adc3] = by(findings, "ADC003")
    assert adc3.message == ("fuse_gemms: enabled in the candidate config (config/dashboard_default.yaml:4) "
                            "but the candidate log says disabled (line 7)")
    assert not by(findings, "ADC008")  # the state did not change between the runs


def test_no_config_leaves_findings_alone() -> None:
    from ad_diff.kinds.config.compare import analyze_config
    from ad_diff.kinds.config.explain import explain_findings
    from ad_diff.kinds.log.classify import classify_log
    from tests.unit.kinds.config.scenarios import make_log, make_rows

    b, c = make_log("explained", 0), make_log("explained", 1)
    rows = make_rows(b, c)
    fs = tuple(classify_log(rows, b, c))
    out = explain_findings(fs, rows, analyze_config(None, None, None, None))
    assert out == fs


def test_rule_catalogue() -> None:
    codes = [r.code for r in RULES]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert all(r.category == "config" and len(r.doc) > 80 for r in RULES)


@pytest.mark.parametrize("name", ["config_explained", "config_unexplained", "config_not_applied"])
def test_fixture_generator_scenarios_parse(name: str) -> None:
    """The fixtures branch's scenarios (when merged) must hold a config both sides can load."""

    from ad_diff.kinds.config.parse import parse

    root = FIXTURES / "scenarios" / name
    assert root.is_dir(), f"{root} missing: run scripts/make_fixtures.py"
    assert parse(root / "baseline") is not None
    assert parse(root / "candidate") is not None


def test_stage_move_explained_and_unexplained() -> None:
    from ad_diff.core.model import Finding, Severity, Side, State, TransformComparison
    from ad_diff.kinds.config.compare import analyze_config
    from ad_diff.kinds.config.explain import explain_findings
    from ad_diff.kinds.config.model import ConfigSource, EffectiveConfig, SourceKind

    def cfg(stage: str) -> EffectiveConfig:
        return EffectiveConfig(ConfigSource(SourceKind.EFFECTIVE, ("c.yaml",), "t", True),
                               {"transforms": {"mla": {"stage": stage}}},
                               {("transforms", "mla", "stage"): "c.yaml:3"})

    row = TransformComparison("cache_init", "mla", 0, Side(State.APPLIED, 2, stage="post_load_fusion"),
                              Side(State.APPLIED, 2, stage="cache_init"))
    moved = Finding("ADL013", "state_change", Severity.INFO, "mla: moved", transform="mla")
    [f, *_] = explain_findings([moved], [row],
                               analyze_config(cfg("post_load_fusion"), cfg("cache_init"), None, None))
    assert f.gating is False
    assert f.explained_by is not None
    assert "moved from stage post_load_fusion" in f.explained_by
    out = explain_findings([moved], [row],
                           analyze_config(cfg("post_load_fusion"), cfg("post_load_fusion"), None, None))
    assert [x.code for x in out if x.code == "ADC008"] == ["ADC008"]
    assert "stage post_load_fusion -> stage cache_init" in out[-1].message
