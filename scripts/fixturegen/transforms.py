"""The fixture pipeline's transforms: real torch.fx rewrites keyed by AutoDeploy transform keys.

Each transform takes ``(gm, ctx)`` and returns its match count (number of replacements made). ``ctx`` is
a :class:`Knobs` holding the scenario's injected behaviour (a matcher that drops ``meta["val"]``, an
upstream op-form change, an improved matcher ...). Transforms not listed in :data:`REWRITES` are
pass-through with a fixed count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import fx

from .fusions import fuse_gemms
from .fxutil import aten, insert, is_op, replace, single_user, val
from .ops import op
from .sharding import detect_sharding, sharding_transform_executor

getitem = __import__("operator").getitem


@dataclass(frozen=True)
class Knobs:
    """Injected behaviour of one run's transforms (all off = the reference pipeline)."""

    heads: int = 4
    rope_drop_meta_k: bool = False
    """match_rope_pattern forgets ``meta["val"]`` on the rope nodes it creates for k."""
    split_to_narrow_q: bool = False
    """cleanup_noop_slice also rewrites q's ``split_with_sizes -> getitem`` into ``narrow -> contiguous -> view``."""
    rmsnorm_accepts_sqrt_div: bool = False
    """match_rmsnorm_pattern also recognises ``w * (x / sqrt(mean(x^2) + eps))``."""
    swiglu_accepts_gelu: bool = False
    """match_swiglu_pattern over-matches: it also takes ``gelu(gate(x)) * up(x)`` (a GELU-gated MLP) and rewrites
    it to the SiLU op."""
    quantize_fp8: bool = False
    """The run serves an FP8 checkpoint (its config has ``quant_config``): quantize_fp8_linear_from_config
    rewrites every decoder linear into ``torch_fake_quant_fp8_linear`` instead of being skipped."""
    fuse_rmsnorm_keeps: tuple[str, ...] = ()
    """fuse_rmsnorm leaves a ``torch_rmsnorm`` unfused when its weight's name starts with one of these (a
    fused kernel whose support check rejects those norms), e.g. ``("model.layers.1.",)``."""
    world_size: int = 1
    """Tensor-parallel ranks: above 1, detect_sharding plans and sharding_transform_executor applies the MLP
    shards of :mod:`.sharding` (3 weights per layer, an all-reduce after each down projection); at 1 both
    match 0 and detect_sharding logs ``Skipping sharding for single device``."""


def _graph_changed(gm: fx.GraphModule) -> None:
    gm.graph.lint()
    gm.recompile()


# ---------------------------------------------------------------- post_export
def cleanup_noop_slice(gm: fx.GraphModule, k: Knobs) -> int:
    """Drop full-range slices; optionally (injected) rewrite q's split into narrow/contiguous/view."""
    n_match = 0
    g = gm.graph
    for node in list(g.nodes):
        if is_op(node, aten.slice.Tensor) and len(node.args) >= 4 and node.args[2] == 0:
            step = node.args[4] if len(node.args) > 4 else 1
            if node.args[3] == 9223372036854775807 and step == 1:
                replace(node, node.args[0], [])
                n_match += 1
        if k.split_to_narrow_q and is_op(node, aten.split_with_sizes.default):
            x = node.args[0]
            shape = val(x).shape
            if int(shape[1]) != k.heads:
                continue
            sizes = node.args[1]
            starts = [sum(sizes[:i]) for i in range(len(sizes))]
            for user in list(node.users):
                idx = user.args[1]
                with g.inserting_before(user):
                    nar = insert(g, aten.narrow.default, (x, -1, starts[idx], sizes[idx]))
                    con = insert(g, aten.contiguous.default, (nar,))
                    new_shape = [int(shape[0]), int(shape[1]), -1, sizes[idx]]
                    vw = insert(g, aten.view.default, (con, new_shape))
                replace(user, vw, [node])
            n_match += 1
    _graph_changed(gm)
    return n_match


def cleanup_input_constraints(gm: fx.GraphModule, k: Knobs) -> int:
    """Remove the export guard module call (``_guards_fn``) left by ``ExportedProgram.module()``."""
    n = 0
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and node.target == "_guards_fn" and not node.users:
            gm.graph.erase_node(node)
            n += 1
    if hasattr(gm, "_guards_fn"):
        delattr(gm, "_guards_fn")
    _graph_changed(gm)
    return n


