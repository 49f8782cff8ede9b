"""Benchmark: compare two large tensors with ad_diff's chunked statistics.

    python scripts/bench_tensors.py --dir /tmp/adbench --size-gb 2.5 --device cpu [--device cuda]

Creates (once) two safetensors files of ``--size-gb`` each in ``--dir`` (bf16; the candidate is the
baseline plus bf16-level noise), streamed in pieces so the generator never holds a whole tensor. Then, per
device: reads both files sequentially (plain ``readinto``, 64 MiB blocks, after one warm-up read so both
sides see the same page cache), times ``ad_diff.measure.measure`` on the same files, and prints

* throughput (bytes of both files / seconds) as a ratio of the plain sequential read throughput;
* peak resident memory added during the comparison (``ru_maxrss``) as a ratio of one tensor's size;
* on CUDA, peak device memory allocated as a ratio of one tensor's size.

Each device is measured in a fresh subprocess so ``ru_maxrss`` is not inflated by earlier work.
"""

from __future__ import annotations

import argparse
import json
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BLOCK = 64 << 20


def generate(path: Path, numel: int, seed: int, noise_of: Path | None) -> None:
    """Write a 1-D BF16 safetensors file of ``numel`` elements in 64 Mi-element pieces."""
    import torch

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    header = json.dumps({"t": {"dtype": "BF16", "shape": [numel], "data_offsets": [0, 2 * numel]}}).encode()
    header += b" " * (-len(header) % 8)
    piece = 1 << 26
    g = torch.Generator(device=dev).manual_seed(seed)
    with path.open("wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        for start in range(0, numel, piece):
            n = min(piece, numel - start)
            # Same base stream for both files; the candidate adds ~bf16-ulp noise on top.
            gb = torch.Generator(device=dev).manual_seed(1000 + start // piece)
            x = torch.randn(n, generator=gb, device=dev)
            if noise_of is not None:
                x = x + 4e-3 * x.abs() * torch.randn(n, generator=g, device=dev)
            f.write(x.bfloat16().view(torch.uint8).cpu().numpy().tobytes())


def read_throughput(paths: list[Path]) -> float:
    """Bytes per second of a plain sequential read of ``paths`` into a reused 64 MiB buffer."""
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    total = 0
    t0 = time.perf_counter()
    for p in paths:
        with p.open("rb", buffering=0) as f:
            while n := f.readinto(view):
                total += n
    return total / (time.perf_counter() - t0)


def measure_once(dirpath: Path, device: str, chunk: int) -> dict[str, float]:
    """One comparison in this process; returns the figures."""
    import torch
    from ad_diff.kinds.tensors.measure import MeasureOptions, measure

    from ad_diff.kinds.tensors.parse import discover

    b = discover(dirpath / "baseline", "baseline").outputs["t"]
    c = discover(dirpath / "candidate", "candidate").outputs["t"]
    paths = [b.path, c.path]
    read_throughput(paths)  # warm-up: page cache in the same state for both timings
    read_bps = read_throughput(paths)
    if device.startswith("cuda"):
        torch.zeros(1, device=device)
        torch.cuda.reset_peak_memory_stats()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    stats = measure(b, c, MeasureOptions(atol=1e-5, rtol=1.6e-2, device=device, chunk=chunk))
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    size = b.numel * 2
    out = {
        "device": device,
        "tensor_bytes": size,
        "seconds": secs,
        "read_GBps": read_bps / 1e9,
        "compare_GBps": 2 * size / secs / 1e9,
        "throughput_ratio": (2 * size / secs) / read_bps,
        "peak_rss_added_ratio": max(rss1 - rss0, 0) / size,
        "peak_rss_total_ratio": rss1 / size,
        "nrmse": stats.nrmse,
        "outside_share": stats.outside_share,
    }
    if device.startswith("cuda"):
        out["peak_gpu_alloc_ratio"] = torch.cuda.max_memory_allocated() / size
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/adbench"))
    ap.add_argument("--size-gb", type=float, default=2.0, help="size of EACH tensor in GB (1e9 bytes)")
    ap.add_argument("--device", action="append", help="cpu, cuda (repeatable; default cpu)")
    ap.add_argument("--chunk", type=int, default=0, help="elements per chunk (0: by device)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    devices = a.device or ["cpu"]
    if a.child:
        print(json.dumps(measure_once(a.dir, devices[0], a.chunk)))
        return
    numel = int(a.size_gb * 1e9) // 2
    for side, seed in (("baseline", 0), ("candidate", 1)):
        p = a.dir / side / "t.safetensors"
        if not p.is_file() or p.stat().st_size < 2 * numel:
            p.parent.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            generate(p, numel, seed, None if side == "baseline" else p)
            print(f"generated {p} ({2 * numel / 1e9:.2f} GB) in {time.perf_counter() - t0:.1f}s", flush=True)
    for dev in devices:
        cmd = [sys.executable, __file__, "--child", "--dir", str(a.dir), "--device", dev, "--chunk", str(a.chunk)]
        res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        print(
            f"[{dev}] 2 x {res['tensor_bytes'] / 1e9:.2f} GB in {res['seconds']:.2f}s: compare "
            f"{res['compare_GBps']:.2f} GB/s vs plain read {res['read_GBps']:.2f} GB/s -> throughput ratio "
            f"{res['throughput_ratio']:.2f}; peak RSS added {res['peak_rss_added_ratio']:.3f} x tensor size "
            f"(process total {res['peak_rss_total_ratio']:.3f})"
            + (f"; peak GPU alloc {res['peak_gpu_alloc_ratio']:.3f} x tensor size" if "peak_gpu_alloc_ratio" in res else ""),
            flush=True,
        )
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
