"""Name the family of a fusion region from the ops it holds (RMSNorm, SwiGLU, GEMM epilogue ...).

The family only names and documents a pattern and picks the names the kernel lookup searches for; grouping
is done on the canonical signature, so two RMSNorm variants (``rsqrt`` vs ``sqrt``/``div``) stay apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ad_diff.core.graphops import op_name
from ad_diff.kinds.graph.model import GraphNode

_CASTS = {"to", "_to_copy", "type_as", "float", "half", "bfloat16"}
_ACTIVATIONS = {
    "silu",
    "gelu",
    "relu",
    "relu6",
    "sigmoid",
    "tanh",
    "leaky_relu",
    "elu",
    "softplus",
    "mish",
    "hardswish",
}

#: family -> one-line description shown in reports.
DESCRIPTIONS: dict[str, str] = {
    "rmsnorm": "RMSNorm left as a pow/mean/add/rsqrt/mul chain",
    "layernorm": "LayerNorm left as a mean/sub/var/rsqrt chain",
    "l2norm": "L2 normalisation left as a sum-of-squares chain",
    "softmax": "softmax (or scale/mask + softmax) left unfused",
    "swiglu": "SwiGLU MLP: two GEMMs on the same input, silu on one, multiplied",
    "silu_mul": "silu(x) * y left as two pointwise ops",
    "gelu_mul": "GeGLU: gelu(x) * y left as two pointwise ops",
    "sigmoid_mul": "x * sigmoid(x) (decomposed SiLU) or a sigmoid gate",
    "rope": "rotary embedding left as split/neg/cat/mul/add",
    "gemm_epilogue": "pointwise epilogue after a GEMM",
    "attention_adjacent": "pointwise ops next to attention/RoPE",
    "elementwise_chain": "chain of pointwise ops",
    "attention_layout": "layout glue next to attention/RoPE",
    "attention": "attention left unfused: QK^T, scale/mask/sinks, softmax and PV as separate ops",
    "moe": "mixture-of-experts block left unfused: a router (GEMM, softmax/sigmoid, topk) feeding "
    "expert GEMMs",
}


def _epilogue(ops: Counter[str], region: Sequence[GraphNode], nodes: Mapping[str, GraphNode]) -> str:
    parts = []
    if ops.keys() & _ACTIVATIONS:
        parts.append("activation (" + ", ".join(sorted(ops.keys() & _ACTIVATIONS)) + ")")
    for n in region:
        if op_name(n.target) == "add":
            refs = [a for a in n.args if a.node]
            if any(a.text not in nodes for a in refs):
                parts.append("bias add")
            elif len(refs) == 2:
                parts.append("residual add")
    if ops.keys() & _CASTS:
        parts.append("cast")
    if ops.keys() - _ACTIVATIONS - _CASTS - {"add"}:
        parts.append("other: " + ", ".join(sorted(ops.keys() - _ACTIVATIONS - _CASTS - {"add"})))
    return "GEMM epilogue: " + ", ".join(dict.fromkeys(parts))


def _same_input(anchors: Sequence[GraphNode]) -> bool:
    firsts = {next((a.text for a in g.args if a.node), None) for g in anchors}
    return len(anchors) == 2 and len(firsts) == 1 and None not in firsts


def classify_family(
    ops: Sequence[str],
    anchors: Sequence[GraphNode],
    near_attention: bool,
    region: Sequence[GraphNode],
    nodes: Mapping[str, GraphNode],
) -> tuple[str, str] | None:
    """``(family, description)`` of a region, or ``None`` when it is not worth reporting.

    ``ops`` are the op names of the region's nodes (anchors excluded), ``anchors`` the GEMMs fused with it.
    """
    c = Counter(ops)
    keys = set(c) - _CASTS
    if (
        c["mean"]
        and (c["rsqrt"] or (c["sqrt"] and c["div"]))
        and c["sub"] == 0
        and (c["pow"] or c["mul"] >= 2)
    ):
        return "rmsnorm", DESCRIPTIONS["rmsnorm"]
    if (c["mean"] or c["var_mean"] or c["var"]) and c["sub"] and (c["rsqrt"] or c["sqrt"]):
        return "layernorm", DESCRIPTIONS["layernorm"]
    if (c["sum"] and (c["rsqrt"] or c["sqrt"] or c["div"]) and not c["mean"]) or c["linalg_vector_norm"]:
        return "l2norm", DESCRIPTIONS["l2norm"]
    if c["softmax"] or c["_softmax"] or (c["amax"] and c["exp"] and c["sum"]):
        return "softmax", DESCRIPTIONS["softmax"]
    if c["neg"] and (c["cat"] or c["stack"]) and c["mul"] and (c["add"] or c["sub"]):
        return "rope", DESCRIPTIONS["rope"]
    if keys == {"silu", "mul"}:
        if _same_input(anchors):
            return "swiglu", DESCRIPTIONS["swiglu"]
        return "silu_mul", DESCRIPTIONS["silu_mul"]
    if keys == {"gelu", "mul"}:
        return "gelu_mul", DESCRIPTIONS["gelu_mul"]
    if keys == {"sigmoid", "mul"}:
        return "sigmoid_mul", DESCRIPTIONS["sigmoid_mul"]
    if anchors:
        return "gemm_epilogue", _epilogue(c, region, nodes)
    if len(ops) < 2:
        return None
    if near_attention:
        return "attention_adjacent", DESCRIPTIONS["attention_adjacent"]
    return "elementwise_chain", DESCRIPTIONS["elementwise_chain"]
