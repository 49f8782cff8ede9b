"""End-to-end benchmark: ad-diff vs the Python read floor vs ``diff -ru`` on a large generated run pair.

Usage: python scripts/bench.py [--layers 80] [--transforms 90] [--nodes 50000] [--dir DIR] [--no-scaling]

Generates (scripts/fixturegen/large.py) a baseline/candidate pair: an MoE decoder of ``--layers`` layers,
``--transforms`` AD transforms, dumps of ``--nodes``+ nodes, most consecutive dumps the same graph, and one
injected regression (match_rmsnorm_pattern misses 4 layers in the candidate). Then measures, each in its own
process (wall time, peak RSS):

* ad-diff end to end (``python -m ad_diff BASE CAND -f json``: log + dumps, every analysis on);
* the Python read floor: open every dump of both runs and split it into lines, nothing more;
* ``diff -ru BASE/graphs CAND/graphs`` (what people do today: C, no semantics).

and prints the ratios ad-diff/read-floor and ad-diff/diff, peak RSS divided by the byte size of the largest
baseline+candidate dump pair, and (unless ``--no-scaling``) the time ratio when the layers double and the
peak-RSS ratio when the transforms halve (memory should be flat in the number of dumps).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from fixturegen.large import make_large_pair  # noqa: E402

READ_FLOOR = """
import sys
from pathlib import Path
n = 0
for d in sys.argv[1:]:
    for p in sorted(Path(d).iterdir()):
        with open(p, encoding="utf-8") as f:
            n += len(f.read().split("\\n"))
print(n)
"""

# Runs one command and reports its wall time and peak RSS: a fresh wrapper per command, because
# RUSAGE_CHILDREN's ru_maxrss is the largest of all children a process ever waited for.
MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "rc": rc}))
"""


def measure(cmd: list[str], repeat: int) -> dict[str, float]:
    """Best wall time and its peak RSS over ``repeat`` runs of ``cmd``."""
    best: dict[str, float] | None = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, check=True)
        got = json.loads(out.stdout)
        if best is None or got["wall"] < best["wall"]:
            best = got
    assert best is not None
    return best


def largest_pair_bytes(base: Path, cand: Path) -> int:
    """Byte size of the largest baseline+candidate dump pair (same file name in both runs)."""
    sizes = [(p.stat().st_size + (cand / p.name).stat().st_size) for p in base.iterdir() if (cand / p.name).exists()]
    return max(sizes)


def bench_pair(root: Path, layers: int, transforms: int, nodes: int, repeat: int) -> dict[str, float]:
    """Generate one pair under ``root`` and measure the three tools on it."""
    if root.exists():
        shutil.rmtree(root)
    t = time.perf_counter()
    info = make_large_pair(root, layers=layers, transforms=transforms, nodes_per_dump=nodes)
    gen = time.perf_counter() - t
    base, cand = root / "baseline", root / "candidate"
    gb, gc = base / "graphs", cand / "graphs"
    run_bytes = sum(p.stat().st_size for p in gb.iterdir())
    print(f"pair: layers={layers} transforms={transforms} files/run={info['files_per_run']} "
          f"nodes/dump={info['min_nodes_per_dump']}..{info['max_nodes_per_dump']} "
          f"experts/layer={info['experts_per_layer']} size/run={run_bytes / 2**20:.0f} MiB (generated in {gen:.1f}s)")
    subprocess.run(["cat", *map(str, sorted(gb.iterdir())), *map(str, sorted(gc.iterdir()))],
                   stdout=subprocess.DEVNULL, check=True)  # warm the page cache: every tool reads from memory
    ad = measure([sys.executable, "-m", "ad_diff", str(base), str(cand), "-f", "json"], repeat)
    floor = measure([sys.executable, "-c", READ_FLOOR, str(gb), str(gc)], repeat)
    diff = measure(["diff", "-ru", str(gb), str(gc)], repeat)
    if ad["rc"] != 1:  # the injected regression must gate
        print(f"  WARNING: ad-diff exited {ad['rc']}, expected 1 (gated regression)")
    pair = largest_pair_bytes(gb, gc)
    for name, m in (("ad-diff", ad), ("read floor", floor), ("diff -ru", diff)):
        print(f"  {name:<11} {m['wall']:7.2f} s   peak RSS {m['rss_kb'] / 1024:7.1f} MiB")
    print(f"  ad-diff / read floor = {ad['wall'] / floor['wall']:.2f}x   ad-diff / diff -ru = "
          f"{ad['wall'] / diff['wall']:.2f}x")
    print(f"  peak RSS / largest dump pair ({pair / 2**20:.1f} MiB) = {ad['rss_kb'] * 1024 / pair:.1f}x")
    return {"ad": ad["wall"], "rss": ad["rss_kb"], "floor": floor["wall"], "diff": diff["wall"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--transforms", type=int, default=90)
    ap.add_argument("--nodes", type=int, default=50_000, help="nodes per dump (the most fused graph)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool (best wall time kept)")
    ap.add_argument("--dir", type=Path, help="where to generate the pairs (default: a temporary folder)")
    ap.add_argument("--no-scaling", action="store_true", help="skip the doubled-layers and halved-transforms runs")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="ad-diff-bench-")) if args.dir is None else args.dir
    try:
        print(f"machine: {sys.platform}, python {sys.version.split()[0]}")
        one = bench_pair(tmp / "pair", args.layers, args.transforms, args.nodes, args.repeat)
        if not args.no_scaling:
            two = bench_pair(tmp / "pair", 2 * args.layers, args.transforms, 2 * args.nodes, args.repeat)
            print(f"scaling, layers x2: ad-diff time x{two['ad'] / one['ad']:.2f} (target <= 2.2), "
                  f"read floor x{two['floor'] / one['floor']:.2f}")
            half = bench_pair(tmp / "pair", args.layers, max(2, args.transforms // 2), args.nodes, args.repeat)
            print(f"memory, transforms x2 ({max(2, args.transforms // 2)} -> {args.transforms}): peak RSS "
                  f"x{one['rss'] / half['rss']:.2f} (flat = 1.0)")
    finally:
        if args.dir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
