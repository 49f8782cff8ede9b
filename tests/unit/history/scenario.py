"""Generated histories with known changes, built at test time (scripts/benchgen/history.py)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from benchgen.history import Event, make_history, run_name  # noqa: E402

__all__ = ["Event", "make_history", "run_name", "scenario", "SCENARIO_RUNS"]

SCENARIO_RUNS = 120
MODELS = ("llama", "mixtral", "qwen")
EVENTS = (
    # fixed starting values for the transforms that change, so the expected steps do not hang on hashes
    Event("llama", "fuse_moe", 0, 8),
    Event("llama", "fuse_moe", 40, 0),  # collapse at run 40
    Event("mixtral", "match_rmsnorm_pattern", 0, 10),
    Event("mixtral", "match_rmsnorm_pattern", 80, 8),  # partial loss at run 80 (20 %)
    Event("mixtral", "fuse_gemms", 0, 0),
    Event("mixtral", "fuse_gemms", 100, 6),  # new matches at run 100
    Event("llama", "fuse_allreduce_residual_rmsnorm", 0, 4),
    Event("llama", "fuse_allreduce_residual_rmsnorm", 20, 3, runs=1),  # flaky: three one-run blips
    Event("llama", "fuse_allreduce_residual_rmsnorm", 55, 0, runs=1),
    Event("llama", "fuse_allreduce_residual_rmsnorm", 90, 3, runs=1),
)


def scenario(root: Path, kind: str = "snapshot") -> Path:
    """The issue's history: collapse at run 40, partial loss at 80, a flaky transform, qwen from run 60."""
    make_history(
        root,
        runs=SCENARIO_RUNS,
        models=MODELS,
        n_transforms=12,
        events=EVENTS,
        model_start={"qwen": 60},
        kind=kind,
    )
    return root
