"""Benchmark-size run pair built as text (no torch.export): an MoE-style decoder whose dumps reach
50k+ nodes, written in D3 with a V3/L1 log. Same naming and line grammar as the small fixtures.

Only a few transforms change the graph (export, match_rmsnorm_pattern, match_swiglu_pattern,
fuse_rmsnorm); each distinct graph state is rendered once and its text reused for every later dump.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchgen.keys import AD_KEYS

from .events import Event
from .log_writer import LogStyle, render_log

_BF = "torch.bfloat16"
_H, _E_DIM = 2048, 768


class _Namer:
    def __init__(self) -> None:
        self.count: dict[str, int] = defaultdict(int)

    def __call__(self, base: str) -> str:
        n = self.count[base]
        self.count[base] += 1
        # FX never names a node after a Python builtin (``pow``): it starts at ``pow_1``
        return base if n == 0 and base != "pow" else f"{base}_{n + (base == 'pow')}"


@dataclass(frozen=True)
class _State:
    norm_fused: frozenset[int]
    """Layers whose RMSNorms are matched (index ``layers`` = final norm)."""
    swiglu_fused: frozenset[int]
    flashinfer: bool


def _render(layers: int, experts: int, st: _State, key: str, stage: str) -> str:
    nm = _Namer()
    out: list[str] = []
    a = lambda name, shape: f"%{name} : {shape} : {_BF}"  # noqa: E731
    act = "1xs44x2048"

    def line(base: str, target: str, args: str, shape: str, dtype: str = _BF) -> str:
        name = nm(base)
        out.append(f"%{name} = {target}({args}) : {shape} : {dtype}")
        return name

    def norm(x: str, w: str, fused: bool) -> str:
        if fused:
            op = "flashinfer_rmsnorm" if st.flashinfer else "torch_rmsnorm"
            return line(op, f"auto_deploy.{op}.default", f"{a(x, act)}, %{w} : 2048 : {_BF}, 1e-05", act)
        p = line("pow", "aten.pow.Tensor_Scalar", f"{a(x, act)}, 2", act)
        m = line("mean", "aten.mean.dim", f"{a(p, act)}, [-1], True", "1xs44x1")
        ad = line("add", "aten.add.Tensor", f"{a(m, '1xs44x1')}, 1e-05", "1xs44x1")
        r = line("rsqrt", "aten.rsqrt.default", f"{a(ad, '1xs44x1')}", "1xs44x1")
        mu = line("mul", "aten.mul.Tensor", f"{a(x, act)}, {a(r, '1xs44x1')}", act)
        return line("mul", "aten.mul.Tensor", f"%{w} : 2048 : {_BF}, {a(mu, act)}", act)

    out += ["%input_ids : 1xs44 : torch.int64", "%position_ids : 1xs44 : torch.int64"]
    line("sym_size_int", "aten.sym_size.int", "%input_ids : 1xs44 : torch.int64, 1", "?", "SymInt")
    h = line(
        "embedding",
        "aten.embedding.default",
        f"%model_embed_tokens_weight : 151936x2048 : {_BF}, %input_ids : 1xs44 : torch.int64",
        act,
    )
    for li in range(layers):
        pre = f"model_layers_{li}"
        x = norm(h, f"{pre}_input_layernorm_weight", li in st.norm_fused)
        q = line(
            "linear",
            "aten.linear.default",
            f"{a(x, act)}, %{pre}_self_attn_q_proj_weight : 4096x2048 : {_BF}",
            "1xs44x4096",
        )
        k = line(
            "linear",
            "aten.linear.default",
            f"{a(x, act)}, %{pre}_self_attn_k_proj_weight : 512x2048 : {_BF}",
            "1xs44x512",
        )
        v = line(
            "linear",
            "aten.linear.default",
            f"{a(x, act)}, %{pre}_self_attn_v_proj_weight : 512x2048 : {_BF}",
            "1xs44x512",
        )
        qv = line(
            "view", "aten.view.default", f"{a(q, '1xs44x4096')}, [1, sym_size_int, 32, 128]", "1xs44x32x128"
        )
        kv = line(
            "view", "aten.view.default", f"{a(k, '1xs44x512')}, [1, sym_size_int, 4, 128]", "1xs44x4x128"
        )
        vv = line(
            "view", "aten.view.default", f"{a(v, '1xs44x512')}, [1, sym_size_int, 4, 128]", "1xs44x4x128"
        )
        qr = line("torch_rope", "auto_deploy.torch_rope.default", f"{a(qv, '1xs44x32x128')}", "1xs44x32x128")
        kr = line("torch_rope", "auto_deploy.torch_rope.default", f"{a(kv, '1xs44x4x128')}", "1xs44x4x128")
        at = line(
            "torch_attention",
            "auto_deploy.torch_attention.default",
            f"{a(qr, '1xs44x32x128')}, {a(kr, '1xs44x4x128')}, {a(vv, '1xs44x4x128')}, None, 0.0, True, "
            f"0.08838834764831845",
            "1xs44x32x128",
        )
        r = line(
            "reshape",
            "aten.reshape.default",
            f"{a(at, '1xs44x32x128')}, [1, sym_size_int, 4096]",
            "1xs44x4096",
        )
        o = line(
            "linear",
            "aten.linear.default",
            f"{a(r, '1xs44x4096')}, %{pre}_self_attn_o_proj_weight : 2048x4096 : {_BF}",
            act,
        )
        h = line("add", "aten.add.Tensor", f"{a(h, act)}, {a(o, act)}", act)
        x = norm(h, f"{pre}_post_attention_layernorm_weight", li in st.norm_fused)
        logits = line(
            "linear",
            "aten.linear.default",
            f"{a(x, act)}, %{pre}_mlp_gate_weight : {experts}x2048 : {_BF}",
            f"1xs44x{experts}",
        )
        sm = line("softmax", "aten.softmax.int", f"{a(logits, f'1xs44x{experts}')}, -1", f"1xs44x{experts}")
        tk = line(
            "topk",
            "aten.topk.default",
            f"{a(sm, f'1xs44x{experts}')}, 8",
            "(1xs44x8, 1xs44x8)",
            f"({_BF}, torch.int64)",
        )
        wts = line("getitem", "<built-in function getitem>", f"%{tk} : ? : tuple, 0", "1xs44x8")
        acc = line("zeros_like", "aten.zeros_like.default", f"{a(x, act)}", act)
        for e in range(experts):
            ep = f"{pre}_mlp_experts_{e}"
            if li in st.swiglu_fused:
                s = line(
                    "torch_swiglu",
                    "auto_deploy.torch_swiglu.default",
                    f"{a(x, act)}, %{ep}_gate_proj_weight : {_E_DIM}x2048 : {_BF}, "
                    f"%{ep}_up_proj_weight : {_E_DIM}x2048 : {_BF}",
                    f"1xs44x{_E_DIM}",
                )
            else:
                g = line(
                    "linear",
                    "aten.linear.default",
                    f"{a(x, act)}, %{ep}_gate_proj_weight : {_E_DIM}x2048 : {_BF}",
                    f"1xs44x{_E_DIM}",
                )
                si = line("silu", "aten.silu.default", f"{a(g, f'1xs44x{_E_DIM}')}", f"1xs44x{_E_DIM}")
                u = line(
                    "linear",
                    "aten.linear.default",
                    f"{a(x, act)}, %{ep}_up_proj_weight : {_E_DIM}x2048 : {_BF}",
                    f"1xs44x{_E_DIM}",
                )
                s = line(
                    "mul",
                    "aten.mul.Tensor",
                    f"{a(si, f'1xs44x{_E_DIM}')}, {a(u, f'1xs44x{_E_DIM}')}",
                    f"1xs44x{_E_DIM}",
                )
            d = line(
                "linear",
                "aten.linear.default",
                f"{a(s, f'1xs44x{_E_DIM}')}, %{ep}_down_proj_weight : 2048x{_E_DIM} : {_BF}",
                act,
            )
            sel = line("select", "aten.select.int", f"{a(wts, '1xs44x8')}, -1, {e % 8}", "1xs44")
            us = line("unsqueeze", "aten.unsqueeze.default", f"{a(sel, '1xs44')}, -1", "1xs44x1")
            sc = line("mul", "aten.mul.Tensor", f"{a(d, act)}, {a(us, '1xs44x1')}", act)
            acc = line("add", "aten.add.Tensor", f"{a(acc, act)}, {a(sc, act)}", act)
        h = line("add", "aten.add.Tensor", f"{a(h, act)}, {a(acc, act)}", act)
    x = norm(h, "model_norm_weight", layers in st.norm_fused)
    lm = line(
        "linear", "aten.linear.default", f"{a(x, act)}, %lm_head_weight : 151936x2048 : {_BF}", "1xs44x151936"
    )
    out.append(f"output %{lm}")
    rule = "=" * 80
    head = [
        f"# Transform: {key}",
        f"# Stage: {stage}",
        "# GraphModules found: 1",
        "",
        "",
        rule,
        "# GraphModule: (root)",
        rule,
        "",
    ]
    return "\n".join(head + out) + "\n"


def _write_run(
    folder: Path,
    layers: int,
    experts: int,
    steps: list[tuple[str, str, bool]],
    lost: frozenset[int],
    seed: int,
) -> tuple[int, int]:
    folder.mkdir(parents=True)
    graphs = folder / "graphs"
    graphs.mkdir()
    all_norm = frozenset(range(layers + 1))
    st = _State(frozenset(), frozenset(), False)
    events: list[Event] = []
    body_cache: dict[_State, str] = {}
    n_nodes = 0
    min_nodes: int | None = None
    counter = 0
    for stage, key, enabled in steps:
        matches = 0
        if enabled and key == "match_rmsnorm_pattern":
            st = _State(all_norm - lost, st.swiglu_fused, st.flashinfer)
            matches = 2 * len(st.norm_fused - {layers}) + (layers in st.norm_fused)
        elif enabled and key == "match_swiglu_pattern":
            st = _State(st.norm_fused, frozenset(range(layers)), st.flashinfer)
            matches = layers * experts
        elif enabled and key == "fuse_rmsnorm":
            st = _State(st.norm_fused, st.swiglu_fused, True)
            matches = 2 * len(st.norm_fused - {layers}) + (layers in st.norm_fused)
        elif enabled and key in ("export_to_gm", "compile_model"):
            matches = 1
        events.append(
            Event(
                stage,
                key,
                "applied" if enabled else "disabled",
                matches,
                shape_prop=matches > 0,
                mem_gb=11.5 if key == "resize_kv_cache" else 0.0,
            )
        )
        if key == "build_model":
            continue
        if st not in body_cache:
            text = _render(layers, experts, st, "@KEY@", "@STAGE@")
            body_cache[st] = text.split("\n", 2)[2]
            n_nodes = max(n_nodes, text.count("\n%"))
            min_nodes = text.count("\n%") if min_nodes is None else min(min_nodes, text.count("\n%"))
        counter += 1
        (graphs / f"{counter:03d}_{stage}_{key}.txt").write_text(
            f"# Transform: {key}\n# Stage: {stage}\n" + body_cache[st], encoding="utf-8", newline="\n"
        )
    (folder / "ad.log").write_text(render_log(events, LogStyle(seed=seed)), encoding="utf-8", newline="\n")
    return n_nodes, min_nodes or 0


def make_large_pair(
    out_dir: Path | str,
    layers: int = 80,
    transforms: int = 90,
    inject_regression: bool = True,
    nodes_per_dump: int = 50_000,
) -> dict[str, int]:
    """Write ``out_dir/{baseline,candidate}`` with ``transforms`` configured transforms (AD default.yaml
    order, ending with compile_model) and dumps of at least ``nodes_per_dump`` nodes (MoE experts are sized
    to reach it in the most fused graph; unfused dumps are about 1.5x larger). With
    ``inject_regression``, the candidate's match_rmsnorm_pattern misses 4 layers (partial loss, and
    fuse_rmsnorm downstream). Returns sizes (nodes per dump, files, experts per layer)."""
    out = Path(out_dir)
    # keep compile_model last whatever the count, so the pipeline ends like a real one
    steps = [*AD_KEYS[: max(2, transforms) - 1], AD_KEYS[-1]] if transforms < len(AD_KEYS) else list(AD_KEYS)
    # size the experts so that even the smallest (fully fused, 6 nodes per expert) dump has nodes_per_dump
    experts = max(1, math.ceil((nodes_per_dump / layers - 20) / 6))
    lost = frozenset(range(layers // 2, layers // 2 + 4)) if inject_regression else frozenset()
    n, n_min = _write_run(out / "baseline", layers, experts, steps, frozenset(), seed=1)
    _write_run(out / "candidate", layers, experts, steps, lost, seed=2)
    return {
        "max_nodes_per_dump": n,
        "min_nodes_per_dump": n_min,
        "files_per_run": len(steps) - 1,
        "experts_per_layer": experts,
    }
