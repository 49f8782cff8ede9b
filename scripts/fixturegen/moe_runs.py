"""MoE run folders from real ``transformers`` MoE classes (optional ``gen`` extra), for issue 42's fixtures.

A tiny ``MixtralForCausalLM`` or ``Qwen3MoeForCausalLM`` is built from a config object (no hub download,
random weights, fixed seed) in bfloat16 and exported with ``torch.export`` the way AutoDeploy's graphs look
after its MoE transforms: the experts run as one ``auto_deploy::trtllm_moe_fused(x, selected_experts,
routing_weights, w3_w1, w2)`` op and the RMSNorms as ``auto_deploy::torch_rmsnorm``. The router is either
left as transformers writes it (``linear -> softmax -> topk -> renormalise``) or fused into one
``auto_deploy::torch_moe_router(logits, top_k)`` op (as ``match_moe_routing_pattern`` does), whose
``(weights, experts)`` feed the MoE op. The ops are registered here with real torch bodies, so the exported
graph runs: per-node captures are the values that graph computes on the CPU in bfloat16.

What differs between two runs of a pair is how an op computes (a *kernel*), never the graph text:
:data:`KERNELS` selects the implementation each op runs. Needs ``transformers`` and torch; the committed
fixtures do not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx

SEED = 11
BATCH, SEQ = 4, 32
_COMMON: dict[str, Any] = {
    "vocab_size": 128,
    "hidden_size": 64,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
    "attn_implementation": "eager",
}


@dataclass(frozen=True)
class Kernels:
    """How the ops of one run compute (the graph is the same in every run)."""

    rmsnorm: str = "hf"
    """``hf``: weight * (normalised x cast to bf16), two roundings; ``fused``: the product taken in float32,
    then one rounding (a fused kernel's order: differs by at most about one bf16 ulp)."""
    router_dim: int = -1
    """The dim ``torch_moe_router`` takes the softmax over (-1: the experts; 0: the tokens, a broken kernel)."""


KERNELS = [Kernels()]
"""The kernels the registered ops run now (a one-element list, swapped per run)."""


@torch.library.custom_op("auto_deploy::torch_rmsnorm", mutates_args=())
def torch_rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm with the run's kernel (see :class:`Kernels`)."""
    xf = x.float()
    normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    if KERNELS[0].rmsnorm == "fused":
        return (weight.float() * normed).to(x.dtype)
    return weight * normed.to(x.dtype)


@torch_rmsnorm.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("auto_deploy::torch_moe_router", mutates_args=())
def torch_moe_router(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax, top-k and renormalisation in one op: ``(routing weights [T, k] float32, experts [T, k])``."""
    probs = torch.softmax(logits.float(), dim=KERNELS[0].router_dim)
    top, idx = torch.topk(probs, top_k, dim=-1)
    return top / top.sum(dim=-1, keepdim=True), idx


@torch_moe_router.register_fake
def _(logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    t = logits.shape[0]
    return logits.new_empty((t, top_k), dtype=torch.float32), logits.new_empty((t, top_k), dtype=torch.int64)


@torch.library.custom_op("auto_deploy::trtllm_moe_fused", mutates_args=())
def trtllm_moe_fused(
    x: torch.Tensor, selected_experts: torch.Tensor, routing_weights: torch.Tensor, w3_w1: torch.Tensor,
    w2: torch.Tensor,
) -> torch.Tensor:
    """The experts of a Mixtral/Qwen3 MoE block (transformers' loop: gate/up, SiLU, down, weighted sum)."""
    out = torch.zeros_like(x)
    for e in range(w3_w1.shape[0]):
        tok, pos = torch.where(selected_experts == e)
        if tok.numel() == 0:
            continue
        gate, up = F.linear(x[tok], w3_w1[e]).chunk(2, dim=-1)
        y = F.linear(F.silu(gate) * up, w2[e]) * routing_weights[tok, pos, None]
        out.index_add_(0, tok, y.to(x.dtype))
    return out


@trtllm_moe_fused.register_fake
def _(x: torch.Tensor, selected_experts: torch.Tensor, routing_weights: torch.Tensor, w3_w1: torch.Tensor,
      w2: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


def _models() -> dict[str, tuple[Any, Any, Any, dict[str, Any]]]:
    import transformers as tf  # optional: only the generator needs it
    from transformers.models.mixtral import modeling_mixtral as mx
    from transformers.models.qwen3_moe import modeling_qwen3_moe as qw

    return {
        "mixtral": (tf.MixtralConfig, tf.MixtralForCausalLM, mx,
                    {"num_local_experts": 8, "num_experts_per_tok": 2}),
        "qwen3_moe": (tf.Qwen3MoeConfig, tf.Qwen3MoeForCausalLM, qw,
                      {"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                       "norm_topk_prob": True, "head_dim": 16, "decoder_sparse_step": 1}),
    }


def _patch(module: Any, prefix: str, fused_router: bool) -> list[tuple[Any, str, Callable[..., Any]]]:
    """Route the model's RMSNorms, experts and (``fused_router``) router through the ops above; returns what
    to restore."""
    norm = getattr(module, f"{prefix}RMSNorm")
    experts = getattr(module, f"{prefix}Experts")
    router = getattr(module, f"{prefix}TopKRouter")
    saved = [(norm, "forward", norm.forward), (experts, "forward", experts.forward),
             (router, "forward", router.forward)]

    def norm_forward(self: Any, hidden: torch.Tensor) -> torch.Tensor:
        return torch.ops.auto_deploy.torch_rmsnorm(hidden, self.weight, self.variance_epsilon)

    def experts_forward(self: Any, hidden: torch.Tensor, index: torch.Tensor, weights: torch.Tensor) -> Any:
        return torch.ops.auto_deploy.trtllm_moe_fused(hidden, index, weights, self.gate_up_proj, self.down_proj)

    def router_forward(self: Any, hidden: torch.Tensor) -> Any:
        logits = F.linear(hidden.reshape(-1, self.hidden_dim), self.weight)
        weights, index = torch.ops.auto_deploy.torch_moe_router(logits, self.top_k)
        return logits, weights, index

    norm.forward = norm_forward
    experts.forward = experts_forward
    if fused_router:
        router.forward = router_forward
    return saved


@dataclass
class Exported:
    """One model exported once: the graph module (runs with the current :data:`KERNELS`) and its input."""

    gm: fx.GraphModule
    ids: torch.Tensor
    config: dict[str, Any]


def export(name: str, fused_router: bool = False, seed: int = SEED) -> Exported:
    """Model ``name`` (``mixtral`` or ``qwen3_moe``) built in bfloat16 and exported (see the module doc)."""
    config_cls, model_cls, module, extra = _models()[name]
    prefix = {"mixtral": "Mixtral", "qwen3_moe": "Qwen3Moe"}[name]
    saved = _patch(module, prefix, fused_router)
    try:
        torch.manual_seed(seed)
        config = {**_COMMON, **extra}
        model = model_cls(config_cls(**config)).to(torch.bfloat16).eval()
        with torch.no_grad():  # trained norms are not all ones (a weight of one hides the kernels' rounding)
            for pname, p in model.named_parameters():
                if pname.endswith("norm.weight"):
                    p.copy_(1 + 0.25 * torch.randn(p.shape, generator=torch.Generator().manual_seed(seed)))
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, config["vocab_size"], (BATCH, SEQ), generator=g)
        ep = torch.export.export(model, (ids,), kwargs={"use_cache": False}, strict=False)
        gm = ep.module()
    finally:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)
    assert isinstance(gm, fx.GraphModule)
    return Exported(gm, ids, config)


def run(exp: Exported, kernels: Kernels, keep: Callable[[fx.Node], bool]) -> tuple[torch.Tensor, dict[str, Any]]:
    """The logits and the kept nodes' outputs of one run of ``exp`` under ``kernels``."""
    from ad_diff.recording import capture_nodes

    KERNELS[0] = kernels
    try:
        captured = capture_nodes(exp.gm, exp.ids, False, nodes=keep)
        with torch.no_grad():
            out = exp.gm(exp.ids, use_cache=False)
    finally:
        KERNELS[0] = Kernels()
    logits = out.logits if hasattr(out, "logits") else out[0]
    return logits, captured
