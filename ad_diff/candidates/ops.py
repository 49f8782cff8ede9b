"""Classify dumped op targets into the kinds that decide what can be fused.

A dump writes ``str(node.target)``: ``aten.mul.Tensor``, ``auto_deploy.torch_rmsnorm.default``,
``<built-in function getitem>`` or a method name (``view``). Only the op name matters here, so the namespace
and overload are stripped (:func:`op_name`). The sets are deliberately explicit: an op nobody listed is
``other`` and never joins a fusion region, so an unknown op can hide a candidate but never invent one.
"""

from __future__ import annotations

import re

from ad_diff.core.graphops import op_name

# fmt: off
#: Pointwise maths and casts: a fused kernel computes them in registers.
ELEMENTWISE = frozenset({
    "add", "sub", "rsub", "mul", "div", "true_divide", "neg", "pow", "square", "sqrt", "rsqrt", "reciprocal",
    "exp", "exp2", "log", "log1p", "expm1", "abs", "sign", "sin", "cos", "tanh", "sigmoid", "silu", "gelu",
    "relu", "relu6", "leaky_relu", "elu", "selu", "softplus", "mish", "hardswish", "hardsigmoid", "hardtanh",
    "erf", "clamp", "clamp_min", "clamp_max", "clip", "maximum", "minimum", "where", "masked_fill", "lerp",
    "addcmul", "addcdiv", "floor", "ceil", "round", "trunc", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "to", "_to_copy", "type_as",
    "float", "half", "bfloat16", "fill", "zeros_like", "ones_like", "nan_to_num",
})
#: Reductions along a dimension: fusible into a row-wise kernel (norms, softmax).
REDUCTION = frozenset({
    "mean", "sum", "amax", "amin", "max", "min", "var", "var_mean", "std", "softmax", "_softmax",
    "log_softmax", "_log_softmax", "logsumexp", "norm", "linalg_vector_norm", "prod", "argmax",
})
#: Data movement without arithmetic: free inside a fused kernel, but never a candidate on their own except
#: next to attention (layout glue that a kernel could absorb).
LAYOUT = frozenset({
    "view", "_unsafe_view", "reshape", "transpose", "permute", "t", "unsqueeze", "squeeze", "expand",
    "expand_as", "contiguous", "clone", "slice", "select", "narrow", "split", "split_with_sizes", "chunk",
    "unbind", "cat", "concat", "stack", "flatten", "unflatten", "getitem", "alias", "detach", "repeat",
    "repeat_interleave",
})
#: Matrix products: the anchor of GEMM epilogues.
GEMM = frozenset({
    "linear", "mm", "bmm", "matmul", "addmm", "baddbmm", "einsum", "_scaled_mm", "_grouped_mm",
    "_scaled_grouped_mm",
})
#: Casts and copies: a value computed from parameters only stays a parameter through them.
CASTS = frozenset({"to", "_to_copy", "type_as", "float", "half", "bfloat16", "contiguous", "clone"})
#: Layout ops that return a view (no memory written): their outputs cost no bytes.
VIEWS = frozenset({
    "view", "_unsafe_view", "transpose", "permute", "t", "unsqueeze", "squeeze", "expand", "expand_as",
    "slice", "select", "narrow", "split", "split_with_sizes", "chunk", "unbind", "getitem", "alias",
    "detach", "as_strided", "unflatten", "flatten", "reshape",
})
#: Token routing: index arithmetic that sorts, counts and gathers tokens per expert (part of a MoE router).
ROUTING = frozenset({
    "histc", "sort", "argsort", "cumsum", "bincount", "index", "index_select", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "index_put", "index_put_", "index_add", "index_add_", "gather",
    "one_hot", "where", "nonzero", "topk",
})
# fmt: on
_GEMM_WORDS = re.compile(r"linear|gemm|matmul|_mm\b")
_ATTN_WORDS = re.compile(r"attention|attn|_mla\b|mla_|sdpa|flash")
_ROPE_WORDS = re.compile(r"rope")



def namespace(target: str) -> str:
    """``aten`` / ``auto_deploy`` / ... for OpOverload targets, ``""`` otherwise."""
    if target.startswith("<") or "." not in target:
        return ""
    return target.split(".", 1)[0]


def kind(target: str, dtype: str | None = None) -> str:
    """One of ``elementwise``, ``reduction``, ``layout``, ``gemm``, ``attention``, ``rope``, ``custom``,
    ``symbolic`` (shape arithmetic on SymInt/int values) or ``other``."""
    if dtype in ("SymInt", "int", "SymFloat", "SymBool", "float", "bool"):
        return "symbolic"
    name = op_name(target)
    ns = namespace(target)
    if target.startswith("<built-in function") and name != "getitem":
        return "symbolic"  # operator.mul/add on sizes
    if ns and ns not in ("aten", "prims"):
        # A custom op is already a kernel: never re-fused, but it anchors epilogues and layout glue.
        if _ATTN_WORDS.search(name):
            return "attention"
        if _ROPE_WORDS.search(name):
            return "rope"
        if _GEMM_WORDS.search(name):
            return "gemm"
        return "custom"
    if name in GEMM:
        return "gemm"
    if name in (
        "scaled_dot_product_attention",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
    ):
        return "attention"
    if name in ELEMENTWISE:
        return "elementwise"
    if name in REDUCTION:
        return "reduction"
    if name in LAYOUT:
        return "layout"
    return "other"


COMPUTE = frozenset({"elementwise", "reduction"})
"""Kinds that form fusion regions."""

#: Spellings of one op that a pattern function and an exported graph may use for the same maths.
ALIASES = {
    "true_divide": "div",
    "divide": "div",
    "multiply": "mul",
    "subtract": "sub",
    "negative": "neg",
    "_softmax": "softmax",
    "_log_softmax": "log_softmax",
    "_to_copy": "to",
    "type_as": "to",
    "float": "to",
    "half": "to",
    "bfloat16": "to",
    "_unsafe_view": "view",
}
#: Canonical ops left out when a pattern function's ops are compared with a graph's: casts and copies
#: change no value (and a pattern traced at one dtype loses its casts).
NEUTRAL = frozenset({"to", "contiguous", "clone", "detach", "alias"})


def canonical(name: str, ns: str = "") -> str:
    """One spelling per op: ``ns::name`` for custom namespaces, the aliased aten name otherwise."""
    if ns and ns not in ("aten", "prims"):
        return f"{ns}::{name}"
    return ALIASES.get(name, name)


def canonical_target(target: str) -> str:
    """:func:`canonical` of a dumped target (``aten.true_divide.Tensor`` -> ``div``,
    ``auto_deploy.torch_moe.default`` -> ``auto_deploy::torch_moe``)."""
    return canonical(op_name(target), namespace(target))
