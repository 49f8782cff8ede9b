"""Helpers for the candidate tests: fake TensorRT-LLM source trees and synthetic dumps."""

from __future__ import annotations

from pathlib import Path

AD = "tensorrt_llm/_torch/auto_deploy"

RMSNORM_OP = """import torch


@torch.library.custom_op("auto_deploy::torch_rmsnorm", mutates_args=())
def my_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    raise SystemExit("the lookup must never execute source-tree code")
"""

RMSNORM_TRANSFORM = """from ..interface import TransformRegistry


@TransformRegistry.register("match_rmsnorm_pattern")
class MatchRMSNorm:
    pass
"""

OTHER_OP = """import torch

torch.library.define("auto_deploy::torch_moe(Tensor x) -> Tensor")
lib = torch.library.Library("auto_deploy", "FRAGMENT")
lib.define("silu_and_mul(Tensor x) -> Tensor")
"""


def fake_tree(root: Path, with_rmsnorm: bool) -> Path:
    """A TensorRT-LLM-shaped tree; with or without an RMSNorm op and transform."""
    ops = root / AD / "custom_ops"
    lib = root / AD / "transform" / "library"
    ops.mkdir(parents=True)
    lib.mkdir(parents=True)
    (ops / "other.py").write_text(OTHER_OP)
    if with_rmsnorm:
        (ops / "rms_norm.py").write_text(RMSNORM_OP)
        (lib / "rms_norm.py").write_text(RMSNORM_TRANSFORM)
    return root
