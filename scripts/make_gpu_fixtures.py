"""Record the tiny Llama's tensors for fixtures/tensors/gpu/ (run on a GPU; falls back to CPU).

    python scripts/make_gpu_fixtures.py --out fixtures/tensors/gpu [--device cuda]

Writes one run folder per variant (``baseline``, ``within``, ``beyond``, ``no_rope_k``), each with
``tensors/outputs.safetensors`` (bf16 logits), ``tensors/inputs.safetensors`` (prompt ids),
``tensors/reference/outputs.safetensors`` (fp32 logits of the baseline model, TF32 off) and, for
``baseline`` and ``beyond``, ``tensors/nodes.safetensors`` (per-node captures through
``ad_diff.record.capture_nodes``: the ``torch.fx.symbolic_trace`` of the baseline model, and the same
graph after the in-place ``fuse_swiglu_fp8`` transform) plus ``graph_order.json``. Prints the figures that
calibrate the default judgement (see docs/recording-tensors.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.fx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tiny_llama import build, fuse_swiglu_fp8, prompt_ids  # noqa: E402

from ad_diff.kinds.tensors.find import discover  # noqa: E402
from ad_diff.kinds.tensors.measure import MeasureOptions, measure  # noqa: E402
from ad_diff.recording import capture_nodes, save_tensors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = a.device
    ids = prompt_ids().to(dev)
    with torch.no_grad():
        ref = build("baseline", torch.float32, dev)(ids)
    meta = {"device": torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu", "seed": "0"}
    for variant in ("baseline", "within", "beyond", "no_rope_k"):
        run = a.out / variant
        model = build(variant, torch.bfloat16, dev)
        with torch.no_grad():
            logits = model(ids)
        save_tensors(
            run, {"logits": logits}, inputs={"input_ids": ids}, metadata={**meta, "variant": variant}
        )
        save_tensors(run, {"logits": ref}, reference=True, metadata={**meta, "variant": "fp32-reference"})
    # Per-node captures: the baseline graph, and the same graph after an AD-style in-place transform
    # (fuse_swiglu_fp8), so untouched nodes keep their names and captures line up by name.
    gm = torch.fx.symbolic_trace(build("baseline", torch.bfloat16, dev))
    order = [n.name for n in gm.graph.nodes]
    save_tensors(
        a.out / "baseline", capture_nodes(gm, ids), file="nodes", metadata={**meta, "variant": "baseline"}
    )
    matches = fuse_swiglu_fp8(gm)
    with torch.no_grad():
        fused_logits = gm(ids)
    same = torch.equal(fused_logits, build("beyond", torch.bfloat16, dev)(ids))
    print(f"fuse_swiglu_fp8: {matches} matches; transformed graph logits == beyond model logits: {same}")
    save_tensors(
        a.out / "beyond", capture_nodes(gm, ids), file="nodes", metadata={**meta, "variant": "beyond"}
    )
    (a.out / "baseline" / "graph_order.json").write_text(json.dumps(order) + "\n")
    (a.out / "beyond" / "graph_order.json").write_text(json.dumps([n.name for n in gm.graph.nodes]) + "\n")
    report(a.out, dev)


def report(out: Path, dev: str) -> None:
    """Print the calibration figures, measured with ad_diff itself."""
    runs = {v: discover(out / v / "tensors", v) for v in ("baseline", "within", "beyond", "no_rope_k")}
    base = runs["baseline"].outputs["logits"]
    ref = runs["baseline"].references["logits"]
    opts = MeasureOptions(atol=1e-5, rtol=1.6e-2, device=dev, topk=5)
    s = measure(ref, base, opts)
    print(f"baseline(bf16) vs fp32 ref: outside={s.outside_share:.1%} nrmse={s.nrmse:.4g} top1={s.top1:.3f}")
    for v in ("within", "beyond", "no_rope_k"):
        s = measure(base, runs[v].outputs["logits"], opts, reference=ref)
        r = s.reference
        assert r is not None
        print(
            f"{v} vs baseline: outside={s.outside_share:.1%} nrmse={s.nrmse:.4g} cos={s.cosine:.6f} "
            f"top1={s.top1:.3f} top5={s.topk:.3f} max_abs={s.max_abs:.4g} | "
            f"vs ref: rmse base={r.baseline_rmse:.4g} cand={r.candidate_rmse:.4g} ratio={r.ratio:.3f} "
            f"top1 base={r.baseline_top1:.3f} cand={r.candidate_top1:.3f}"
        )


if __name__ == "__main__":
    main()
