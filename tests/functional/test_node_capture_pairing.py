"""Per-node tensor captures pair through graph alignment: when a pass added upstream shifts every FX name
counter (the rename_only scenario: linear_3 becomes linear_4), the capture of baseline `linear_3` is compared
with the candidate's `linear_4`, not with the unrelated node that now happens to be called `linear_3`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from ad_diff.recording import save_tensors
from tests.conftest import FIXTURES, run_cli

SCEN = FIXTURES / "scenarios/rename_only"


def _run(dst: Path, side: str, captures: dict[str, torch.Tensor]) -> Path:
    shutil.copytree(SCEN / side, dst)
    save_tensors(dst, {"logits": torch.ones(2, 8)}, file="outputs")
    save_tensors(dst, captures, file="nodes")
    return dst


def test_shifted_names_pair_by_node(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 16, generator=g), torch.randn(4, 16, generator=g)
    # same two nodes in both runs; the candidate's names are shifted by one
    base = _run(tmp_path / "b", "baseline", {"linear_2": a, "linear_3": b})
    cand = _run(tmp_path / "c", "candidate", {"linear_3": a, "linear_4": b})
    res = run_cli(base, cand, "-f", "json")
    data = json.loads(res.out)
    assert res.code == 0, [f["message"] for f in data["findings"]]
    assert not [f for f in data["findings"] if f["category"] == "numeric_drift"]
    assert any("paired under their baseline names through graph alignment" in n
               for n in data["sections"]["tensors"]["notes"])


def test_without_dumps_names_pair_as_is_and_the_mixup_shows(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 16, generator=g), torch.randn(4, 16, generator=g)
    base = _run(tmp_path / "b", "baseline", {"linear_2": a, "linear_3": b})
    cand = _run(tmp_path / "c", "candidate", {"linear_3": a, "linear_4": b})
    shutil.rmtree(base / "graphs")
    shutil.rmtree(cand / "graphs")
    data = json.loads(run_cli(base, cand, "-f", "json").out)
    drift = [f for f in data["findings"] if f["category"] == "numeric_drift"]
    # the mix-up shows as drift, but without graph dumps no node is named as the first one (issue 13 4)
    assert [f["code"] for f in drift] == ["ADT011"]
    assert drift[0]["node"] is None
    assert "cannot be named (no graph order" in drift[0]["message"]
    assert not any("first drifting node in graph order" in f["message"] for f in data["findings"])
