"""Custom ``auto_deploy::*`` ops used by the fixture pipeline's rewrites.

They are registered with ``torch.library.custom_op`` plus a fake impl, so FakeTensor propagation sets
``meta["val"]`` on new nodes (symbolic sequence dims included). Registration happens once per process.
"""

from __future__ import annotations

import torch
from torch import Tensor

_NS = "auto_deploy"


def _define(name: str, schema_fn, fake_fn) -> None:
    op = torch.library.custom_op(f"{_NS}::{name}", mutates_args=())(schema_fn)
    op.register_fake(fake_fn)


def _same(x: Tensor, *_: object) -> Tensor:
    return torch.empty_like(x)


def _register() -> None:
    if hasattr(torch.ops, _NS) and hasattr(getattr(torch.ops, _NS), "torch_rmsnorm"):
        return

    def torch_rmsnorm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def flashinfer_rmsnorm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
        return torch_rmsnorm(x, weight, eps)

    def torch_swiglu(x: Tensor, gate_weight: Tensor, up_weight: Tensor) -> Tensor:
        return torch.nn.functional.silu(x @ gate_weight.t()) * (x @ up_weight.t())

    def torch_swiglu_fake(x: Tensor, gate_weight: Tensor, up_weight: Tensor) -> Tensor:
        return x.new_empty((*x.shape[:-1], gate_weight.shape[0]))

    def torch_repeat_kv(x: Tensor, n_rep: int) -> Tensor:
        return x.repeat_interleave(n_rep, dim=1)

    def torch_repeat_kv_fake(x: Tensor, n_rep: int) -> Tensor:
        return x.new_empty((x.shape[0], x.shape[1] * n_rep, *x.shape[2:]))

    def torch_attention_sdpa(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float) -> Tensor:
        return torch.softmax(q @ k.transpose(-2, -1) * scale + mask, -1) @ v

    def torch_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float) -> Tensor:
        rep = q.shape[1] // k.shape[1]
        return torch_attention_sdpa(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), mask, scale)

    def torch_attention_bsnd(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float) -> Tensor:
        out = torch_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), mask, scale)
        return out.transpose(1, 2).contiguous()

    def cached_attention(
        q: Tensor, k: Tensor, v: Tensor, k_cache: Tensor, v_cache: Tensor, scale: float
    ) -> Tensor:
        return torch.empty_like(q)

    def torch_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        h = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., h:], x[..., :h]), -1) * sin

    def torch_rope_bsnd(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        return torch_rope(x.transpose(1, 2), cos, sin).transpose(1, 2).contiguous()

    _define("torch_rmsnorm", torch_rmsnorm, _same)
    _define("flashinfer_rmsnorm", flashinfer_rmsnorm, _same)
    _define("torch_swiglu", torch_swiglu, torch_swiglu_fake)
    _define("torch_repeat_kv", torch_repeat_kv, torch_repeat_kv_fake)
    _define("torch_attention_sdpa", torch_attention_sdpa, _same)
    _define("torch_attention", torch_attention, _same)
    _define("torch_attention_bsnd", torch_attention_bsnd, _same)
    _define("cached_attention", cached_attention, _same)
    _define("torch_rope", torch_rope, _same)

    def torch_fake_quant_fp8_linear(x: Tensor, weight: Tensor) -> Tensor:
        def q(t: Tensor) -> Tensor:
            scale = t.abs().max().clamp(min=1e-12) / 448.0
            return (t / scale).to(torch.float8_e4m3fn).to(t.dtype) * scale

        return q(x) @ q(weight).t()

    def linear_fake(x: Tensor, weight: Tensor) -> Tensor:
        return x.new_empty((*x.shape[:-1], weight.shape[0]))

    _define("torch_fake_quant_fp8_linear", torch_fake_quant_fp8_linear, linear_fake)
    _define("torch_rope_bsnd", torch_rope_bsnd, _same)

    def torch_dist_all_reduce(x: Tensor) -> Tensor:
        return x.clone()  # one process: the sum over the ranks is this rank's part (a new tensor, no alias)

    _define("torch_dist_all_reduce", torch_dist_all_reduce, _same)


_register()


def op(name: str):
    """The default overload of ``auto_deploy::<name>`` (e.g. ``op("torch_rmsnorm")``)."""
    return getattr(torch.ops.auto_deploy, name).default
