"""The three config scenarios (configs and logs in fixtures/config_scenarios, the logs written by
``write_logs``): run the config kind's stages on them the way the pipeline does."""

from __future__ import annotations

from pathlib import Path

from ad_diff.core.model import Finding, State, TransformComparison
from ad_diff.kinds.config.classify import classify
from ad_diff.kinds.config.compare import analyze_config
from ad_diff.kinds.config.explain import explain_findings
from ad_diff.kinds.config.model import ConfigAnalysis
from ad_diff.kinds.config.parse import parse
from ad_diff.kinds.log import parse as log_parser
from ad_diff.kinds.log.align import pair_transforms
from ad_diff.kinds.log.classify import classify_log
from ad_diff.kinds.log.model import RunLog
from tests.conftest import FIXTURES

SCENARIOS = FIXTURES / "config_scenarios"

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
    """The parsed log of one side (0 baseline, 1 candidate) of scenario ``name`` (written by
    ``write_logs`` from ``BASE_PIPELINE`` + ``CHANGES``)."""
    return log_parser.parse(SCENARIOS / name / ("baseline", "candidate")[side] / "run.log")


def make_rows(base: RunLog, cand: RunLog) -> tuple[TransformComparison, ...]:
    """Rows paired by the real aligner."""
    return pair_transforms(base, cand, ())


def write_logs() -> None:
    """(Re)write the scenario logs in the V3/L1 format from ``BASE_PIPELINE`` and ``CHANGES``."""
    for name, changes in CHANGES.items():
        for side, folder in enumerate(("baseline", "candidate")):
            lines = []
            for i, (stage, t, state, m) in enumerate(BASE_PIPELINE):
                if t in changes:
                    state, m = changes[t][side]
                head = (f"[02/10/2026-11:02:{10 + i:02d}] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] "
                        f"[stage={stage}, transform={t}] [SUMMARY] ")
                if state is State.APPLIED:
                    head += f"matches={m} | time: 0.100s (pre=0.000s, apply=0.100s, post=0.000s)"
                elif state is State.SKIPPED:
                    head += "skipped | time: 0.001s (pre=0.000s, apply=0.001s, post=0.000s)"
                else:
                    head += "disabled"
                lines.append(head)
            (SCENARIOS / name / folder / "run.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_scenario(name: str, root: Path = SCENARIOS, gates: bool = False
                 ) -> tuple[ConfigAnalysis, tuple[Finding, ...]]:
    """Parse both configs, analyse, explain; return the analysis and the explained findings."""
    base_log, cand_log = make_log(name, 0), make_log(name, 1)
    base_cfg = parse(root / name / "baseline")
    cand_cfg = parse(root / name / "candidate")
    analysis = analyze_config(base_cfg, cand_cfg, base_log, cand_log)
    rows = make_rows(base_log, cand_log)
    findings = (*classify_log(rows, base_log, cand_log), *classify(analysis))
    return analysis, explain_findings(findings, rows, analysis, config_explained_gates=gates)