def cleanup_canonicalize_graph(gm: fx.GraphModule, k: Knobs) -> int:
    """(rename_only scenario) Rebuild the graph node by node, re-creating every ``linear`` node. A scratch
    ``linear`` node it creates and deletes takes one name, so every ``linear_<i>`` becomes
    ``linear_<i+1>``; structure is unchanged and nothing counts as a match."""
    old = gm.graph
    new = fx.Graph(owning_module=gm)
    scratch = new.create_node("call_function", aten.linear.default, (), name="linear")
    new.erase_node(scratch)
    env: dict[fx.Node, fx.Node] = {}
    for node in old.nodes:
        if is_op(node, aten.linear.default):
            copied = new.create_node(node.op, node.target, fx.map_arg(node.args, lambda n: env[n]),
                                     fx.map_arg(node.kwargs, lambda n: env[n]), name="linear")
            copied.meta = dict(node.meta)
        else:
            copied = new.node_copy(node, lambda n: env[n])
        env[node] = copied
    gm.graph = new
    _graph_changed(gm)
    return 0


# ---------------------------------------------------------------- pattern_matcher
def match_repeat_kv(gm: fx.GraphModule, k: Knobs) -> int:
    """``reshape(expand(unsqueeze(x, 2)))`` -> ``torch_repeat_kv(x, n_rep)``."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, aten.reshape.default, aten._unsafe_view.default):
            continue
        ex = node.args[0]
        if not (is_op(ex, aten.expand.default) and single_user(ex)):
            continue
        un = ex.args[0]
        if not (is_op(un, aten.unsqueeze.default) and un.args[1] == 2 and single_user(un)):
            continue
        n_rep = ex.args[1][2]
        with g.inserting_before(node):
            new = insert(g, op("torch_repeat_kv"), (un.args[0], n_rep))
        replace(node, new, [ex, un])
        n += 1
    _graph_changed(gm)
    return n


def match_eager_attention(gm: fx.GraphModule, k: Knobs) -> int:
    """``matmul(softmax(matmul(q, k^T) * scale + mask), v)`` -> ``torch_attention_sdpa``."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, aten.matmul.default):
            continue
        sm, v = node.args
        if not (is_op(sm, aten.softmax.int, aten._softmax.default) and single_user(sm)):
            continue
        add = sm.args[0]
        if not is_op(add, aten.add.Tensor):
            continue
        mul, mask = add.args
        if not (is_op(mul, aten.mul.Tensor) and isinstance(mul.args[1], float)):
            continue
        mm = mul.args[0]
        if not is_op(mm, aten.matmul.default):
            continue
        q, kt = mm.args
        if not (is_op(kt, aten.transpose.int) and tuple(kt.args[1:]) == (2, 3)):
            continue
        with g.inserting_before(node):
            new = insert(g, op("torch_attention_sdpa"), (q, kt.args[0], v, mask, mul.args[1]))
        replace(node, new, [sm, add, mul, mm, kt])
        n += 1
    _graph_changed(gm)
    return n


def match_grouped_attention(gm: fx.GraphModule, k: Knobs) -> int:
    """``torch_attention_sdpa(q, repeat_kv(k), repeat_kv(v))`` -> ``torch_attention(q, k, v)`` (GQA)."""
    n = 0
    g = gm.graph
    rkv = op("torch_repeat_kv")
    for node in list(g.nodes):
        if not is_op(node, op("torch_attention_sdpa")):
            continue
        q, kk, vv, mask, scale = node.args
        if not (is_op(kk, rkv) and is_op(vv, rkv)):
            continue
        with g.inserting_before(node):
            new = insert(g, op("torch_attention"), (q, kk.args[0], vv.args[0], mask, scale))
        replace(node, new, [kk, vv])
        n += 1
    _graph_changed(gm)
    return n


def _is_bnsd(v: object) -> bool:
    """Shape check used by the layout matchers: 4-D with a static head dim at position 1."""
    return isinstance(v, torch.Tensor) and v.dim() == 4 and isinstance(v.shape[1], int) and not isinstance(
        v.shape[2], int
    )


