"""--tolerance-preset ad-onboarding: AD's model-onboarding numerics check, rmse(a-b)/rmse(b) against fixed
ratios by tensor kind (attention 0.10, MoE 0.02, layers and the full model 0.05)."""

from __future__ import annotations

import json
import math
import shutil
import struct
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli

sys.path.insert(0, str(ROOT / "scripts"))
import make_hostile_fixtures as h  # noqa: E402

N = 64
BASE = [math.sin(i * 0.37) + 0.5 * math.cos(i * 1.3) for i in range(N)]
RMS = math.sqrt(sum(x * x for x in BASE) / N)


def _drifted(ratio: float) -> list[float]:
    """``BASE`` plus an error whose rmse is ``ratio`` times rmse(BASE): rmse(a-b)/rmse(b) == ratio."""
    noise = [(-1) ** i * RMS * ratio for i in range(N)]
    return [b + e for b, e in zip(BASE, noise, strict=True)]


def _pair(tmp_path: Path, ratios: dict[str, float]) -> Path:
    for side in ("baseline", "candidate"):
        shutil.copytree(FIXTURES / "scenarios/identical" / side, tmp_path / side)
        tensors = {name: ("F32", (N,), struct.pack(f"<{N}f", *(BASE if side == "baseline" else _drifted(r))))
                   for name, r in ratios.items()}
        h.write_tensors(tmp_path / side, tensors)
    return tmp_path


def _verdicts(pair: Path, *args: str) -> dict[str, bool]:
    res = run_cli(pair / "baseline", pair / "candidate", "-f", "json", *args)
    assert res.code in (0, 1), res.err
    rows = json.loads(res.out)["sections"]["tensors"]["comparisons"]
    return {r["name"]: r["judgement"]["within"] for r in rows}


RATIOS = {"logits": 0.04, "layers.0.self_attn": 0.08, "layers.1.block_sparse_moe": 0.03,
          "layers.2.input_layernorm": 0.0005}


def test_preset_applies_the_onboarding_ratios_by_tensor_kind(tmp_path: Path) -> None:
    pair = _pair(tmp_path, RATIOS)
    assert _verdicts(pair, "--tolerance-preset", "ad-onboarding") == {
        "logits": True,                     # 0.04 <= 0.05 (full model)
        "layers.0.self_attn": True,         # 0.08 <= 0.10 (attention)
        "layers.1.block_sparse_moe": False,  # 0.03 > 0.02 (MoE block)
        "layers.2.input_layernorm": True,   # identical math: assert_close at 1e-3
    }
    # without the preset, float32's own tolerance judges every one of them as drift
    assert not any(_verdicts(pair).values())


@pytest.mark.parametrize(("ratio", "passed"), [(0.049, True), (0.051, False)])
def test_the_full_model_ratio_is_a_boundary(ratio: float, passed: bool, tmp_path: Path) -> None:
    pair = _pair(tmp_path, {"logits": ratio})
    assert _verdicts(pair, "--tolerance-preset", "ad-onboarding") == {"logits": passed}


def test_tol_and_the_config_file_override_the_preset(tmp_path: Path) -> None:
    pair = _pair(tmp_path, {"layers.1.block_sparse_moe": 0.03})
    assert _verdicts(pair, "--tolerance-preset", "ad-onboarding", "--tol", "*moe*:nrmse=0.04") == {
        "layers.1.block_sparse_moe": True}


def test_unknown_preset_is_exit_2(tmp_path: Path) -> None:
    pair = _pair(tmp_path, {"logits": 0.01})
    res = run_cli(pair / "baseline", pair / "candidate", "--tolerance-preset", "strict")
    assert res.code == 2
    assert "unknown tolerance preset 'strict' (known: ad-onboarding)" in res.err
