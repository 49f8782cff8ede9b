"""The fusion families AutoDeploy is known to cover: their ops and the transforms that make them.

Read by the candidates search (:mod:`ad_diff.candidates.lookup`: the fallback when the source does not tie a
family to its transforms) and by the config kind (a config key one typo away from a known transform is a
misspelling, ADC010). It lives in ``core`` so that the config kind needs nothing of ``candidates``.
"""

from __future__ import annotations

#: family -> (op names, transform keys) known to cover it in AutoDeploy: the fallback when the source
#: does not tie them. Every name was read in NVIDIA/TensorRT-LLM's ``tensorrt_llm/_torch/auto_deploy``
#: (custom_ops/ registrations, transform/library/ registrations; list in docs/candidates.md). Families
#: without a confirmed upstream registration have empty entries rather than guessed names.
KNOWN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # transform/library/rms_norm.py; custom_ops/.../rms_norm.py registers auto_deploy::flashinfer_rms_norm
    # (its Python function is called flashinfer_rmsnorm: the op name is the registered string)
    "rmsnorm": (
        ("torch_rmsnorm", "flashinfer_rms_norm", "triton_rms_norm"),
        ("match_rmsnorm_pattern", "fuse_rmsnorm"),
    ),
    "layernorm": ((), ()),
    "l2norm": (("torch_l2norm", "fla_l2norm"), ("match_l2norm_pattern", "fuse_l2norm")),  # l2_norm.py
    "softmax": (
        ("torch_attention_sdpa", "torch_attention"),
        ("match_eager_attention", "match_grouped_attention"),  # attention.py
    ),
    "swiglu": (
        ("torch_swiglu_mlp", "fused_swiglu_mlp", "triton_swiglu_mlp"),
        ("match_swiglu_pattern", "fuse_swiglu"),  # fuse_swiglu.py
    ),
    "silu_mul": (("flashinfer_silu_and_mul", "trtllm_silu_and_mul"), ("fuse_silu_mul",)),  # fuse_silu_mul.py
    "gelu_mul": (("gelu_tanh_and_mul",), ("fuse_gelu_tanh_mul",)),  # fuse_gelu_tanh_mul.py
    "sigmoid_mul": ((), ()),
    "rope": (
        (
            "torch_rope_with_explicit_cos_sin",
            "torch_rope_with_complex_freqs",
            "torch_rope_with_qk_interleaving",
            "flashinfer_rope",
            "triton_rope_with_input_pos",
            "triton_rope_on_interleaved_qk_inputs",
        ),
        ("match_rope_pattern", "match_rope_layout", "optimize_rope"),  # rope.py
    ),
    "gemm_epilogue": ((), ()),
    "attention_adjacent": ((), ()),
    "elementwise_chain": ((), ()),
    "attention_layout": (
        (),
        ("eliminate_redundant_transposes", "match_attention_layout", "match_rope_layout"),
    ),
    # transform/library/attention.py (match_repeat_kv, match_eager_attention, match_grouped_attention,
    # match_attention_layout); custom_ops/attention/ registers torch_attention (sinks, sliding window),
    # torch_attention_sdpa, torch_attention_grouped_sdpa, torch_attention_repeat_kv
    "attention": (
        (
            "torch_attention",
            "torch_attention_sdpa",
            "torch_attention_grouped_sdpa",
            "torch_attention_repeat_kv",
        ),
        ("match_eager_attention", "match_grouped_attention", "match_repeat_kv", "match_attention_layout"),
    ),
    # transform/library/fused_moe.py; custom_ops/ registers torch_moe, torch_moe_fused, trtllm_moe_fused,
    # triton_moe_fused
    "moe": (
        ("torch_moe", "torch_moe_fused", "trtllm_moe_fused", "triton_moe_fused"),
        ("match_moe_pattern", "fuse_moe"),
    ),
}


#: transform -> the ops one match of it writes exactly one of: upstream's pattern-matcher transforms count
#: one match per replacement (``ADPatternMatcherPass.apply``), so the instances of these ops a transform's
#: dump adds equal its logged count in any consistent run. Only transforms whose replacement was read in
#: the source (transform/library/rms_norm.py: each match becomes one backend op, ``flashinfer_rms_norm``,
#: ``triton_rms_norm`` or ``torch_rmsnorm``); a dump that adds none of them is not judged (an op renamed
#: in another AD version must not read as an inconsistency).
ONE_OP_PER_MATCH: dict[str, tuple[str, ...]] = {
    "match_rmsnorm_pattern": KNOWN["rmsnorm"][0],
    "fuse_rmsnorm": KNOWN["rmsnorm"][0],
}


__all__ = ["KNOWN", "ONE_OP_PER_MATCH"]
