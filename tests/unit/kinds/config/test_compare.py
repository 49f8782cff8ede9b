"""Tests of the config diff, pipeline ordering and the config-vs-log checks (ad_diff.kinds.config.compare,
ad_diff.kinds.config.check), and of the findings the ADC rules draw from them (ad_diff.kinds.config.rules)."""

from __future__ import annotations

from dataclasses import replace

from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import State
from ad_diff.kinds.config.classify import classify
from ad_diff.kinds.config.compare import analyze_config, diff_configs, pipeline_order
from ad_diff.kinds.config.model import CheckKind, ConfigSource, EffectiveConfig, SourceKind
from ad_diff.kinds.log.model import LogEnd
from tests.unit.kinds.config.scenarios import make_log, run_scenario


def cfg(data: dict, complete: bool = True) -> EffectiveConfig:
    return EffectiveConfig(ConfigSource(SourceKind.EFFECTIVE, ("c.yaml",), "test", complete), data, {})


def test_default_enabled_spelled_out_is_no_change() -> None:
    a = cfg({"transforms": {"t": {"stage": "compile"}}})
    b = cfg({"transforms": {"t": {"stage": "compile", "enabled": True}}})
    assert diff_configs(a, b, []).identical


def test_kinds_and_grouping_in_pipeline_order() -> None:
    a = cfg({
        "world_size": 1, "zeta": 1, "runtime": "demollm", "cuda_graph_config": {"batch_sizes": [1, 2]},
        "transforms": {
            "late": {"stage": "compile", "opt": 1},
            "early": {"stage": "export"},
            "moved": {"stage": "post_load_fusion"},
            "gone": {"stage": "sharding"},
        },
    })
    b = cfg({
        "world_size": 2, "zeta": 1, "runtime": "trtllm", "cuda_graph_config": {"batch_sizes": [1, 2, 4]},
        "transforms": {
            "late": {"stage": "compile", "opt": 2},
            "early": {"stage": "export", "enabled": False},
            "moved": {"stage": "cache_init"},
            "new": {"stage": "pattern_matcher"},
        },
    })
    d = diff_configs(a, b, pipeline_order(a, b, None, None))
    assert [t.transform for t in d.transforms] == ["early", "new", "gone", "moved", "late"]
    kinds = {t.transform: [c.kind for c in t.changes] for t in d.transforms}
    assert kinds == {"early": ["enabled"], "new": ["added"], "gone": ["removed"], "moved": ["stage"],
                     "late": ["option"]}
    moved = d.for_transform("moved")
    assert moved is not None
    assert moved.summary == "moved from stage post_load_fusion to cache_init in candidate config"
    # key settings first in their fixed order, list compared as a whole value
    assert [s.key for s in d.settings] == ["runtime", "world_size", "cuda_graph_config.batch_sizes"]
    assert d.settings[2].before == [1, 2]
    assert d.settings[2].after == [1, 2, 4]
    assert d.for_transform("early").changes[0].describe() == "transforms.early.enabled: true -> false"


def test_pipeline_order_prefers_logs() -> None:
    log = make_log("explained", 0)
    a = cfg({"transforms": {"compile_model": {"stage": "compile"}, "extra": {"stage": "factory"}}})
    order = pipeline_order(a, a, log, None)
    assert order[:2] == ["build_model", "extra"]  # config-only key placed after the last key of its stage
    assert order.index("fuse_gemms") < order.index("fuse_rmsnorm") < order.index("compile_model")


def test_one_side_missing_gives_adc009() -> None:
    a = analyze_config(cfg({}), None, None, None)
    assert a.diff is None
    [f] = classify(a)
    assert f.code == "ADC009"
    assert "candidate run has no config" in f.message
    assert classify(analyze_config(None, None, None, None)) == []


