"""CLI end to end on tensors recorded on an H200 (fixtures/tensors/gpu): rounding-level drift passes,
a precision-changing fusion fails, and plots are written only where --plots points and linked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

GPU = Path("fixtures/tensors/gpu")


@pytest.mark.parametrize(("cand", "code"), [("within", 0), ("beyond", 1), ("no_rope_k", 1)])
def test_gpu_recorded_drift_verdicts(cand: str, code: int) -> None:
    res = run_cli(GPU / "baseline", GPU / cand, "-f", "json")
    assert res.code == code, res.err
    drift = [f for f in json.loads(res.out)["findings"] if f["category"] == "numeric_drift" and f["tensor"] == "logits"]
    assert bool(drift) is (code == 1)


def test_plots_are_written_and_linked(tmp_path: Path) -> None:
    md = tmp_path / "report.md"
    res = run_cli(GPU / "baseline", GPU / "beyond", "--plots", tmp_path / "plots", "--markdown", md)
    assert res.code == 1
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert pngs and all(p.endswith(".png") for p in pngs)
    assert f"(plots/{pngs[0]})" in md.read_text()
