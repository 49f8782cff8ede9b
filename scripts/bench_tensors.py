"""Benchmark: ad-diff's tensor comparison against a single numpy pass over the same two files.

    python scripts/bench_tensors.py [--dir /tmp/adbench-tensors] [--mib 256] [--runs 5] [--logits]
                                    [--device cpu --device cuda]

Creates (once) a pair of bf16 safetensors files of ``--mib`` MiB each, shaped ``[16, S, 8192]`` (rows of
8192 like hidden states or logits; the candidate is the baseline plus bf16-level noise), in
``--dir/{baseline,candidate}/tensors/``. Then, interleaved ``--runs`` times in one process (page cache warm
for both):

* **floor**: one single-threaded numpy pass computing ``max |a - b|`` over both memory-mapped files (bf16
  taken as uint16 and shifted into float32, 256 Ki elements at a time into reused buffers: the same decoding
  ad-diff uses, so the ratio measures the statistics, not a slower decoder);
* **ad-diff**: ``analyze_tensors`` on the two folders (discovery, every statistic and the per-row figures in
  one pass, judgement), once per ``--device`` (``--tensor-device``; cuda needs torch with a CUDA device).

Prints the medians and their ratio (issue 15 target: <= 2.0), of wall time and of this process's CPU time
(the CPU pass is single-threaded, so CPU time is the steadier figure on a shared machine; on CUDA the wall
time is the one that counts), and checks the cosine against the exact value (float64 products of the bf16
values, which are exact, summed pairwise: error ~1e-16; target: within 1e-9). With several devices it also
prints how far each device's figures are from the first one's. ``--logits`` names the tensor ``logits`` so
top-1/top-5 agreement per row is measured too (five masked argmax passes per row: slower; reported
separately, not part of the target). Peak RSS is that of the whole process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import resource
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CHUNK = 1 << 18
ROW = 8192


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns (round to nearest even)."""
    u = x.view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def generate(root: Path, mib: int, name: str) -> tuple[Path, Path]:
    """Write the pair (once); returns the two files."""
    numel = mib * (1 << 20) // 2
    shape = [16, numel // 16 // ROW, ROW]
    paths = []
    for side in ("baseline", "candidate"):
        p = root / side / "tensors" / "outputs.safetensors"
        paths.append(p)
        header = json.dumps(
            {name: {"dtype": "BF16", "shape": shape, "data_offsets": [0, 2 * numel]}}
        ).encode()
        header += b" " * (-len(header) % 8)
        if p.is_file() and p.stat().st_size == 8 + len(header) + 2 * numel:
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        base, noise = np.random.default_rng(0), np.random.default_rng(1)
        with p.open("wb") as f:
            f.write(struct.pack("<Q", len(header)) + header)
            for start in range(0, numel, 1 << 24):
                x = base.standard_normal(min(1 << 24, numel - start), dtype=np.float32)
                if side == "candidate":  # about one bf16 ulp of noise
                    x += np.float32(4e-3) * np.abs(x) * noise.standard_normal(x.size, dtype=np.float32)
                f.write(_bf16_bits(x).tobytes())
    return paths[0], paths[1]


def _mapped(p: Path) -> np.ndarray:
    with p.open("rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
    return np.memmap(p, dtype=np.uint16, mode="r", offset=8 + n)


def floor(a_path: Path, b_path: Path) -> float:
    """max |a - b| in one single-threaded numpy pass over both memory-mapped files."""
    a, b = _mapped(a_path), _mapped(b_path)
    ua, ub = np.empty(CHUNK, np.uint32), np.empty(CHUNK, np.uint32)
    d = np.empty(CHUNK, np.float32)
    m = 0.0
    for s in range(0, a.size, CHUNK):
        x, y = a[s : s + CHUNK], b[s : s + CHUNK]
        n = x.size
        np.copyto(ua[:n], x)
        ua[:n] <<= 16
        np.copyto(ub[:n], y)
        ub[:n] <<= 16
        dn = np.subtract(ua[:n].view(np.float32), ub[:n].view(np.float32), out=d[:n])
        m = max(m, float(np.abs(dn, out=dn).max()))
    return m


def exact_cosine(a_path: Path, b_path: Path) -> tuple[float, float]:
    """(cosine, 1 - cosine) from float64 sums of exact products."""
    a, b = _mapped(a_path), _mapped(b_path)
    parts: dict[str, list[float]] = {"ab": [], "aa": [], "bb": [], "dd": []}
    for s in range(0, a.size, 1 << 22):
        x = (a[s : s + (1 << 22)].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        y = (b[s : s + (1 << 22)].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        parts["ab"].append(float(np.dot(x, y)))
        parts["aa"].append(float(np.dot(x, x)))
        parts["bb"].append(float(np.dot(y, y)))
        parts["dd"].append(float(np.dot(x - y, x - y)))
    ab, aa, bb, dd = (math.fsum(v) for v in parts.values())
    na, nb = math.sqrt(aa), math.sqrt(bb)
    gap = (dd - (aa - bb) ** 2 / (na + nb) ** 2) / (2 * na * nb)
    return ab / (na * nb), gap


def differences(a: Any, b: Any) -> tuple[float, list[str]]:
    """Largest relative difference of the float figures of two results, and the other figures that differ."""
    worst, other = 0.0, []

    def walk(x: Any, y: Any, where: str) -> None:
        nonlocal worst
        if dataclasses.is_dataclass(x) and dataclasses.is_dataclass(y):
            for f in dataclasses.fields(x):
                if f.name != "samples":
                    walk(getattr(x, f.name), getattr(y, f.name), f.name)
        elif isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
            for u, v in zip(x, y, strict=True):
                walk(u, v, where)
        elif isinstance(x, float) and isinstance(y, float):
            if x != y:
                worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
        elif x != y:
            other.append(f"{where}: {x!r} vs {y!r}")

    walk(a, b, "")
    return worst, other


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/adbench-tensors"))
    ap.add_argument("--mib", type=int, default=256, help="size of EACH tensor in MiB")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--logits", action="store_true", help="name the tensor 'logits' (adds top-1/top-5 per row)"
    )
    ap.add_argument("--device", action="append", choices=("cpu", "cuda"),
                    help="--tensor-device to time (repeat for several, side by side; default: cpu)")
    a = ap.parse_args()
    devices = a.device or ["cpu"]
    name = "logits" if a.logits else "hidden"
    root = a.dir / name
    pb, pc = generate(root, a.mib, name)
    from ad_diff.kinds.tensors.analysis import analyze_tensors
    from ad_diff.settings import Settings

    floor(pb, pc)  # warm the page cache for both
    keys = ["floor", *(f"ad-diff {d}" for d in devices)]
    times: dict[str, list[float]] = {k: [] for k in keys}
    cpu: dict[str, list[float]] = {k: [] for k in keys}
    results: dict[str, Any] = {}

    def timed(key: str, fn: Any) -> Any:
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times[key].append(time.perf_counter() - w0)
        cpu[key].append(time.process_time() - c0)
        return out

    def compare(device: str) -> Any:
        settings = Settings(baseline=root / "baseline", candidate=root / "candidate", tensor_device=device)
        return analyze_tensors(root / "baseline" / "tensors", root / "candidate" / "tensors", settings)

    for d in devices:
        if d != "cpu":
            compare(d)  # once before timing: torch's import and CUDA's start-up are not the comparison
    for _ in range(a.runs):
        timed("floor", lambda: floor(pb, pc))
        for d in devices:
            results[d] = timed(f"ad-diff {d}", lambda d=d: compare(d)).comparisons[0]
    c = results[devices[0]]
    assert c.stats is not None
    cos, gap = exact_cosine(pb, pc)
    med = {k: statistics.median(v) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"tensor pair: 2 x {a.mib} MiB bf16 {name}{list(c.baseline.shape)}, {a.runs} interleaved runs")
    for k, v in times.items():
        print(f"  {k:13s} wall median {med[k]:.3f} s (runs {' '.join(f'{x:.3f}' for x in v)}); "
              f"CPU median {cmed[k]:.3f} s")
    for d in devices:
        k = f"ad-diff {d}"
        print(f"  ratio {k} / numpy single pass: wall {med[k] / med['floor']:.2f}, "
              f"CPU {cmed[k] / cmed['floor']:.2f} (target <= 2.0)")
    for d in devices:
        st = results[d].stats
        print(
            f"  [{d}] cosine {st.cosine!r} vs exact {cos!r}: |diff| {abs(st.cosine - cos):.2e} "
            f"(target <= 1e-9); 1-cos {st.one_minus_cosine:.6e} vs exact {gap:.6e} "
            f"(rel. {abs(st.one_minus_cosine - gap) / gap:.1e})"
        )
        rows = st.rows
        if rows is not None:
            print(f"  [{d}] rows judged {rows.rows} x {rows.width}, outliers {rows.outliers}, "
                  f"verdict {results[d].verdict.value}")
    for d in devices[1:]:
        worst, other = differences(c.stats, results[d].stats)
        print(f"  {d} vs {devices[0]}: float figures within {worst:.1e} relative; "
              f"other figures {'identical' if not other else 'differ: ' + '; '.join(other[:5])}")
    print(f"  peak RSS of this process {rss:.0f} MiB")


if __name__ == "__main__":
    main()
