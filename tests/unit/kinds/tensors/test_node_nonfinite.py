"""New NaN/Inf in a per-node capture gates (issue 27's silent passes), whatever the outputs say: the
report's legend promises that new NaN/Inf always fails."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ad_diff import gate, pipeline
from ad_diff.recording import save_tensors
from ad_diff.settings import Settings
from tests.conftest import make_run, v3

LOG = v3("pattern_matcher", "match_rope_pattern", "matches=2")
NODES = ("linear_1", "mul_3", "add_7")


def _run(root: Path, nodes: dict[str, torch.Tensor]) -> Path:
    run = make_run(root, LOG)
    torch.manual_seed(0)
    save_tensors(run, {"logits": torch.randn(2, 8, 16)})
    save_tensors(run, nodes, file="nodes")
    return run


def _nodes() -> dict[str, torch.Tensor]:
    torch.manual_seed(1)
    return {n: torch.randn(2, 8, 4) for n in NODES}


def _spoil(t: torch.Tensor, value: float, everywhere: bool) -> torch.Tensor:
    t = t.clone()
    if everywhere:
        t.fill_(value)
    else:
        t.view(-1)[3] = value
    return t


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("everywhere", [True, False], ids=["all", "one element"])
@pytest.mark.parametrize("node", NODES)
def test_new_nonfinite_in_any_node_capture_gates(tmp_path: Path, value: float, everywhere: bool,
                                                 node: str) -> None:
    base = _run(tmp_path / "b", _nodes())
    spoiled = {**_nodes(), node: _spoil(_nodes()[node], value, everywhere)}
    cand = _run(tmp_path / "c", spoiled)
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    assert not [f for f in result.findings if f.tensor == "logits"]  # the outputs are fine
    [f] = [f for f in result.findings if f.code == "ADT013"]
    assert f.node == node
    assert node in f.message
    assert gate.decide(result.findings, "error").exit_code == gate.EXIT_REGRESSION


def test_nonfinite_the_baseline_has_too_is_not_new(tmp_path: Path) -> None:
    spoiled = {**_nodes(), "mul_3": _spoil(_nodes()["mul_3"], float("nan"), True)}
    base, cand = _run(tmp_path / "b", spoiled), _run(tmp_path / "c", spoiled)
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    assert not [f for f in result.findings if f.code == "ADT013"]
    assert gate.decide(result.findings, "error").exit_code == gate.EXIT_OK
