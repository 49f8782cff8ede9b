"""Helpers for the candidate tests: source trees (the committed fixture tree, small fake ones) and dumps."""

from __future__ import annotations

from pathlib import Path

from ad_diff.kinds.graph.model import GraphDump
from ad_diff.kinds.graph.parse import parse_text
from tests.conftest import FIXTURES

AD = "tensorrt_llm/_torch/auto_deploy"
C = FIXTURES / "candidates"
SRC = C / "trtllm_src"
"""Registration files written for these tests in the upstream layout (fixtures/candidates/README.md)."""

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


def tree_with(root: Path, files: dict[str, str]) -> Path:
    """A tree holding ``files`` (paths relative to the auto_deploy package) and an empty custom_ops/."""
    (root / AD / "custom_ops").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / AD / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SEP = "=" * 80


def dump(*sections: tuple[str, list[str]]) -> GraphDump:
    """A D3 dump text of ``(section name, SSA lines)`` sections, parsed."""
    out = ["# Transform: compile_model", "# Stage: compile", f"# GraphModules found: {len(sections)}", "", ""]
    for i, (name, lines) in enumerate(sections):
        out += ([""] if i else []) + [SEP, f"# GraphModule: {name}", SEP, ""] + lines
    return parse_text("\n".join(out) + "\n", Path("synth.txt"))


def t(name: str, shape: str = "2x8", dtype: str = "torch.float32") -> str:
    """``%name : shape : dtype`` (an argument or a placeholder line)."""
    return f"%{name} : {shape} : {dtype}"


def call(name: str, target: str, *args: str, shape: str = "2x8") -> str:
    """One call line."""
    return f"%{name} = {target}({', '.join(args)}) : {shape} : torch.float32"
