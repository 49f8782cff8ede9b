"""A tiny Llama-style decoder written out op by op, so that torch.export yields the raw patterns
(RMSNorm chain, rotate_half RoPE, repeat_kv, eager attention, SwiGLU) that AutoDeploy's matchers look for.

Per-layer ``variants`` let a scenario alter one layer's pattern (e.g. an interleaved RoPE that the rope
matcher does not recognise, or a norm written with ``torch.sqrt`` + ``div``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class ModelSpec:
    """Dimensions and per-layer pattern variants of the tiny decoder."""

    layers: int = 2
    hidden: int = 64
    heads: int = 4
    kv_heads: int = 2
    vocab: int = 128
    intermediate: int = 128
    max_pos: int = 64
    eps: float = 1e-5
    seed: int = 0
    rope_variant: tuple[tuple[int, str], ...] = ()
    """layer -> ``"standard"`` (split + cat rotate_half) or ``"interleaved"`` (stack/flatten form)."""
    norm_variant: tuple[tuple[int, str], ...] = ()
    """layer -> ``"standard"`` (pow/mean/add/rsqrt/mul/mul) or ``"sqrt_div"`` (not matched)."""
    mlp_variant: tuple[tuple[int, str], ...] = ()
    """layer -> ``"swiglu"``, ``"swapped"`` (``up(x) * silu(gate(x))``, operands swapped) or ``"gelu_mul"``."""

    @property
    def head_dim(self) -> int:
        """Per-head width."""
        return self.hidden // self.heads


class RMSNorm(nn.Module):
    """RMSNorm written out so the exported graph keeps the pow/mean/add/rsqrt/mul/mul chain."""

    def __init__(self, dim: int, eps: float, variant: str = "standard") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.variant = variant

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.variant == "sqrt_div":
            # same maths, different ops: the rmsnorm matcher must not recognise it
            return self.weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x: torch.Tensor, variant: str) -> torch.Tensor:
    """Rotate the two halves of the last dim (or the even/odd lanes for the interleaved variant)."""
    if variant == "interleaved":
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)
    half = x.shape[-1] // 2
    x1, x2 = torch.split(x, [half, half], dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    """GQA attention with written-out RoPE, repeat_kv and eager softmax attention."""

    def __init__(self, spec: ModelSpec, layer: int) -> None:
        super().__init__()
        d = spec.head_dim
        self.spec = spec
        self.rope_variant = dict(spec.rope_variant).get(layer, "standard")
        self.q_proj = nn.Linear(spec.hidden, spec.heads * d, bias=False)
        self.k_proj = nn.Linear(spec.hidden, spec.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(spec.hidden, spec.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(spec.heads * d, spec.hidden, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        sp = self.spec
        d = sp.head_dim
        q = self.q_proj(x).view(b, s, sp.heads, d).transpose(1, 2)
        k = self.k_proj(x).view(b, s, sp.kv_heads, d).transpose(1, 2)
        v = self.v_proj(x).view(b, s, sp.kv_heads, d).transpose(1, 2)
        cos_u = cos.unsqueeze(1)
        sin_u = sin.unsqueeze(1)
        q = q * cos_u + rotate_half(q, self.rope_variant) * sin_u
        k = k * cos_u + rotate_half(k, self.rope_variant) * sin_u
        n_rep = sp.heads // sp.kv_heads
        k = k[:, :, None, :, :].expand(b, sp.kv_heads, n_rep, s, d).reshape(b, sp.heads, s, d)
        v = v[:, :, None, :, :].expand(b, sp.kv_heads, n_rep, s, d).reshape(b, sp.heads, s, d)
        scores = torch.matmul(q, k.transpose(2, 3)) * (d**-0.5)
        scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v)
        out = out.transpose(1, 2).reshape(b, s, sp.heads * d)
        return self.o_proj(out)


class MLP(nn.Module):
    """SwiGLU MLP ``down(silu(gate(x)) * up(x))``."""

    def __init__(self, spec: ModelSpec, layer: int) -> None:
        super().__init__()
        self.variant = dict(spec.mlp_variant).get(layer, "swiglu")
        self.gate_proj = nn.Linear(spec.hidden, spec.intermediate, bias=False)
        self.up_proj = nn.Linear(spec.hidden, spec.intermediate, bias=False)
        self.down_proj = nn.Linear(spec.intermediate, spec.hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = self.gate_proj(x)
        act = torch.nn.functional.gelu(gate) if self.variant == "gelu_mul" else torch.nn.functional.silu(gate)
        if self.variant == "swapped":
            return self.down_proj(self.up_proj(x) * act)
        return self.down_proj(act * self.up_proj(x))


class DecoderLayer(nn.Module):
    """Pre-norm decoder block with residual adds."""

    def __init__(self, spec: ModelSpec, layer: int) -> None:
        super().__init__()
        variant = dict(spec.norm_variant).get(layer, "standard")
        self.input_layernorm = RMSNorm(spec.hidden, spec.eps, variant)
        self.self_attn = Attention(spec, layer)
        self.post_attention_layernorm = RMSNorm(spec.hidden, spec.eps, variant)
        self.mlp = MLP(spec, layer)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Inner(nn.Module):
    """The ``model`` submodule (embedding, layers, final norm), as in HF Llama."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(spec.vocab, spec.hidden)
        self.layers = nn.ModuleList([DecoderLayer(spec, i) for i in range(spec.layers)])
        self.norm = RMSNorm(spec.hidden, spec.eps)


class TinyLlama(nn.Module):
    """Tiny decoder: ``forward(input_ids, position_ids) -> logits``."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        self.model = Inner(spec)
        self.lm_head = nn.Linear(spec.hidden, spec.vocab, bias=False)
        d = spec.head_dim
        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        freqs = torch.outer(torch.arange(spec.max_pos, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        s = input_ids.shape[1]
        x = self.model.embed_tokens(input_ids)
        cos = self.cos_cached[position_ids]
        sin = self.sin_cached[position_ids]
        mask = torch.full((s, s), float("-inf"), device=input_ids.device).triu(1)
        for layer in self.model.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.model.norm(x))


def build_model(spec: ModelSpec) -> TinyLlama:
    """Build the model with seeded weights (CPU, float32)."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(spec.seed)
    try:
        model = TinyLlama(spec).eval()
    finally:
        torch.random.set_rng_state(gen_state)
    return model


def export_model(model: TinyLlama) -> torch.fx.GraphModule:
    """``torch.export`` on CPU with a dynamic sequence dim; returns the exported GraphModule."""
    seq = torch.export.Dim("seq", min=2, max=model.spec.max_pos)
    ids = torch.zeros((1, 8), dtype=torch.long)
    pos = torch.arange(8, dtype=torch.long).unsqueeze(0)
    ep = torch.export.export(
        model, (ids, pos), dynamic_shapes={"input_ids": {1: seq}, "position_ids": {1: seq}}, strict=False
    )
    return ep.module()
