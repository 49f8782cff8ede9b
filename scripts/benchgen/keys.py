"""AD's configured transforms in run order (FORMATS.md 4.1 ``default.yaml``), shared by the benchmark
generators: 93 keys, 70 enabled; ``build_model`` writes no dump, so a run has 92 dump files."""

from __future__ import annotations

# stage -> keys in file order; a trailing ``!`` marks ``enabled: false``
_STAGES: tuple[tuple[str, str], ...] = (
    ("factory", "build_model"),
    ("export", "export_to_gm"),
    ("post_export", "cleanup_noop_slice cleanup_noop_add cleanup_input_constraints"),
    (
        "pattern_matcher",
        "match_moe_pattern match_dense_moe_pattern match_bmm_moe_pattern split_moe_fused_for_sharding "
        "match_repeat_kv match_eager_attention match_sdpa_to_torch_attention match_grouped_attention "
        "match_attention_layout match_rope_pattern match_rope_layout match_rmsnorm_pattern "
        "match_l2norm_pattern match_moe_routing_pattern eliminate_redundant_transposes "
        "quantize_int4_linear_from_config quantize_int4_gptq_linear_from_config "
        "quantize_fp8_linear_from_config quantize_nvfp4_linear_from_config "
        "quantize_finegrained_fp8_linear_from_config quantize_finegrained_fp8_moe "
        "quantize_fp8_bmm_from_config quantize_fp8_from_graph quantize_nvfp4_from_graph "
        "match_swiglu_pattern match_nvfp4_swiglu_pattern match_finegrained_fp8_swiglu_pattern "
        "quantize_fp8_moe quantize_nvfp4_moe quantize_mxfp4_moe detect_hidden_states_for_capture!",
    ),
    ("sharding", "apply_sharding_hints detect_sharding sharding_transform_executor pipeline_cache!"),
    ("weight_load", "strip_sharding_hints load_weights move_inputs_to_device"),
    (
        "post_load_fusion",
        "fuse_gemms_mixed_children! fuse_gemms! fuse_fp4_gemms! fuse_fp8_gemms! fuse_fp8_linear "
        "fuse_trtllm_attn_quant_fp8! fuse_nvfp4_linear fuse_relu2_quant_nvfp4 fuse_nvfp4_swiglu "
        "fuse_finegrained_fp8_swiglu fuse_finegrained_fp8_linear fuse_mxfp4_moe fuse_moe fuse_fp8_moe "
        "fuse_finegrained_fp8_moe fuse_nvfp4_moe fuse_allreduce_residual_rmsnorm fuse_rmsnorm "
        "fuse_rmsnorm_quant_nvfp4 fuse_gdn_gating fuse_l2norm fuse_silu_mul fuse_swiglu! "
        "fuse_add_rms_norm! fuse_rmsnorm_quant_fp8! gather_logits_before_lm_head! "
        "fuse_rope_into_trtllm_attention! fuse_rope_into_trtllm_mla! lower_dsv3_a_gemm! "
        "fuse_dsv3_router_gemm! optimize_rope mlir_elementwise_fusion!",
    ),
    (
        "cache_init",
        "insert_cached_attention insert_cached_mla_attention insert_cached_ssm_attention "
        "insert_cached_causal_conv insert_cached_delta_rule insert_cached_gated_delta_rule "
        "insert_cached_residual_add initialize_mrope_delta_cache! initialize_cache resize_kv_cache",
    ),
    ("visualize", "visualize_namespace!"),
    (
        "compile",
        "fuse_causal_conv_activation multi_stream_moe! multi_stream_mla_attn! multi_stream_gemm! "
        "cleanup_identity_dtype_cast! fuse_moe_allreduce_residual_rmsnorm! compile_model",
    ),
)

#: ``(stage, key, enabled)`` in run order.
AD_KEYS: tuple[tuple[str, str, bool], ...] = tuple(
    (stage, key.rstrip("!"), not key.endswith("!")) for stage, keys in _STAGES for key in keys.split()
)