def test_checks_disabled_but_ran_stage_mismatch_and_not_in_config() -> None:
    log = make_log("explained", 0)
    c = cfg({"transforms": {
        "fuse_gemms": {"stage": "post_load_fusion", "enabled": False},   # log: applied 12
        "fuse_rmsnorm": {"stage": "cache_init"},                         # log: post_load_fusion
        "compile_model": {"stage": "compile"},
        "ghost": {"stage": "compile"},                                   # never logged, log complete
    }})
    a = analyze_config(c, None, log, None)
    kinds = [(ch.transform, ch.kind.value) for ch in a.checks]
    assert ("fuse_gemms", "disabled_but_ran") in kinds
    assert ("fuse_rmsnorm", "stage_mismatch") in kinds
    assert ("ghost", "enabled_but_absent") in kinds
    assert ("build_model", "not_in_config") in kinds
    findings = classify(a)
    assert [f.code for f in findings] == ["ADC009", *(_CODE[ch.kind] for ch in a.checks)]
    msg = next(f.message for f in findings if f.code == "ADC005")
    assert "applied (12 matches)" in msg
    assert "line 7" in msg
    stage = next(f for f in findings if f.code == "ADC006")
    assert stage.message.startswith("fuse_rmsnorm: config puts it in stage cache_init (config) but the "
                                    "baseline log ran it in post_load_fusion")
    assert dict(stage.evidence)["log_line"] == next(ch.log_line for ch in a.checks
                                                    if ch.kind is CheckKind.STAGE_MISMATCH)


_CODE = {CheckKind.ENABLED_BUT_DISABLED: "ADC003", CheckKind.ENABLED_BUT_ABSENT: "ADC004",
         CheckKind.DISABLED_BUT_RAN: "ADC005", CheckKind.STAGE_MISMATCH: "ADC006",
         CheckKind.NOT_IN_CONFIG: "ADC007"}


def test_absent_not_flagged_when_log_crashed() -> None:
    log = replace(make_log("explained", 0), end=LogEnd.CRASHED)
    a = analyze_config(cfg({"transforms": {"ghost": {"stage": "compile"}}}), None, log, None)
    assert not [ch for ch in a.checks if ch.kind == "enabled_but_absent"]


def test_not_in_config_needs_complete_config() -> None:
    log = make_log("explained", 0)
    a = analyze_config(cfg({"transforms": {}}, complete=False), None, log, None)
    assert not [ch for ch in a.checks if ch.kind == "not_in_config"]


def test_scenario_explained_diff() -> None:
    analysis, _ = run_scenario("explained")
    assert analysis.diff is not None
    [t] = analysis.diff.transforms
    assert t.transform == "fuse_gemms"
    assert t.changes[0].candidate_origin == "config/model_x.yaml:4"
    assert t.changes[0].baseline_origin == "config/dashboard_default.yaml:4"
    assert analysis.checks == ()
    js = to_jsonable(analysis)
    assert js["diff"]["transforms"][0]["changes"][0] == {
        "path": "transforms.fuse_gemms.enabled", "kind": "enabled", "before": True, "after": False,
        "baseline_origin": "config/dashboard_default.yaml:4", "candidate_origin": "config/model_x.yaml:4",
    }
    assert js["candidate"]["files"] == ["config/default.yaml", "config/dashboard_default.yaml",
                                        "config/model_x.yaml"]


def test_scenario_not_applied_check() -> None:
    analysis, _ = run_scenario("not_applied")
    [check] = analysis.checks
    assert (check.run, check.transform, check.kind) == ("candidate", "fuse_gemms", "enabled_but_disabled")
    assert to_jsonable(analysis)["checks"][0]["log_line"] == 7
    [f] = [f for f in classify(analysis) if f.code == "ADC003"]
    assert dict(f.evidence) == {"config_source": "config/dashboard_default.yaml:4", "log_line": 7}


def test_scenario_logs_match_their_generator() -> None:
    # guard: the committed scenario logs are what write_logs() produces and parse as expected
    r = make_log("unexplained", 1).transforms[7]
    assert (r.transform, r.state, r.line) == ("fuse_rmsnorm", State.DISABLED, 8)


def test_configs_sharing_few_keys_are_diffed_key_by_key() -> None:
    # deepdiff >= 8 would report the whole root as one changed value (threshold_to_diff_deeper)
    a = cfg({f"k{i}": i for i in range(20)} | {"transforms": {"t": {"stage": "compile"}}})
    b = cfg({"transforms": {"t": {"stage": "compile", "enabled": False}}, "new": 1})
    d = diff_configs(a, b, [])
    assert [c.key for t in d.transforms for c in t.changes] == ["transforms.t.enabled"]
    assert {c.key for c in d.settings} == {*(f"k{i}" for i in range(20)), "new"}
    assert all(c.path for c in d.settings)
