"""Synthetic decoder-layer graph dumps (D3 text) for the alignment benchmark and unit tests.

Not a substitute for the scenario fixtures generated from real torch.export graphs: this writes the dump text
directly, so it can build 50k-node graphs in a fraction of a second and vary one thing at a time (counter
shift, one unfused layer, dropped metadata, op form of the rope split).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

BF16 = "torch.bfloat16"


@dataclass(frozen=True)
class Spec:
    """What to build."""

    layers: int = 2
    experts: int = 0
    """Unfused MoE experts per layer (about 8 nodes each); 0 for a dense MLP."""
    counter_offset: int = 0
    """Added to every repeated name's counter, as if an earlier pass had created and removed nodes."""
    fused_norm: bool = True
    """``auto_deploy.torch_rmsnorm`` instead of the pow/mean/rsqrt chain."""
    unfused_layers: tuple[int, ...] = ()
    """Layers whose norm stays unfused even when ``fused_norm``."""
    norm_meta: bool = True
    """Whether fused norm nodes carry metadata (False mimics a transform dropping ``meta['val']``)."""
    rope_narrow: bool = False
    """Split q with ``narrow -> contiguous -> view`` instead of ``split_with_sizes -> getitem``."""
    rope_fused: bool = False
    """Replace the q split pair with one ``auto_deploy.torch_rope`` op per layer."""
    rope_fused_layers: tuple[int, ...] | None = None
    """Layers where ``rope_fused`` applies (default: all)."""
    norm_quant: bool = False
    """Fused norms become ``auto_deploy.torch_rmsnorm_fp8`` (a later, shape-dependent fusion)."""


class _Builder:
    def __init__(self, offset: int) -> None:
        self.lines: list[str] = []
        self.counts: Counter[str] = Counter()
        self.offset = offset
        self.meta: dict[str, str] = {}

    def _name(self, base: str) -> str:
        k = self.counts[base]
        self.counts[base] += 1
        k = k + self.offset if k or self.offset else 0
        return base if k == 0 else f"{base}_{k}"

    def ph(self, name: str, shape: str, dtype: str) -> str:
        self.meta[name] = f"{shape} : {dtype}"
        self.lines.append(f"%{name} : {shape} : {dtype}")
        return name

    def call(
        self, base: str, target: str, args: list[str], shape: str, dtype: str = BF16, meta: bool = True
    ) -> str:
        name = self._name(base)
        rendered = []
        for a in args:
            if a.startswith("%"):
                rendered.append(f"{a} : {self.meta.get(a[1:], '? : unknown')}")
            else:
                rendered.append(a)
        out = f"{shape} : {dtype}" if meta else "? : N/A"
        if meta:
            self.meta[name] = out
        self.lines.append(f"%{name} = {target}({', '.join(rendered)}) : {out}")
        return name

    def w(self, name: str, shape: str) -> str:
        self.meta[name] = f"{shape} : {BF16}"
        return "%" + name


def _norm(g: _Builder, x: str, weight: str, fused: bool, meta: bool, quant: bool = False) -> str:
    h = "1xs0x4096"
    if fused and quant:
        return g.call(
            "torch_rmsnorm_fp8",
            "auto_deploy.torch_rmsnorm_fp8.default",
            [f"%{x}", g.w(weight, "4096"), "1e-05"],
            h,
        )
    if fused:
        return g.call(
            "torch_rmsnorm",
            "auto_deploy.torch_rmsnorm.default",
            [f"%{x}", g.w(weight, "4096"), "1e-05"],
            h,
            meta=meta,
        )
    t = g.call("to", "aten.to.dtype", [f"%{x}", "torch.float32"], h, "torch.float32")
    p = g.call("pow_1", "aten.pow.Tensor_Scalar", [f"%{t}", "2"], h, "torch.float32")
    m = g.call("mean", "aten.mean.dim", [f"%{p}", "[-1]", "True"], "1xs0x1", "torch.float32")
    a = g.call("add", "aten.add.Tensor", [f"%{m}", "1e-05"], "1xs0x1", "torch.float32")
    r = g.call("rsqrt", "aten.rsqrt.default", [f"%{a}"], "1xs0x1", "torch.float32")
    mm = g.call("mul", "aten.mul.Tensor", [f"%{t}", f"%{r}"], h, "torch.float32")
    c = g.call("to", "aten.to.dtype", [f"%{mm}", BF16], h)
    return g.call("mul", "aten.mul.Tensor", [g.w(weight, "4096"), f"%{c}"], h)


