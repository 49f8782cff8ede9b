"""A tiny Llama-style decoder with seeded weights (no network), and the variants used for tensor fixtures.

Variants (``Variant`` flags) model what AutoDeploy transforms change numerically:

* ``baseline``: bf16, RMSNorm computed in fp32 and cast back (the usual upcast), softmax in fp32;
* ``within``: fused QKV projection (one GEMM over concatenated weights) and an RMSNorm that drops the fp32
  upcast (computes in bf16): rounding-level changes, expected to stay within tolerance;
* ``beyond``: a fused SwiGLU that quantises its output to fp8 e4m3 (per-tensor scale) before the down
  projection: a precision change large enough to drift beyond tolerance;
* ``no_rope_k``: RoPE not applied to keys (a dropped term: a genuine bug);
* the fp32 reference is ``baseline`` run with fp32 weights (the same bf16-rounded values) and TF32 off.

Used by ``scripts/make_gpu_fixtures.py``; works on CPU too (slower, different rounding than the GPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn

VOCAB, HIDDEN, LAYERS, HEADS, INTER, SEQ, BATCH = 512, 128, 2, 4, 256, 16, 4


@dataclass(frozen=True)
class Variant:
    """Numerical choices of one run."""

    rmsnorm_upcast: bool = True
    fused_qkv: bool = False
    mlp_fp8: bool = False
    rope_k: bool = True


VARIANTS = {
    "baseline": Variant(),
    "within": Variant(rmsnorm_upcast=False, fused_qkv=True),
    "beyond": Variant(mlp_fp8=True),
    "no_rope_k": Variant(rope_k=False),
}


def rmsnorm_fp32(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm with the fp32 upcast (reference behaviour)."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def rmsnorm_native(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm computed in the input dtype (the upcast dropped)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def fused_swiglu_fp8(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """SiLU(gate) * up, quantised to fp8 e4m3 with a per-tensor scale and dequantised."""
    y = (F.silu(gate.float()) * up.float())
    scale = y.abs().amax().clamp_min(1e-12) / 448.0
    return ((y / scale).to(torch.float8_e4m3fn).float() * scale).to(gate.dtype)


torch.fx.wrap("fused_swiglu_fp8")


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding (half-split form)."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Block(nn.Module):
    """One decoder layer."""

    def __init__(self, v: Variant) -> None:
        super().__init__()
        self.v = v
        self.in_norm = nn.Parameter(torch.ones(HIDDEN))
        self.post_norm = nn.Parameter(torch.ones(HIDDEN))
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias=False)

    def norm(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return rmsnorm_fp32(x, w, 1e-6) if self.v.rmsnorm_upcast else rmsnorm_native(x, w, 1e-6)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        b, s, _ = x.shape
        h = self.norm(x, self.in_norm)
        if self.v.fused_qkv:
            w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight], 0)
            q, k, vv = F.linear(h, w).split(HIDDEN, dim=-1)
        else:
            q, k, vv = self.q_proj(h), self.k_proj(h), self.v_proj(h)
        hd = HIDDEN // HEADS
        q = q.view(b, s, HEADS, hd).transpose(1, 2)
        k = k.view(b, s, HEADS, hd).transpose(1, 2)
        vv = vv.view(b, s, HEADS, hd).transpose(1, 2)
        q = rope(q, cos, sin)
        if self.v.rope_k:
            k = rope(k, cos, sin)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + mask
        attn = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        o = (attn @ vv).transpose(1, 2).reshape(b, s, HIDDEN)
        x = x + self.o_proj(o)
        h = self.norm(x, self.post_norm)
        if self.v.mlp_fp8:
            m = fused_swiglu_fp8(self.gate_proj(h), self.up_proj(h))
        else:
            m = F.silu(self.gate_proj(h)) * self.up_proj(h)
        return x + self.down_proj(m)


class TinyLlama(nn.Module):
    """Embedding, ``LAYERS`` blocks, final norm, LM head."""

    def __init__(self, v: Variant) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Block(v) for _ in range(LAYERS))
        self.norm_w = nn.Parameter(torch.ones(HIDDEN))
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.v = v
        hd = HIDDEN // HEADS
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(SEQ).float(), inv)
        ang = torch.cat([ang, ang], -1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)
        self.register_buffer("mask", torch.full((SEQ, SEQ), -1e4).triu(1), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        cos, sin, mask = self.cos.to(x.dtype), self.sin.to(x.dtype), self.mask.to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        x = (
            rmsnorm_fp32(x, self.norm_w, 1e-6)
            if self.v.rmsnorm_upcast
            else rmsnorm_native(x, self.norm_w, 1e-6)
        )
        return self.lm_head(x)


def build(variant: str, dtype: torch.dtype, device: str, seed: int = 0) -> TinyLlama:
    """The model of ``variant`` with weights from ``seed`` (identical across variants), rounded to bf16."""
    model = TinyLlama(VARIANTS[variant])
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name == "embed.weight":
                p.copy_(torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1]))
            p.copy_(p.bfloat16().float())  # every precision sees the same bf16-representable weights
    return model.to(device=device, dtype=dtype).eval()


def prompt_ids(seed: int = 1) -> torch.Tensor:
    """The fixed prompt batch (``BATCH`` x ``SEQ`` token ids)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)


def fuse_swiglu_fp8(gm: torch.fx.GraphModule) -> int:
    """An AD-style graph transform: rewrite ``silu(gate) * up`` into ``fused_swiglu_fp8(gate, up)`` in place.

    Untouched nodes keep their names (as in AutoDeploy), so per-node captures of the baseline and the
    transformed graph line up by name. Returns the number of matches.
    """
    import operator

    matches = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not operator.mul:
            continue
        silu = node.args[0]
        if not isinstance(silu, torch.fx.Node) or silu.target is not F.silu:
            continue
        with gm.graph.inserting_after(node):
            fused = gm.graph.call_function(fused_swiglu_fp8, (silu.args[0], node.args[1]))
        node.replace_all_uses_with(fused)
        gm.graph.erase_node(node)
        if not silu.users:
            gm.graph.erase_node(silu)
        matches += 1
    gm.recompile()
    return matches
