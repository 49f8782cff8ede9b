"""The torch pass (``--tensor-device cuda``) gives the numpy pass's figures; unusable CUDA is a usage error.

The torch pass runs here on torch's CPU device (the same code as on CUDA but for pinned buffers and events);
``cuda`` cases run where a CUDA device is visible and are skipped elsewhere.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import save_file

from ad_diff.errors import UsageError
from ad_diff.kinds.tensors import gpu
from ad_diff.kinds.tensors.analysis import last_position
from ad_diff.kinds.tensors.find import discover
from ad_diff.kinds.tensors.measure import MeasureOptions, measure
from ad_diff.kinds.tensors.model import TensorStats
from ad_diff.kinds.tensors.reader import lanes
from ad_diff.kinds.tensors.rows import row_layout
from ad_diff.kinds.tensors.tolerance import resolve, row_limits

REL = 1e-6
"""Sums: the CPU pass rounds float32 blocks, the torch pass sums float64 products (recording-tensors.md)."""
COSINE = 1e-11
NO_CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
DEVICES = ["cpu", pytest.param("cuda", marks=NO_CUDA)]


def _pair(tmp_path: Path, b: torch.Tensor, c: torch.Tensor, r: torch.Tensor | None = None):
    for side, t in (("b", b), ("c", c)):
        (tmp_path / side).mkdir()
        save_file({"logits": t.contiguous()}, str(tmp_path / side / "outputs.safetensors"))
    if r is not None:
        (tmp_path / "b" / "reference").mkdir()
        save_file({"logits": r.contiguous()}, str(tmp_path / "b" / "reference" / "outputs.safetensors"))
    rb, rc = discover(tmp_path / "b", "baseline"), discover(tmp_path / "c", "candidate")
    return rb.outputs["logits"], rc.outputs["logits"], rb.references.get("logits")


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two results differ: floats beyond REL (cosine beyond COSINE), anything else at all."""
    if is_dataclass(a) and is_dataclass(b):
        return [d for f in fields(a) for d in _differences(getattr(a, f.name), getattr(b, f.name), f.name)]
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return [f"{where}: {len(a)} vs {len(b)} items"]
        return [d for x, y in zip(a, b, strict=True) for d in _differences(x, y, where)]
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return []
        tol = COSINE if where == "cosine" else 0.0
        return [] if math.isclose(a, b, rel_tol=REL, abs_tol=tol) else [f"{where}: {a!r} vs {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} vs {b!r}"]


def _both(rb: Any, rc: Any, rr: Any, device: str, **kw: Any) -> tuple[TensorStats, TensorStats]:
    tol = resolve("logits", rb.dtype, {})
    o = MeasureOptions(atol=tol.atol, rtol=tol.rtol, rows=row_limits(tol), **kw)
    cpu = measure(rb, rc, o, reference=rr)
    dev = gpu.measure_torch(rb, rc, replace(o, device=device), row_layout(rb.shape, lanes(rb.dtype)), rr)
    return cpu, dev


def _noisy(shape: tuple[int, ...], scale: float = 0.01, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    return x, x + scale * torch.randn(shape, generator=g)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [0, 3000])
def test_bf16_logits_with_reference_match_the_numpy_pass(tmp_path: Path, device: str, chunk: int) -> None:
    x, y = _noisy((4, 64, 256))
    y[2, 63] += 0.5  # one broken row: the row figures must name it on both devices
    rb, rc, rr = _pair(tmp_path, x.bfloat16(), y.bfloat16(), x)
    cpu, dev = _both(rb, rc, rr, device, topk=5, histogram=True, samples=300, relative=True, chunk=chunk)
    assert _differences(cpu, dev) == []
    assert cpu.rows is not None
    assert cpu.rows.worst[0].index == (2, 63)
    assert cpu.histogram is not None
    assert sum(cpu.histogram.abs_counts) == 4 * 64 * 256
    assert dev.one_minus_cosine == pytest.approx(cpu.one_minus_cosine, rel=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("dtype", "shape"),
    [
        (torch.float32, (8, 300)),
        (torch.float16, (5000,)),  # no rows to judge: fixed blocks
        (torch.float64, (3, 7, 40)),
        (torch.float8_e4m3fn, (16, 64)),
        (torch.complex64, (6, 50)),
        (torch.int64, (10, 32)),  # decoded on the host
        (torch.bfloat16, (2, 300_000)),  # rows longer than one piece
    ],
)
def test_every_dtype_matches_the_numpy_pass(
    tmp_path: Path, device: str, dtype: torch.dtype, shape: tuple[int, ...]
) -> None:
    x, y = _noisy(shape, scale=0.05)
    if dtype is torch.complex64:
        x, y = torch.complex(x, y), torch.complex(y, x)
    elif dtype is torch.int64:
        x, y = (x * 100).round(), (y * 100).round()
    rb, rc, _ = _pair(tmp_path, x.to(dtype), y.to(dtype))
    cpu, dev = _both(rb, rc, None, device, relative=True, histogram=True)
    assert _differences(cpu, dev) == []
    assert cpu.outside > 0  # the tolerance test ran on something


@pytest.mark.parametrize("device", DEVICES)
def test_nan_and_inf_are_masked_alike(tmp_path: Path, device: str) -> None:
    x, y = _noisy((6, 128))
    y[0, :5] = float("nan")
    y[1, 3] = float("inf")
    x[1, 4] = float("-inf")
    x[2, 7] = y[2, 7] = float("nan")
    r = x.clone()
    r[3, 9] = float("nan")  # a reference hole drops that element from every sum, as on the CPU
    rb, rc, rr = _pair(tmp_path, x.bfloat16(), y.bfloat16(), r)
    cpu, dev = _both(rb, rc, rr, device, topk=3, samples=50)
    assert (dev.nan_baseline, dev.nan_candidate, dev.inf_baseline, dev.inf_candidate) == (1, 6, 1, 1)
    assert dev.compared == cpu.compared == 6 * 128 - 8
    assert cpu.samples is not None
    assert dev.samples is not None
    assert _differences(cpu, dev) == []


@pytest.mark.parametrize("device", DEVICES)
def test_gathered_last_position_reads_the_same_rows(tmp_path: Path, device: str) -> None:
    x, y = _noisy((3, 9, 64))
    rb, rc, _ = _pair(tmp_path, x.bfloat16(), y[:, -1:, :].bfloat16())
    sel = last_position(rb, rc)
    assert sel is not None
    cpu, dev = _both(sel, rc, None, device, topk=2)
    assert _differences(cpu, dev) == []
    assert dev.numel == 3 * 64


def test_cpu_is_taken_as_asked_without_a_note() -> None:
    assert gpu.resolve_device("cpu") == ("cpu", None)


def test_cuda_without_a_device_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    with pytest.raises(UsageError, match=r"tensor device cuda .* cannot be used: torch .* sees no CUDA"):
        gpu.resolve_device("cuda")
    device, note = gpu.resolve_device("auto")
    assert device == "cpu"
    assert note is not None
    assert "sees no CUDA device; statistics computed on the CPU" in note


def test_cuda_without_torch_or_with_a_cpu_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.version, "cuda", None)
    with pytest.raises(UsageError, match="CPU-only build"):
        gpu.resolve_device("cuda")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a))
    want = r"torch is not installed \(pip install .ad-diff\[pt\].\, with a CUDA build"
    with pytest.raises(UsageError, match=want):
        gpu.resolve_device("cuda")
    with pytest.raises(UsageError, match="must be one of cpu, cuda, auto, not 'gpu'"):
        gpu.resolve_device("gpu")
