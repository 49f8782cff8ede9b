"""Benchmark: parse and align two 80-layer dumps (50k+ nodes each) and twice the size; print time, memory.

Usage: python scripts/bench_align.py [--layers 80] [--experts 72]

The candidate differs from the baseline the way real regressions do: every node counter shifted by one (an
extra early pass) and one layer whose norms stayed unfused. Reported: time to read the files' lines (the floor
any parser pays), parse time, alignment time, peak traced memory of the alignment, and the alignment time
ratio when the graph doubles (near-linear means close to 2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ad_diff.kinds.graph.align import align_sections  # noqa: E402
from ad_diff.kinds.graph.parse import parse  # noqa: E402
from scripts.synth_dumps import Spec, build  # noqa: E402


def measure(layers: int, experts: int, tmp: Path) -> dict[str, float]:
    b, c = tmp / f"001_b_{layers}.txt", tmp / f"001_c_{layers}.txt"
    b.write_text(build(Spec(layers=layers, experts=experts)), encoding="utf-8")
    c.write_text(build(Spec(layers=layers, experts=experts, counter_offset=1, unfused_layers=(layers // 2,))),
                 encoding="utf-8")
    t = time.perf_counter()
    for p in (b, c):
        with p.open(encoding="utf-8") as f:
            for _ in f:
                pass
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    db, dc = parse(b), parse(c)
    parse_s = time.perf_counter() - t
    t = time.perf_counter()
    al = align_sections(db.sections[0], dc.sections[0])
    align_s = time.perf_counter() - t
    tracemalloc.start()
    align_sections(db.sections[0], dc.sections[0])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    counts = dict(al.counts())
    print(
        f"layers={layers} nodes={db.node_count}/{dc.node_count} read={read_s:.3f}s parse={parse_s:.3f}s "
        f"align={align_s:.3f}s align_peak={peak / 2**20:.1f}MiB pairs={counts} regions={len(al.regions)} "
        f"unmatched={len(al.unmatched)}"
    )
    return {"align": align_s, "parse": parse_s, "nodes": db.node_count}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--experts", type=int, default=72)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        one = measure(args.layers, args.experts, Path(d))
        two = measure(args.layers * 2, args.experts, Path(d))
    print(f"size ratio={two['nodes'] / one['nodes']:.2f} align time ratio={two['align'] / one['align']:.2f} "
          f"parse time ratio={two['parse'] / one['parse']:.2f}")


if __name__ == "__main__":
    main()
