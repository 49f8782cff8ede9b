"""Build the three config scenarios (configs from fixtures/config_scenarios, logs and log findings made
here because the log parser and log rules live on main) and run the config analysis on them."""

from __future__ import annotations

from pathlib import Path

from ad_diff.classify.config_explain import explain_findings
from ad_diff.config_diff import analyze_config
from ad_diff.config_model import ConfigAnalysis
from ad_diff.model import (
    Finding,
    LogEnd,
    RunLog,
    Severity,
    Side,
    State,
    TransformComparison,
    TransformRecord,
)
from ad_diff.parsers.run_config import parse

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "config_scenarios"

#: (stage, transform, state, matches) of a healthy baseline run, in pipeline order.
BASE_PIPELINE = (
    ("factory", "build_model", State.APPLIED, 0),
    ("export", "export_to_gm", State.APPLIED, 1),
    ("pattern_matcher", "match_rmsnorm_pattern", State.APPLIED, 33),
    ("pattern_matcher", "quantize_fp8_moe", State.SKIPPED, None),
    ("sharding", "detect_sharding", State.APPLIED, 0),
    ("weight_load", "load_weights", State.APPLIED, 0),
    ("post_load_fusion", "fuse_gemms", State.APPLIED, 12),
    ("post_load_fusion", "fuse_rmsnorm", State.APPLIED, 33),
    ("post_load_fusion", "fuse_rope_into_trtllm_mla", State.DISABLED, None),
    ("cache_init", "insert_cached_attention", State.APPLIED, 16),
    ("compile", "compile_model", State.APPLIED, 1),
)

#: Per scenario: transform -> (baseline (state, matches), candidate (state, matches)) overrides.
CHANGES: dict[str, dict[str, tuple[tuple[State, int | None], tuple[State, int | None]]]] = {
    "explained": {
        "fuse_gemms": ((State.APPLIED, 12), (State.DISABLED, None)),
        "fuse_rmsnorm": ((State.APPLIED, 33), (State.APPLIED, 17)),
    },
    "unexplained": {"fuse_rmsnorm": ((State.APPLIED, 33), (State.DISABLED, None))},
    "not_applied": {"fuse_gemms": ((State.DISABLED, None), (State.DISABLED, None))},
}


def make_log(name: str, side: int) -> RunLog:
    """The log of one side (0 baseline, 1 candidate) of scenario ``name``."""
    records = []
    for i, (stage, transform, state, matches) in enumerate(BASE_PIPELINE):
        if transform in CHANGES[name]:
            state, matches = CHANGES[name][transform][side]
        records.append(TransformRecord(stage, transform, 0, state, matches, line=10 + i))
    return RunLog(
        path=Path(f"{name}/{side}.log"), transforms=tuple(records), rank=0, ranks_seen=(0,),
        rank_disagreement=(), formats=("V3",), prefixes=("L1",), end=LogEnd.COMPLETE, end_detail="",
        lines=40,
    )


def make_rows(base: RunLog, cand: RunLog) -> tuple[TransformComparison, ...]:
    """Rows aligned on (stage, transform, occurrence), the same way the pipeline does."""
    c = {(r.stage, r.transform, r.occurrence): r for r in cand.transforms}
    rows = []
    for r in base.transforms:
        o = c[(r.stage, r.transform, r.occurrence)]
        rows.append(TransformComparison(r.stage, r.transform, r.occurrence, Side(r.state, r.matches),
                                        Side(o.state, o.matches)))
    return tuple(rows)


def log_findings(rows: tuple[TransformComparison, ...]) -> tuple[Finding, ...]:
    """Stand-ins for the log rules' findings (codes are placeholders; categories are the real ones)."""
    out = []
    for row in rows:
        if row.baseline.state != row.candidate.state:
            out.append(Finding("ADL-STATE", "state_change", Severity.WARNING,
                               f"{row.transform}: {row.baseline.state.value} -> {row.candidate.state.value}",
                               transform=row.transform, stage=row.stage))
        if row.baseline.matches and (row.candidate.matches or 0) < row.baseline.matches:
            out.append(Finding("ADL-LOSS", "match_loss", Severity.ERROR,
                               f"{row.transform}: {row.baseline.matches} -> {row.candidate.matches}",
                               transform=row.transform, stage=row.stage))
    return tuple(out)


def run_scenario(name: str, root: Path = SCENARIOS, gates: bool = False
                 ) -> tuple[ConfigAnalysis, tuple[Finding, ...]]:
    """Parse both configs, analyse, explain; return the analysis and the explained findings."""
    base_log, cand_log = make_log(name, 0), make_log(name, 1)
    base_cfg = parse(root / name / "baseline")
    cand_cfg = parse(root / name / "candidate")
    analysis = analyze_config(base_cfg, cand_cfg, base_log, cand_log)
    rows = make_rows(base_log, cand_log)
    return analysis, explain_findings(log_findings(rows), rows, analysis, config_explained_gates=gates)
