"""CLI end to end on tensors recorded on an H200 (fixtures/tensors/gpu): rounding-level drift passes,
a precision-changing fusion fails, and plots are written only where --plots points and linked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

GPU = Path("fixtures/tensors/gpu")


@pytest.mark.parametrize(("cand", "code"), [("within", 0), ("beyond", 1), ("no_rope_k", 1)])
def test_gpu_recorded_drift_verdicts(cand: str, code: int) -> None:
    res = run_cli(GPU / "baseline", GPU / cand, "-f", "json")
    assert res.code == code, res.err
    drift = [
        f
        for f in json.loads(res.out)["findings"]
        if f["category"] == "numeric_drift" and f["tensor"] == "logits"
    ]
    assert bool(drift) is (code == 1)


def test_plots_are_written_and_named(tmp_path: Path) -> None:
    md = tmp_path / "report.md"
    res = run_cli(GPU / "baseline", GPU / "beyond", "--plots", tmp_path / "plots", "--markdown", md)
    assert res.code == 1
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert pngs
    assert all(p.endswith(".png") for p in pngs)
    text = md.read_text()
    # named by the folder relative to the report, not linked: a relative link is dead in a PR comment
    assert "as PNG files in `plots/`" in text
    assert f"(plots/{pngs[0]})" not in text


def test_gathered_logits_pass_with_a_note(tmp_path: Path) -> None:
    syn = Path("fixtures/tensors/synthetic/gathered")
    md = tmp_path / "r.md"
    res = run_cli(syn / "baseline", syn / "candidate", "-f", "json", "--markdown", md)
    assert res.code == 0, res.out
    data = json.loads(res.out)
    assert not [f for f in data["findings"] if f["code"] == "ADT003"]
    assert "keeps only the last position" in md.read_text()


@pytest.mark.parametrize("name", ["one_row", "one_row_noref"])
def test_one_broken_token_gates(tmp_path: Path, name: str) -> None:
    syn = Path("fixtures/tensors/synthetic") / name
    for side in ("baseline", "candidate"):  # a run folder needs a log; the tensors are the fixture's
        shutil.copytree(syn / side, tmp_path / side)
        shutil.copy(Path("fixtures/tensors/synthetic/gathered/baseline/ad.log"), tmp_path / side / "ad.log")
    res = run_cli(tmp_path / "baseline", tmp_path / "candidate", "-f", "json")
    assert res.code == 1
    (f,) = [f for f in json.loads(res.out)["findings"] if f["code"] == "ADT001"]
    assert "[2, 127]" in f["message"]


def test_reports_are_byte_identical_across_thread_counts(tmp_path: Path) -> None:
    outs = []
    for threads in ("1", "2"):
        js, md = tmp_path / f"{threads}.json", tmp_path / f"{threads}.md"
        env = {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        res = run_cli(
            GPU / "baseline", GPU / "beyond", "--json", js, "--markdown", md, "--jobs", threads, env=env
        )
        assert res.code == 1
        outs.append((js.read_text(), md.read_text()))
    assert outs[0] == outs[1]


def test_cuda_that_cannot_be_had_is_exit_2_and_auto_falls_back_with_a_note() -> None:
    hidden = {"CUDA_VISIBLE_DEVICES": ""}  # no device, whether or not this machine has one
    res = run_cli(GPU / "baseline", GPU / "within", "--tensor-device", "cuda", env=hidden)
    assert res.code == 2, res.err
    assert "tensor device cuda (--tensor-device or tensor_device in the config) cannot be used" in res.err
    assert "Traceback" not in res.err
    res = run_cli(GPU / "baseline", GPU / "within", "--tensor-device", "auto", "-f", "json", env=hidden)
    assert res.code == 0, res.err
    tensors = json.loads(res.out)["sections"]["tensors"]
    assert tensors["device"] == "cpu"
    assert any("tensor device auto:" in n and "computed on the CPU" in n for n in tensors["notes"])