def build(spec: Spec, transform: str = "fuse_rmsnorm", stage: str = "post_load_fusion") -> str:
    """Return the D3 dump text of the graph described by ``spec``."""
    g = _Builder(spec.counter_offset)
    ids = g.ph("input_ids", "1xs0", "torch.int64")
    g.ph("position_ids", "1xs0", "torch.int64")
    x = g.call(
        "embedding",
        "aten.embedding.default",
        [g.w("model_embed_tokens_weight", "32000x4096"), f"%{ids}"],
        "1xs0x4096",
    )
    for L in range(spec.layers):
        p = f"model_layers_{L}_"
        fused = spec.fused_norm and L not in spec.unfused_layers
        h = _norm(g, x, p + "input_layernorm_weight", fused, spec.norm_meta, spec.norm_quant)
        q = g.call(
            "linear",
            "aten.linear.default",
            [f"%{h}", g.w(p + "self_attn_q_proj_weight", "4096x4096")],
            "1xs0x4096",
        )
        k = g.call(
            "linear",
            "aten.linear.default",
            [f"%{h}", g.w(p + "self_attn_k_proj_weight", "1024x4096")],
            "1xs0x1024",
        )
        v = g.call(
            "linear",
            "aten.linear.default",
            [f"%{h}", g.w(p + "self_attn_v_proj_weight", "1024x4096")],
            "1xs0x1024",
        )
        qv = g.call("view", "aten.view.default", [f"%{q}", "[1, -1, 32, 128]"], "1xs0x32x128")
        rope_fused = spec.rope_fused and (spec.rope_fused_layers is None or L in spec.rope_fused_layers)
        if rope_fused:
            q2 = g.call(
                "torch_rope", "auto_deploy.torch_rope.default", [f"%{qv}", "%position_ids"], "1xs0x32x128"
            )
        else:
            if spec.rope_narrow:
                n1 = g.call("narrow", "aten.narrow.default", [f"%{qv}", "-1", "0", "64"], "1xs0x32x64")
                c1 = g.call("contiguous", "aten.contiguous.default", [f"%{n1}"], "1xs0x32x64")
                q1 = g.call("view", "aten.view.default", [f"%{c1}", "[1, -1, 32, 64]"], "1xs0x32x64")
                n2 = g.call("narrow", "aten.narrow.default", [f"%{qv}", "-1", "64", "64"], "1xs0x32x64")
                c2 = g.call("contiguous", "aten.contiguous.default", [f"%{n2}"], "1xs0x32x64")
                q3 = g.call("view", "aten.view.default", [f"%{c2}", "[1, -1, 32, 64]"], "1xs0x32x64")
            else:
                sp = g.call("split_with_sizes", "aten.split_with_sizes.default", [f"%{qv}", "[64, 64]", "-1"],
                            "(1xs0x32x64, 1xs0x32x64)", f"({BF16}, {BF16})")
                g.meta[sp] = "? : list"
                q1 = g.call("getitem", "<built-in function getitem>", [f"%{sp}", "0"], "1xs0x32x64")
                q3 = g.call("getitem", "<built-in function getitem>", [f"%{sp}", "1"], "1xs0x32x64")
            ng = g.call("neg", "aten.neg.default", [f"%{q3}"], "1xs0x32x64")
            q2 = g.call("cat", "aten.cat.default", [f"[{ng}, {q1}]", "-1"], "1xs0x32x128")
        kv = g.call("view", "aten.view.default", [f"%{k}", "[1, -1, 8, 128]"], "1xs0x8x128")
        vv = g.call("view", "aten.view.default", [f"%{v}", "[1, -1, 8, 128]"], "1xs0x8x128")
        at = g.call(
            "torch_attention",
            "auto_deploy.torch_attention.default",
            [f"%{q2}", f"%{kv}", f"%{vv}", "None", "0.0", "True"],
            "1xs0x32x128",
        )
        av = g.call("view", "aten.view.default", [f"%{at}", "[1, -1, 4096]"], "1xs0x4096")
        o = g.call(
            "linear",
            "aten.linear.default",
            [f"%{av}", g.w(p + "self_attn_o_proj_weight", "4096x4096")],
            "1xs0x4096",
        )
        x = g.call("add", "aten.add.Tensor", [f"%{x}", f"%{o}"], "1xs0x4096")
        h2 = _norm(g, x, p + "post_attention_layernorm_weight", fused, spec.norm_meta, spec.norm_quant)
        if spec.experts:
            logits = g.call(
                "linear",
                "aten.linear.default",
                [f"%{h2}", g.w(p + "mlp_gate_weight", f"{spec.experts}x4096")],
                f"1xs0x{spec.experts}",
            )
            acc = None
            for e in range(spec.experts):
                ep = f"{p}mlp_experts_{e}_"
                sel = g.call("select", "aten.select.int", [f"%{logits}", "-1", str(e)], "1xs0")
                gt = g.call(
                    "linear",
                    "aten.linear.default",
                    [f"%{h2}", g.w(ep + "w1_weight", "1024x4096")],
                    "1xs0x1024",
                )
                up = g.call(
                    "linear",
                    "aten.linear.default",
                    [f"%{h2}", g.w(ep + "w3_weight", "1024x4096")],
                    "1xs0x1024",
                )
                si = g.call("silu", "aten.silu.default", [f"%{gt}"], "1xs0x1024")
                mu = g.call("mul", "aten.mul.Tensor", [f"%{si}", f"%{up}"], "1xs0x1024")
                dn = g.call(
                    "linear",
                    "aten.linear.default",
                    [f"%{mu}", g.w(ep + "w2_weight", "4096x1024")],
                    "1xs0x4096",
                )
                us = g.call("unsqueeze", "aten.unsqueeze.default", [f"%{sel}", "-1"], "1xs0x1")
                sc = g.call("mul", "aten.mul.Tensor", [f"%{dn}", f"%{us}"], "1xs0x4096")
                acc = (
                    sc
                    if acc is None
                    else g.call("add", "aten.add.Tensor", [f"%{acc}", f"%{sc}"], "1xs0x4096")
                )
            mlp = acc
        else:
            gt = g.call(
                "linear",
                "aten.linear.default",
                [f"%{h2}", g.w(p + "mlp_gate_proj_weight", "11008x4096")],
                "1xs0x11008",
            )
            up = g.call(
                "linear",
                "aten.linear.default",
                [f"%{h2}", g.w(p + "mlp_up_proj_weight", "11008x4096")],
                "1xs0x11008",
            )
            si = g.call("silu", "aten.silu.default", [f"%{gt}"], "1xs0x11008")
            mu = g.call("mul", "aten.mul.Tensor", [f"%{si}", f"%{up}"], "1xs0x11008")
            mlp = g.call(
                "linear",
                "aten.linear.default",
                [f"%{mu}", g.w(p + "mlp_down_proj_weight", "4096x11008")],
                "1xs0x4096",
            )
        x = g.call("add", "aten.add.Tensor", [f"%{x}", f"%{mlp}"], "1xs0x4096")
    hf = _norm(g, x, "model_norm_weight", spec.fused_norm, spec.norm_meta, spec.norm_quant)
    out = g.call(
        "linear", "aten.linear.default", [f"%{hf}", g.w("lm_head_weight", "32000x4096")], "1xs0x32000"
    )
    g.lines.append(f"output %{out}")
    sep = "=" * 80
    head = [f"# Transform: {transform}", f"# Stage: {stage}", "# GraphModules found: 1", "", "", sep,
            "# GraphModule: (root)", sep, ""]
    return "\n".join(head + g.lines) + "\n"


def write_run(folder, steps: list[tuple[str, str, Spec]]) -> None:  # type: ignore[no-untyped-def]
    """Write ``graphs/NNN_<stage>_<transform>.txt`` for each ``(stage, transform, spec)`` step."""
    from pathlib import Path

    graphs = Path(folder) / "graphs"
    graphs.mkdir(parents=True, exist_ok=True)
    for k, (stage, transform, spec) in enumerate(steps, start=1):
        (graphs / f"{k:03d}_{stage}_{transform}.txt").write_text(
            build(spec, transform, stage), encoding="utf-8"
        )
