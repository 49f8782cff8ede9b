"""Benchmark-size Llama run pair built as text (no torch): the dumps AD writes for a Llama-3-70B-shaped
bf16 decoder of ``--layers`` layers through its default pipeline (92 dumps per run, D3), a V3/L1 log,
and recorded bf16 logits (``tensors/outputs.safetensors``, 2 KiB, plus the input ids), with one injected
match loss in the candidate.

    python scripts/benchgen/llama.py OUT/ [--layers 80] [--seed 0] [--loss rmsnorm|repeat_kv|rope|swiglu|none]

80 layers give about 38 MB of dumps per run, 160 layers about 77 MB. Deterministic given the seed (log
timings, logits); the lost pattern sits in layer ``layers // 2``. The graph changes at the transforms a
real pipeline changes it (see :mod:`benchgen.llama_graph`); every distinct state is rendered once.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``benchgen`` and ``fixturegen`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fixturegen.events import Event  # noqa: E402
from fixturegen.log_writer import LogStyle, render_log  # noqa: E402

from benchgen import safetensors_np  # noqa: E402
from benchgen.keys import AD_KEYS  # noqa: E402
from benchgen.llama_graph import LlamaShape, Loss, export  # noqa: E402
from benchgen.llama_rewrites import REWRITES  # noqa: E402
from benchgen.textfx import d3_file  # noqa: E402

#: The transform whose matches the injected loss lowers, by loss kind.
LOSS_TRANSFORM = {
    "repeat_kv": "match_repeat_kv",
    "rmsnorm": "match_rmsnorm_pattern",
    "rope": "match_rope_pattern",
    "swiglu": "match_swiglu_pattern",
}
LOGITS_SHAPE = (1, 4, 256)
"""1,024 bf16 values: a 2 KiB tensor."""


def _mem_gb(key: str, layers: int) -> float:
    # what the V3 log's [CUDA MEM DIFF (EXPECTED)] shows: weights ~1.7 GB a layer, then the caches
    return {
        "load_weights": round(1.72 * layers + 2.1, 2),
        "initialize_cache": 0.25,
        "resize_kv_cache": 11.5,
    }.get(key, 0.0)


def write_run(
    folder: Path,
    layers: int,
    *,
    loss: Loss | None,
    seed: int,
    log_seed: int,
    tensors: bool = True,
    shape: LlamaShape | None = None,
) -> dict[str, int]:
    """Write one run folder (``ad.log``, ``graphs/``, ``tensors/``); returns sizes."""
    graphs = folder / "graphs"
    graphs.mkdir(parents=True)
    model = export(layers, shape or LlamaShape(), loss)
    body = model.g.body()
    events: list[Event] = []
    counter = distinct = size = 0
    nodes: list[int] = []
    for stage, key, enabled in AD_KEYS:
        if not enabled:
            events.append(Event(stage, key, "disabled"))
        elif key.startswith("quantize_"):  # no quantization config, no quantized graph
            events.append(Event(stage, key, "skipped"))
        else:
            n = 1 if key == "export_to_gm" else 2 * layers if key == "initialize_cache" else 0
            if key in REWRITES:
                n = REWRITES[key](model)
                model.g.commit()
                if n:
                    body = model.g.body()
            events.append(Event(stage, key, "applied", n, shape_prop=n > 0, mem_gb=_mem_gb(key, layers)))
            if n and key != "initialize_cache" or key == "export_to_gm":
                distinct += 1
                nodes.append(sum(n.op != "get_attr" for n in model.g.nodes))
        if key == "build_model":  # a plain nn.Module: no dump
            continue
        counter += 1
        text = d3_file(stage, key, body).encode()
        (graphs / f"{counter:03d}_{stage}_{key}.txt").write_bytes(text)
        size += len(text)
    log = render_log(events, LogStyle(seed=log_seed)).encode()
    (folder / "ad.log").write_bytes(log)
    if tensors:
        write_tensors(folder / "tensors", seed, candidate=loss is not None)
    return {
        "files": counter,
        "dump_bytes": size,
        "log_bytes": len(log),
        "distinct_bodies": distinct,
        "min_nodes": min(nodes),
        "max_nodes": max(nodes),
    }


def write_tensors(folder: Path, seed: int, *, candidate: bool) -> None:
    """``outputs.safetensors`` (bf16 logits) and ``inputs.safetensors`` (prompt ids). The candidate's logits
    are the baseline's with rounding-level noise (a few bf16 ulps), well within tolerance."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, LlamaShape().vocab, size=LOGITS_SHAPE[:2], dtype=np.int64)
    logits = (3.0 * rng.standard_normal(LOGITS_SHAPE)).astype(np.float32)
    if candidate:
        noise = np.random.default_rng(seed + 1).standard_normal(LOGITS_SHAPE).astype(np.float32)
        logits = logits * (1.0 + np.float32(2e-3) * noise)
    safetensors_np.write(folder / "outputs.safetensors", {"logits": logits}, bf16=frozenset({"logits"}))
    safetensors_np.write(folder / "inputs.safetensors", {"input_ids": ids})


def make_llama_pair(
    out: Path | str, layers: int = 80, *, seed: int = 0, loss: str | None = "rmsnorm", tensors: bool = True
) -> dict[str, object]:
    """Write ``out/{baseline,candidate}``; the candidate misses one ``loss`` pattern (``None``: identical
    graphs). Returns the sizes and the transform the loss shows at (``lost_at``)."""
    root = Path(out)
    if loss is not None and loss not in LOSS_TRANSFORM:
        raise ValueError(f"unknown loss {loss!r}; expected one of {sorted(LOSS_TRANSFORM)}")
    for side in ("baseline", "candidate"):
        if (root / side).exists():
            shutil.rmtree(root / side)
    base = write_run(root / "baseline", layers, loss=None, seed=seed, log_seed=2 * seed + 1, tensors=tensors)
    cand = write_run(
        root / "candidate",
        layers,
        loss=None if loss is None else Loss(loss, layers // 2),
        seed=seed,
        log_seed=2 * seed + 2,
        tensors=tensors,
    )
    return {
        "layers": layers,
        "baseline": base,
        "candidate": cand,
        "lost_at": None if loss is None else LOSS_TRANSFORM[loss],
    }


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--loss", choices=[*LOSS_TRANSFORM, "none"], default="rmsnorm")
    ap.add_argument("--no-tensors", action="store_true", help="write no tensors/ folder")
    a = ap.parse_args(argv)
    info = make_llama_pair(
        a.out, a.layers, seed=a.seed, loss=None if a.loss == "none" else a.loss, tensors=not a.no_tensors
    )
    sys.stdout.write(f"{info}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
