"""Chunked statistics agree with a direct computation, whatever the chunking."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from ad_diff.kinds.tensors.find import discover
from ad_diff.kinds.tensors.measure import MeasureOptions, measure


def _pair(tmp_path: Path, b: torch.Tensor, c: torch.Tensor, r: torch.Tensor | None = None):
    for side, t in (("b", b), ("c", c)):
        (tmp_path / side).mkdir()
        save_file({"logits": t}, str(tmp_path / side / "outputs.safetensors"))
    if r is not None:
        (tmp_path / "b" / "reference").mkdir()
        save_file({"logits": r}, str(tmp_path / "b" / "reference" / "outputs.safetensors"))
    rb, rc = discover(tmp_path / "b", "baseline"), discover(tmp_path / "c", "candidate")
    return rb.outputs["logits"], rc.outputs["logits"], rb.references.get("logits")


@pytest.mark.parametrize("chunk", [7, 1000, 1 << 20])
def test_matches_direct_computation(tmp_path: Path, chunk: int) -> None:
    g = torch.Generator().manual_seed(0)
    b = torch.randn(13, 50, generator=g).bfloat16()
    c = (b.float() + 0.01 * torch.randn(13, 50, generator=g)).bfloat16()
    rb, rc, _ = _pair(tmp_path, b, c)
    s = measure(rb, rc, MeasureOptions(atol=1e-5, rtol=1.6e-2, chunk=chunk, topk=3))
    bf, cf = b.float().double(), c.float().double()
    d = (cf - bf).abs()
    assert s.max_abs == pytest.approx(d.max().item())
    assert s.mean_abs == pytest.approx(d.mean().item())
    assert s.rmse == pytest.approx(d.pow(2).mean().sqrt().item(), rel=1e-5)
    cos = torch.nn.functional.cosine_similarity(bf.flatten(), cf.flatten(), 0).item()
    assert s.cosine == pytest.approx(cos)
    assert s.outside == int((d > 1e-5 + 1.6e-2 * bf.abs()).sum())
    flat = int(d.flatten().argmax())
    assert s.worst_index == (flat // 50, flat % 50)
    assert s.worst_candidate - s.worst_baseline == pytest.approx(cf.flatten()[flat] - bf.flatten()[flat])
    assert s.top1 == pytest.approx((b.float().argmax(-1) == c.float().argmax(-1)).double().mean().item())
    assert s.within_elementwise is (s.outside == 0)


def test_nan_and_inf_are_counted_and_excluded(tmp_path: Path) -> None:
    b = torch.ones(100)
    c = torch.ones(100)
    b[5] = c[5] = float("nan")  # same NaN in both: not a mismatch
    c[7] = float("nan")
    c[9] = float("inf")
    rb, rc, _ = _pair(tmp_path, b, c)
    s = measure(rb, rc, MeasureOptions(atol=1e-5, rtol=1e-3, chunk=16))
    assert (s.nan_baseline, s.nan_candidate, s.inf_baseline, s.inf_candidate) == (1, 2, 0, 1)
    assert s.outside == 2
    assert s.compared == 97
    assert s.max_abs == 0
    assert s.new_nonfinite


def test_reference_ratio(tmp_path: Path) -> None:
    r = torch.linspace(-1, 1, 400, dtype=torch.float64)
    b = r + 0.01
    c = r + 0.02
    rb, rc, ref = _pair(tmp_path, b, c, r)
    s = measure(rb, rc, MeasureOptions(atol=1e-7, rtol=1e-7, chunk=64), reference=ref)
    assert s.reference is not None
    assert s.reference.ratio == pytest.approx(2.0)
    assert s.reference.baseline_rmse == pytest.approx(0.01)


def test_histogram_and_samples(tmp_path: Path) -> None:
    b = torch.zeros(1000)
    c = torch.full((1000,), 1e-3)
    rb, rc, _ = _pair(tmp_path, b, c)
    s = measure(rb, rc, MeasureOptions(atol=0, rtol=0, chunk=100, histogram=True, samples=50, relative=True))
    assert s.histogram is not None
    assert sum(s.histogram.abs_counts) == 1000
    assert s.histogram.quantile(0.5) == pytest.approx(1e-3, rel=0.15)
    assert s.samples is not None
    assert len(s.samples[0]) == 50
    assert math.isinf(s.max_rel)  # change where the baseline is 0


def _stats_json(s: object) -> str:
    import json

    from ad_diff.core.jsonable import to_jsonable

    return json.dumps(to_jsonable(s), sort_keys=True)


def test_results_do_not_depend_on_the_chunk_size(tmp_path: Path) -> None:
    from ad_diff.kinds.tensors.model import RowLimits

    g = torch.Generator().manual_seed(3)
    r = torch.randn(6, 20, 70, generator=g, dtype=torch.float64)
    b = (r + 0.01 * torch.randn(r.shape, generator=g, dtype=torch.float64)).bfloat16()
    c = (r + 0.01 * torch.randn(r.shape, generator=g, dtype=torch.float64)).bfloat16()
    c[1, 2, 3] = float("nan")  # one chunk takes the masked path
    rb, rc, ref = _pair(tmp_path, b, c, r.float())
    limits = RowLimits(ratio=4, spread=4, nrmse=0.016, outside=0.5, atol=1e-5)
    def opts(chunk: int) -> MeasureOptions:
        return MeasureOptions(atol=1e-5, rtol=1.6e-2, chunk=chunk, topk=3, rows=limits, relative=True)

    chunks = (70, 71, 700, 5000, 1 << 18)
    outs = {_stats_json(measure(rb, rc, opts(chunk), reference=ref)) for chunk in chunks}
    assert len(outs) == 1


def test_cosine_keeps_its_digits_near_one(tmp_path: Path) -> None:
    import numpy as np

    g = torch.Generator().manual_seed(4)
    b = torch.randn(64, 4096, generator=g).bfloat16()
    c = (b.float() * (1 + 1e-3 * torch.randn(b.shape, generator=g))).bfloat16()
    rb, rc, _ = _pair(tmp_path, b, c)
    s = measure(rb, rc, MeasureOptions(atol=1e-5, rtol=1.6e-2))
    x, y = b.double().numpy().ravel(), c.double().numpy().ravel()
    xx, yy = math.fsum((x * x).tolist()), math.fsum((y * y).tolist())
    exact_gap = math.fsum(((x - y) ** 2).tolist()) / 2 / math.sqrt(xx * yy)
    exact_gap -= (math.sqrt(xx) - math.sqrt(yy)) ** 2 / 2 / math.sqrt(xx * yy)
    assert s.one_minus_cosine == pytest.approx(exact_gap, rel=1e-6)
    assert abs(s.cosine - float(np.dot(x, y) / np.sqrt(np.dot(x, x) * np.dot(y, y)))) < 1e-12


def test_complex_tensors_are_compared_on_both_parts(tmp_path: Path) -> None:
    z = torch.complex(torch.ones(8, 32), torch.zeros(8, 32))
    w = torch.complex(torch.ones(8, 32), torch.full((8, 32), 0.5))  # same real parts, imaginary parts differ
    rb, rc, _ = _pair(tmp_path, z, w)
    assert rb.dtype == "C64"
    s = measure(rb, rc, MeasureOptions(atol=1e-5, rtol=1.3e-6))
    assert s.max_abs == pytest.approx(0.5)
    assert s.outside == 8 * 32
    assert s.worst_index is not None
    assert len(s.worst_index) == 2


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2,
                                   torch.int32, torch.float64])
def test_decoding_without_torch_matches_torch(tmp_path: Path, dtype: torch.dtype) -> None:
    import numpy as np

    from ad_diff.kinds.tensors.reader import ChunkReader, compute_dtype

    x = (torch.randn(3, 50, generator=torch.Generator().manual_seed(5)) * 20).to(dtype)
    rec, _, _ = _pair(tmp_path, x, x)
    rd = ChunkReader(rec)
    got = rd.read(0, rec.numel, np.empty(rec.numel, compute_dtype(rec.dtype)))
    rd.close()
    assert np.array_equal(got, x.double().numpy().ravel().astype(got.dtype), equal_nan=True)


def test_rows_find_the_one_wrong_row(tmp_path: Path) -> None:
    from ad_diff.kinds.tensors.model import RowLimits

    g = torch.Generator().manual_seed(6)
    b = torch.randn(4, 16, 64, generator=g).bfloat16()
    c = b.clone()
    c[2, 15] = (c[2, 15].float() + 0.3 * torch.randn(64, generator=g)).bfloat16()
    rb, rc, _ = _pair(tmp_path, b, c)
    limits = RowLimits(ratio=4, spread=4, nrmse=0.016, outside=0.5, atol=1e-5)
    s = measure(rb, rc, MeasureOptions(atol=1e-5, rtol=1.6e-2, topk=3, rows=limits))
    assert s.rows is not None
    assert s.rows.outliers == 1
    assert s.rows.worst[0].index == (2, 15)
    assert s.rows.worst[0].outlier
    assert s.rows.sequences == 4
    assert s.rows.next_token is not None


BLAS_THREADS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from ad_diff.core.jsonable import to_jsonable
from ad_diff.kinds.tensors.measure import MeasureOptions, measure
from ad_diff.kinds.tensors.find import discover
from ad_diff.kinds.tensors.tolerance import resolve, row_limits
out = []
for name in ("wide", "rows"):
    rb = discover(__import__("pathlib").Path(sys.argv[2]) / name / "b", "baseline").outputs["logits"]
    rc = discover(__import__("pathlib").Path(sys.argv[2]) / name / "c", "candidate").outputs["logits"]
    tol = resolve("logits", rb.dtype, {})
    s = measure(rb, rc, MeasureOptions(atol=tol.atol, rtol=tol.rtol, rows=row_limits(tol), relative=True))
    out.append(to_jsonable(s))
print(json.dumps(out, sort_keys=True))
"""


def test_blas_dots_do_not_depend_on_the_thread_count(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    g = torch.Generator().manual_seed(7)
    for name, shape in (("wide", (3, 300_000)), ("rows", (64, 8192))):  # blocked rows, and whole-row dots
        b = torch.randn(shape, generator=g)
        (tmp_path / name).mkdir()
        _pair(tmp_path / name, b.bfloat16(), (b * 1.01).bfloat16())
    root = str(Path(__file__).resolve().parents[4])
    outs = set()
    for threads in ("1", "2", "4"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
               "MKL_NUM_THREADS": threads}
        proc = subprocess.run([sys.executable, "-c", BLAS_THREADS, root, str(tmp_path)], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        outs.add(proc.stdout)
    assert len(outs) == 1
    assert '"rmse"' in outs.pop()
