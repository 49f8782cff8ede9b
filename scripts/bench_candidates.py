"""Benchmark ``ad-diff candidates``: the scan is linear in the dump, the source read is bounded.

Usage: python scripts/bench_candidates.py [--layers 20] [--repeat 3]

Prints, for synthetic decoder dumps (scripts/synth_dumps.py: unfused norms and MoE experts) of ``--layers``,
2x, 4x and 8x the layers, the node count, the best-of-``--repeat`` time of ``scan_dump`` and the time ratio
per doubling (about 2 when linear); the same for a hostile dump whose only pattern sits behind a long chain
of layout ops (the peeling worklist); and the time to index a generated source tree of 2,000 transform
modules (the read is text only: ``ast.parse`` and regular expressions).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ad_diff.candidates.scan import scan_dump  # noqa: E402
from ad_diff.candidates.source import index_source  # noqa: E402
from ad_diff.kinds.graph.parse import parse_text  # noqa: E402


def _synth():
    spec = importlib.util.spec_from_file_location("synth_dumps", ROOT / "scripts" / "synth_dumps.py")
    assert spec
    assert spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["synth_dumps"] = mod
    spec.loader.exec_module(mod)
    return mod


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


T = "2x8 : torch.float32"


def _chain(n: int) -> str:
    sep = "=" * 80
    lines = ["%x : 2x8 : torch.float32", "%y : 2x8 : torch.float32"]
    prev = "x"
    for i in range(n):
        lines.append(f"%v{i} = aten.view.default(%{prev} : {T}, [2, 8]) : {T}")
        prev = f"v{i}"
    lines += [
        f"%s = aten.add.Tensor(%{prev} : {T}, %y : {T}) : {T}",
        f"%e = aten.exp.default(%s : {T}) : {T}",
        "output %e",
    ]
    head = ["# Transform: t", "# Stage: compile", "# GraphModules found: 1", "", ""]
    head += [sep, "# GraphModule: m", sep]
    return "\n".join([*head, "", *lines]) + "\n"


def _row(label: str, nodes: int, seconds: float, prev: float | None) -> str:
    ratio = f"{seconds / prev:5.2f}x" if prev else "     -"
    return f"  {label:<28} {nodes:>9,} nodes  {seconds * 1000:9.1f} ms  {ratio}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    synth = _synth()
    print("scan_dump on synthetic decoders (unfused norms, 8 unfused experts per layer):")  # noqa: T201
    prev = None
    for k in (1, 2, 4, 8):
        layers = args.layers * k
        d = parse_text(synth.build(synth.Spec(layers=layers, experts=8, fused_norm=False)), Path("s.txt"))
        sec = _best(lambda d=d: scan_dump(d), args.repeat)
        print(_row(f"{layers} layers", d.node_count, sec, prev))  # noqa: T201
        prev = sec
    print("scan_dump on a layout chain in front of the only pattern (hostile):")  # noqa: T201
    prev = None
    for n in (10_000, 20_000, 40_000, 80_000):
        d = parse_text(_chain(n), Path("c.txt"))
        sec = _best(lambda d=d: scan_dump(d, min_count=1), args.repeat)
        print(_row(f"chain of {n:,}", d.node_count, sec, prev))  # noqa: T201
        prev = sec
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "tensorrt_llm/_torch/auto_deploy/transform/library"
        lib.mkdir(parents=True)
        body = "".join(
            f"@TransformRegistry.register('t{i}')\nclass T{i}:\n    def _apply(self, gm):\n"
            f"        if is_op(n, torch.ops.auto_deploy.in_{i}):\n"
            f"            gm.graph.call_function(torch.ops.auto_deploy.out_{i}, ())\n"
            for i in range(20)
        )
        for f in range(2000):
            (lib / f"m{f}.py").write_text(body)
        sec = _best(lambda: index_source(Path(tmp)), 1)
        idx = index_source(Path(tmp))
        print(  # noqa: T201
            f"index_source on 2,000 modules x 20 transforms: {sec:.2f} s, {idx.files} files, "
            f"{sum(len(m.transforms) for m in idx.modules):,} transforms read, "
            f"notes: {list(idx.notes) or 'none'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
