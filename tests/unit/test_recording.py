"""The recording API writes what the parser reads, including per-node captures through fx.Interpreter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.fx

from ad_diff.kinds.tensors.find import discover
from ad_diff.recording import capture_nodes, save_tensors


class _M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)) + 1


def test_save_and_discover(tmp_path: Path) -> None:
    logits = torch.randn(2, 5).bfloat16()
    save_tensors(
        tmp_path, {"logits": logits}, inputs={"input_ids": torch.arange(4)}, metadata={"variant": "x"}
    )
    save_tensors(tmp_path, {"logits": logits.double()}, reference=True)
    run = discover(tmp_path / "tensors", "baseline")
    assert run.outputs["logits"].shape == (2, 5)
    assert run.outputs["logits"].dtype == "BF16"
    assert run.references["logits"].dtype == "F64"
    assert run.inputs["input_ids"].dtype == "I64"
    index = json.loads((tmp_path / "tensors" / "record.json").read_text())
    assert index["files"]["outputs.safetensors"]["tensors"]["logits"] == {
        "dtype": "bfloat16",
        "shape": [2, 5],
    }
    assert index["files"]["reference/outputs.safetensors"]["tensors"]["logits"]["dtype"] == "float64"
    assert index["files"]["outputs.safetensors"]["metadata"]["variant"] == "x"
    assert index["files"]["inputs.safetensors"]["tensors"]["input_ids"]["shape"] == [4]


def test_capture_nodes_with_interpreter(tmp_path: Path) -> None:
    gm = torch.fx.symbolic_trace(_M())
    x = torch.randn(2, 4)
    caps = capture_nodes(gm, x)
    assert set(caps) == {"lin", "relu", "add"}
    assert torch.equal(caps["add"], gm(x))
    only = capture_nodes(gm, x, nodes=["relu"])
    assert list(only) == ["relu"]
    save_tensors(tmp_path, caps, file="nodes")
    run = discover(tmp_path / "tensors", "baseline")
    assert {r.kind for r in run.outputs.values()} == {"node"}


def test_bad_file_name_and_non_tensor(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file name"):
        save_tensors(tmp_path, {"a": torch.ones(1)}, file="../evil")
    with pytest.raises(TypeError, match="expected a torch.Tensor"):
        save_tensors(tmp_path, {"a": [1, 2]})