def match_attention_layout(gm: fx.GraphModule, k: Knobs) -> int:
    """Move ``torch_attention`` from bnsd to bsnd: only where q/k/v ``meta["val"]`` prove bnsd layout."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, op("torch_attention")):
            continue
        q, kk, vv, mask, scale = node.args
        if not all(_is_bnsd(val(x)) for x in (q, kk, vv)):
            continue  # no or unexpected shape metadata: cannot prove the layout, leave it
        with g.inserting_before(node):
            qt, kt, vt = (insert(g, aten.transpose.int, (x, 1, 2)) for x in (q, kk, vv))
            att = insert(g, op("torch_attention_bsnd"), (qt, kt, vt, mask, scale))
            out = insert(g, aten.transpose.int, (att, 1, 2))
        replace(node, out, [])
        n += 1
    _graph_changed(gm)
    return n


def _rotate_half_source(cat: fx.Node) -> fx.Node | None:
    """Return x if ``cat`` is ``cat([-x2, x1], -1)`` with ``x1, x2 = split_with_sizes(x, [h, h], -1)``."""
    if not (is_op(cat, aten.cat.default) and cat.args[1] in (-1, 3)):
        return None
    parts = cat.args[0]
    if len(parts) != 2 or not is_op(parts[0], aten.neg.default):
        return None
    x2, x1 = parts[0].args[0], parts[1]
    if not (is_op(x1, getitem) and is_op(x2, getitem) and x1.args[1] == 0 and x2.args[1] == 1):
        return None
    sp = x1.args[0]
    if sp is not x2.args[0] or not is_op(sp, aten.split_with_sizes.default):
        return None
    return sp.args[0]


def match_rope_pattern(gm: fx.GraphModule, k: Knobs) -> int:
    """``x * cos + rotate_half(x) * sin`` -> ``torch_rope(x, cos, sin)`` (one match per q and per k)."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, aten.add.Tensor):
            continue
        a, b = node.args
        if not (is_op(a, aten.mul.Tensor) and is_op(b, aten.mul.Tensor)):
            continue
        x, cos = a.args
        cat, sin = b.args
        if _rotate_half_source(cat) is not x:
            continue
        drop = k.rope_drop_meta_k and n % 2 == 1
        with g.inserting_before(node):
            new = insert(g, op("torch_rope"), (x, cos, sin), meta=not drop)
        sp = cat.args[0][1].args[0]
        replace(node, new, [a, b, cat, *cat.args[0], cat.args[0][0].args[0], sp])
        n += 1
    _graph_changed(gm)
    return n


def match_rope_layout(gm: fx.GraphModule, k: Knobs) -> int:
    """Run rope in bsnd layout: only where the rope node's ``meta["val"]`` proves bnsd layout."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, op("torch_rope")) or not _is_bnsd(val(node)):
            continue
        x, cos, sin = node.args
        with g.inserting_before(node):
            xt = insert(g, aten.transpose.int, (x, 1, 2))
            r = insert(g, op("torch_rope_bsnd"), (xt, cos, sin))
            out = insert(g, aten.transpose.int, (r, 1, 2))
        replace(node, out, [])
        n += 1
    _graph_changed(gm)
    return n


def match_rmsnorm_pattern(gm: fx.GraphModule, k: Knobs) -> int:
    """``w * (x * rsqrt(mean(x^2, -1, keepdim) + eps))`` -> ``torch_rmsnorm(x, w, eps)``."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, aten.mul.Tensor):
            continue
        w, inner = node.args
        if w.op != "get_attr":
            continue
        if is_op(inner, aten.mul.Tensor):
            x, rs = inner.args
            if not is_op(rs, aten.rsqrt.default):
                continue
            add = rs.args[0]
            chain = [inner, rs]
        elif k.rmsnorm_accepts_sqrt_div and is_op(inner, aten.div.Tensor):
            x, sq = inner.args
            if not is_op(sq, aten.sqrt.default):
                continue
            add = sq.args[0]
            chain = [inner, sq]
        else:
            continue
        if not (is_op(add, aten.add.Tensor) and isinstance(add.args[1], float)):
            continue
        mean = add.args[0]
        if not (is_op(mean, aten.mean.dim) and list(mean.args[1]) == [-1]):
            continue
        pw = mean.args[0]
        if not (is_op(pw, aten.pow.Tensor_Scalar) and pw.args[0] is x and pw.args[1] == 2):
            continue
        with g.inserting_before(node):
            new = insert(g, op("torch_rmsnorm"), (x, w, add.args[1]))
        replace(node, new, [*chain, add, mean, pw])
        n += 1
    _graph_changed(gm)
    return n


def _linears() -> tuple[object, ...]:
    return (aten.linear.default, op("torch_fake_quant_fp8_linear"))


