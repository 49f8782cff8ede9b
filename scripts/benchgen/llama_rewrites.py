"""The rewrites AD's default pipeline applies to the Llama export graph of :mod:`benchgen.llama_graph`,
one function per transform key: each edits the graph in place and returns its match count (what the log's
``[SUMMARY]`` line says). The injected loss (``Llama.loss``) makes one pattern instance go unmatched.
"""

from __future__ import annotations

from collections.abc import Callable

from .llama_graph import Layer, Llama
from .textfx import BF16, I32, Node


def _lost(m: Llama, kind: str, li: int) -> bool:
    return m.loss is not None and m.loss.kind == kind and m.loss.layer == li


def cleanup_noop_slice(m: Llama) -> int:
    """Slices over a whole dimension go: their users read the input."""
    for s in m.noop_slices:
        src = s.args[0]
        assert isinstance(src, Node)
        m.g.replace(s, src, [])
    return len(m.noop_slices)


def cleanup_input_constraints(m: Llama) -> int:
    """The export's ``_guards_fn`` call goes."""
    m.g.erase(m.guards)
    return 1


def match_repeat_kv(m: Llama) -> int:
    """``unsqueeze/expand/reshape`` -> ``torch_repeat_kv`` (k and v of every layer)."""
    sh, n = m.shape, 0
    for li, L in enumerate(m.layers):
        for r, chain in enumerate(L.repeat):
            if r == 0 and _lost(m, "repeat_kv", li):  # the lost match: this layer's k keeps its three nodes
                continue
            un, _, rs = chain
            new = m.g.before(rs).call(
                "auto_deploy.torch_repeat_kv.default",
                [un.args[0], str(sh.heads // sh.kv_heads)],
                sh.bnsd(sh.heads),
            )
            m.g.replace(rs, new, chain)
            chain[:] = [new]
            n += 1
    return n


def match_eager_attention(m: Llama) -> int:
    """``matmul/mul/add/softmax/cast/dropout/matmul`` -> ``torch_attention_sdpa``."""
    sh = m.shape
    for L in m.layers:
        kt, qk, sc, am, *_, av = L.attn
        q, k, v = qk.args[0], kt.args[0], av.args[1]
        assert isinstance(q, Node)
        assert isinstance(k, Node)
        assert isinstance(v, Node)
        new = m.g.before(av).call(
            "auto_deploy.torch_attention_sdpa.default",
            [q, k, v, m.mask[-1], "0.0", "False", str(sc.args[1])],
            sh.bnsd(sh.heads),
        )
        m.g.replace(av, new, L.attn)
        L.fused["attention"] = new
    return len(m.layers)


def _swap_attention(m: Llama, target: str, args: Callable[[Layer, Node], list], shape: str,
                    skip: Callable[[Layer], bool] = lambda L: False) -> int:
    n = 0
    for L in m.layers:
        if skip(L):
            continue
        n += 1
        old = L.fused["attention"]
        new = m.g.before(old).call(target, args(L, old), shape)
        m.g.replace(old, new, [x for chain in L.repeat for x in chain])
        L.fused["attention"] = new
    return n


def match_sdpa_to_torch_attention(m: Llama) -> int:
    """``torch_attention_sdpa`` -> ``torch_attention`` (same arguments)."""
    return _swap_attention(
        m, "auto_deploy.torch_attention.default", lambda L, old: list(old.args), m.shape.bnsd(m.shape.heads)
    )


def match_grouped_attention(m: Llama) -> int:
    """``torch_attention(q, repeat_kv(k), repeat_kv(v))`` -> ``torch_attention(q, k, v)``."""

    def args(L: Layer, old: Node) -> list:
        k, v = (c[0].args[0] for c in L.repeat)
        return [old.args[0], k, v, *old.args[3:]]

    # A layer whose repeat_kv was not matched has no torch_repeat_kv to fold: the pattern does not match there
    # (its unsqueeze/expand/reshape stays to the end of the pipeline).
    return _swap_attention(m, "auto_deploy.torch_attention.default", args, m.shape.bnsd(m.shape.heads),
                           skip=lambda L: any(len(chain) > 1 for chain in L.repeat))


def match_attention_layout(m: Llama) -> int:
    """BNSD attention -> transposes to BSND, ``torch_attention_bsnd``, transpose back."""
    sh = m.shape
    for L in m.layers:
        old = L.fused["attention"]
        g = m.g.before(old)
        ins = []
        for a, heads in zip(old.args[:3], (sh.heads, sh.kv_heads, sh.kv_heads), strict=True):
            assert isinstance(a, Node)
            ins.append(g.call("aten.transpose.int", [a, "1", "2"], sh.bsnd(heads)))
        att = g.call("auto_deploy.torch_attention_bsnd.default", [*ins, *old.args[3:]], sh.bsnd(sh.heads))
        back = g.call("aten.transpose.int", [att, "1", "2"], sh.bnsd(sh.heads))
        m.g.replace(old, back, [])
        L.fused["attention"] = att
    return len(m.layers)


def match_rope_pattern(m: Llama) -> int:
    """Both rotate-half chains of a layer -> one ``torch_rope_with_explicit_cos_sin`` (q, k) and getitems."""
    sh, n = m.shape, 0
    for li, L in enumerate(m.layers):
        if _lost(m, "rope", li):
            continue
        rq, rk = L.rope
        g = m.g.before(rk[-1])
        rope = g.call(
            "auto_deploy.torch_rope_with_explicit_cos_sin.default",
            [L.q_t, L.k_t, L.cos_u, L.sin_u, "1"],
            f"({sh.bnsd(sh.heads)}, {sh.bnsd(sh.kv_heads)})",
            f"({BF16}, {BF16})",
            as_arg="? : tuple",
        )
        q = g.call("<built-in function getitem>", [rope, "0"], sh.bnsd(sh.heads))
        k = g.call("<built-in function getitem>", [rope, "1"], sh.bnsd(sh.kv_heads))
        m.g.replace(rq[-1], q, rq)
        m.g.replace(rk[-1], k, rk)
        L.fused["rope"] = rope
        n += 1
    return n


def _rope_rewrite(m: Llama, L: Layer, target: str, args: list, q_in: Node, k_in: Node, back: bool) -> None:
    """Replace layer ``L``'s rope op and its two getitems by ``target(*args)`` and new getitems (transposed
    back to BNSD when ``back``); whatever died with them goes."""
    sh, old = m.shape, L.fused["rope"]
    gets = sorted(old.users, key=lambda u: str(u.args[1]))
    g = m.g.before(gets[-1])
    rope = g.call(target, args, f"({q_in.shape}, {k_in.shape})", f"({BF16}, {BF16})", as_arg="? : tuple")
    q = g.call("<built-in function getitem>", [rope, "0"], q_in.shape)
    k = g.call("<built-in function getitem>", [rope, "1"], k_in.shape)
    if back:
        q = g.call("aten.transpose.int", [q, "1", "2"], sh.bnsd(sh.heads))
        k = g.call("aten.transpose.int", [k, "1", "2"], sh.bnsd(sh.kv_heads))
    m.g.replace(gets[0], q, [])
    m.g.replace(gets[1], k, [old, L.cos_u, L.sin_u])
    L.fused["rope"] = rope


def match_rope_layout(m: Llama) -> int:
    """RoPE in BNSD -> transposes to BSND around a ``torch_rope_with_explicit_cos_sin`` with unsqueeze_dim 2
    reading cos/sin directly (the per-layer unsqueezes die)."""
    sh, n = m.shape, 0
    for L in m.layers:
        if "rope" not in L.fused:
            continue
        g = m.g.before(L.fused["rope"])
        tq = g.call("aten.transpose.int", [L.q_t, "1", "2"], sh.bsnd(sh.heads))
        tk = g.call("aten.transpose.int", [L.k_t, "1", "2"], sh.bsnd(sh.kv_heads))
        _rope_rewrite(
            m,
            L,
            "auto_deploy.torch_rope_with_explicit_cos_sin.default",
            [tq, tk, m.cos, m.sin, "2"],
            tq,
            tk,
            back=True,
        )
        n += 1
    return n


def eliminate_redundant_transposes(m: Llama) -> int:
    """``transpose(transpose(x, 1, 2), 1, 2)`` -> ``x`` wherever the pair appears."""
    n = 0
    for t in list(m.g.nodes):
        inner = (
            t.args[0] if t.alive and t.target == "aten.transpose.int" and t.args[1:] == ["1", "2"] else None
        )
        if isinstance(inner, Node) and inner.target == "aten.transpose.int" and inner.args[1:] == ["1", "2"]:
            src = inner.args[0]
            assert isinstance(src, Node)
            m.g.replace(t, src, [inner])
            n += 1
    return n


def match_rmsnorm_pattern(m: Llama) -> int:
    """Each upcast RMSNorm chain -> ``torch_rmsnorm(x, weight, eps)``."""
    chains = [(li, i, c) for li, L in enumerate(m.layers) for i, c in enumerate(L.norms)]
    chains.append((len(m.layers), 0, m.final_norm))
    n = 0
    for li, i, chain in chains:
        if i == 1 and _lost(m, "rmsnorm", li):
            continue
        x, wt = chain[0].args[0], chain[-1].args[0]
        new = m.g.before(chain[-1]).call(
            "auto_deploy.torch_rmsnorm.default", [x, wt, "1e-05"], chain[-1].shape
        )
        m.g.replace(chain[-1], new, chain)
        chain[:] = [new]
        n += 1
    return n


def match_swiglu_pattern(m: Llama) -> int:
    """``silu(gate(x)) * up(x)`` -> ``torch_swiglu(x, gate_w, up_w)`` (the down projection stays)."""
    sh, n = m.shape, 0
    for li, L in enumerate(m.layers):
        if _lost(m, "swiglu", li):
            continue
        gate, _, up, mu = L.mlp
        new = m.g.before(mu).call(
            "auto_deploy.torch_swiglu.default", [gate.args[0], gate.args[1], up.args[1]], sh.act(sh.inter)
        )
        m.g.replace(mu, new, L.mlp)
        n += 1
    return n


def fuse_rmsnorm(m: Llama) -> int:
    """``torch_rmsnorm`` -> ``flashinfer_rmsnorm``."""
    olds = m.g.find("auto_deploy.torch_rmsnorm.default")
    for old in olds:
        m.g.replace(
            old, m.g.before(old).call("auto_deploy.flashinfer_rmsnorm.default", list(old.args), old.shape), []
        )
    return len(olds)


def optimize_rope(m: Llama) -> int:
    """``torch_rope_with_explicit_cos_sin`` -> ``flashinfer_rope`` over one cos/sin cache built once."""
    sh, half, n = m.shape, m.shape.head_dim // 2, 0
    anchor = m.g.nodes[m.g.nodes.index(m.sin) + 1]
    g = m.g.before(anchor)
    parts: list[Node | str] = [
        g.call("aten.slice.Tensor", [t, "-1", "0", str(half)], f"{sh.batch}x{sh.seq}x{half}")
        for t in (m.cos, m.sin)
    ]
    cache = g.call("aten.cat.default", [parts, "-1"], f"{sh.batch}x{sh.seq}x{sh.head_dim}")
    for L in m.layers:
        if "rope" not in L.fused:
            continue
        q_in, k_in = L.fused["rope"].args[:2]
        assert isinstance(q_in, Node)
        assert isinstance(k_in, Node)
        _rope_rewrite(
            m,
            L,
            "auto_deploy.flashinfer_rope.default",
            [q_in, k_in, m.pos, cache, "True"],
            q_in,
            k_in,
            back=False,
        )
        n += 1
    return n


def insert_cached_attention(m: Llama) -> int:
    """``torch_attention_bsnd`` -> ``cached_attention`` over per-layer k/v cache inputs and the sequence
    metadata inputs; the causal mask dies."""
    sh, g = m.shape, m.g
    meta = [
        g.placeholder(name, shape, I32)
        for name, shape in (
            ("batch_info_host", "3"),
            ("cu_seqlen", "s52"),
            ("input_pos", "s77"),
            ("cache_loc", "s91"),
            ("pages_per_seq", "s77"),
        )
    ]
    cache = f"s103x32x{sh.kv_heads}x{sh.head_dim}"
    for li, L in enumerate(m.layers):
        kc, vc = g.placeholder(f"k_cache_{li}", cache, BF16), g.placeholder(f"v_cache_{li}", cache, BF16)
        old = L.fused["attention"]
        new = g.before(old).call(
            "auto_deploy.cached_attention.default", [*old.args[:3], *meta, kc, vc, old.args[-1]], old.shape
        )
        g.replace(old, new, [])
        L.fused["attention"] = new
    g.erase_dead(m.mask)
    return len(m.layers)


def compile_model(m: Llama) -> int:
    """The compiled wrapper holds the GraphModule as ``model``: the section is named after it."""
    m.g.module_name = "model"
    return 1


#: Transforms that change the graph, by key; each returns its match count.
REWRITES: dict[str, Callable[[Llama], int]] = {
    f.__name__: f
    for f in (
        cleanup_noop_slice,
        cleanup_input_constraints,
        match_repeat_kv,
        match_eager_attention,
        match_sdpa_to_torch_attention,
        match_grouped_attention,
        match_attention_layout,
        match_rope_pattern,
        match_rope_layout,
        eliminate_redundant_transposes,
        match_rmsnorm_pattern,
        match_swiglu_pattern,
        fuse_rmsnorm,
        optimize_rope,
        insert_cached_attention,
        compile_model,
    )
}