def match_swiglu_pattern(gm: fx.GraphModule, k: Knobs) -> int:
    """``silu(linear(x, wg)) * linear(x, wu)`` -> ``torch_swiglu(x, wg, wu)`` (operand order as exported)."""
    n = 0
    g = gm.graph
    acts = (aten.silu.default, aten.gelu.default) if k.swiglu_accepts_gelu else (aten.silu.default,)
    for node in list(g.nodes):
        if not is_op(node, aten.mul.Tensor):
            continue
        s, up = node.args
        if not (is_op(s, *acts) and is_op(up, *_linears()) and single_user(s)):
            continue
        gate = s.args[0]
        if not (is_op(gate, *_linears()) and gate.args[0] is up.args[0] and single_user(gate)):
            continue
        with g.inserting_before(node):
            new = insert(g, op("torch_swiglu"), (up.args[0], gate.args[1], up.args[1]))
        replace(node, new, [s, up, gate])
        n += 1
    _graph_changed(gm)
    return n


def quantize_fp8_linear_from_config(gm: fx.GraphModule, k: Knobs) -> int:
    """(FP8 checkpoint) every decoder linear -> ``torch_fake_quant_fp8_linear`` (the lm_head stays)."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_op(node, aten.linear.default) or len(node.args) != 2:
            continue
        w = node.args[1]
        if not (isinstance(w, fx.Node) and str(w.target).startswith("model.layers.")):
            continue
        with g.inserting_before(node):
            new = insert(g, op("torch_fake_quant_fp8_linear"), (node.args[0], w))
        replace(node, new, [])
        n += 1
    _graph_changed(gm)
    return n


# ---------------------------------------------------------------- post_load_fusion / cache_init
def fuse_rmsnorm(gm: fx.GraphModule, k: Knobs) -> int:
    """``torch_rmsnorm`` -> ``flashinfer_rmsnorm`` (except the norms ``k.fuse_rmsnorm_keeps`` names)."""
    n = 0
    g = gm.graph
    for node in list(g.nodes):
        if is_op(node, op("torch_rmsnorm")) and not str(node.args[1].target).startswith(k.fuse_rmsnorm_keeps):
            with g.inserting_before(node):
                new = insert(g, op("flashinfer_rmsnorm"), node.args)
            replace(node, new, [])
            n += 1
    _graph_changed(gm)
    return n


def insert_cached_attention(gm: fx.GraphModule, k: Knobs) -> int:
    """``torch_attention_bsnd`` -> ``cached_attention`` reading per-layer k/v cache buffers."""
    n = 0
    g = gm.graph
    first_attr = next(nd for nd in g.nodes if nd.op == "get_attr")
    for node in list(g.nodes):
        if not is_op(node, op("torch_attention_bsnd")):
            continue
        q, kk, vv, _mask, scale = node.args
        kv = val(kk)
        mode = torch._guards.detect_fake_mode([kv])
        caches = []
        for kind in ("k", "v"):
            name = f"{kind}_cache_{n}"
            real = torch.zeros((1, 64, int(kv.shape[2]), int(kv.shape[3])), dtype=kv.dtype)
            gm.register_buffer(name, real)
            with g.inserting_before(first_attr):
                attr = g.get_attr(name)
            attr.meta["val"] = mode.from_tensor(real, static_shapes=True)
            caches.append(attr)
        with g.inserting_before(node):
            new = insert(g, op("cached_attention"), (q, kk, vv, caches[0], caches[1], scale))
        replace(node, new, [])
        n += 1
    _graph_changed(gm)
    return n


Transform = Callable[[fx.GraphModule, Knobs], int]

#: Transforms that really rewrite the graph. Everything else is pass-through.
REWRITES: dict[str, Transform] = {
    "fuse_gemms": fuse_gemms,
    "detect_sharding": detect_sharding,
    "sharding_transform_executor": sharding_transform_executor,
    "cleanup_noop_slice": cleanup_noop_slice,
    "cleanup_input_constraints": cleanup_input_constraints,
    "cleanup_canonicalize_graph": cleanup_canonicalize_graph,
    "match_repeat_kv": match_repeat_kv,
    "match_eager_attention": match_eager_attention,
    "match_grouped_attention": match_grouped_attention,
    "match_attention_layout": match_attention_layout,
    "match_rope_pattern": match_rope_pattern,
    "match_rope_layout": match_rope_layout,
    "match_rmsnorm_pattern": match_rmsnorm_pattern,
    "match_swiglu_pattern": match_swiglu_pattern,
    "quantize_fp8_linear_from_config": quantize_fp8_linear_from_config,
    "fuse_rmsnorm": fuse_rmsnorm,
    "insert_cached_attention": insert_cached_attention,
}
