"""The graph of a Llama-3-70B-shaped decoder as ``torch.export`` gives it for a Hugging Face model in bf16,
built on :mod:`benchgen.textfx` (no torch); :mod:`benchgen.llama_rewrites` replays AD's transforms on it.

Export graph (per layer, 66 nodes; batch and sequence dynamic): RMSNorm with the fp32 upcast (``to``,
``pow``, ``mean``, ``add``, ``rsqrt``, ``mul``, ``to``, weight ``mul``), q/k/v projections, views and BNSD
transposes, the rotate-half RoPE (slices, ``neg``, ``cat``), ``repeat_kv`` (``unsqueeze``/``expand``/
``reshape``), eager attention with an fp32 softmax and an eval-mode ``dropout``, ``contiguous``, o
projection, residual adds, SwiGLU MLP. Prologue: the rotary embedding (``inv_freq[None, :, None]`` leaves a
no-op slice), the causal mask, ``_guards_fn``; epilogue: final norm, a no-op slice before the LM head.
Node forms as torch.export of a bf16 module prints them (``aten.to.dtype``, ``aten.dropout.default``,
``aten.contiguous.default``, ``aten.softmax.int`` with its dtype), checked against torch 2.13.

Each transform returns its match count (what the log's ``[SUMMARY]`` says) and leaves FX-style names:
surviving nodes keep theirs, new nodes take the next counter of their base. The forms follow the tiny-model
fixtures (``scripts/fixturegen/transforms.py``) and upstream AD op names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .textfx import BF16, F32, I64, Graph, Node

MAX = "9223372036854775807"


@dataclass(frozen=True)
class LlamaShape:
    """Model dimensions (Llama-3-70B by default) and the symbolic sequence length of the export."""

    hidden: int = 8192
    heads: int = 64
    kv_heads: int = 8
    head_dim: int = 128
    inter: int = 28672
    vocab: int = 128256
    batch: str = "s72"
    seq: str = "s44"

    def act(self, d: int) -> str:
        """``batch x seq x d``."""
        return f"{self.batch}x{self.seq}x{d}"

    def bnsd(self, n: int) -> str:
        """Attention layout batch, heads, seq, head_dim."""
        return f"{self.batch}x{n}x{self.seq}x{self.head_dim}"

    def bsnd(self, n: int) -> str:
        """Attention layout batch, seq, heads, head_dim."""
        return f"{self.batch}x{self.seq}x{n}x{self.head_dim}"


@dataclass(frozen=True)
class Loss:
    """The injected match loss: the pattern ``kind`` (``rmsnorm``, ``repeat_kv``, ``rope`` or ``swiglu``) is
    not matched in layer ``layer`` (for ``rmsnorm``: that layer's post-attention norm; for ``repeat_kv``: its
    k repeat)."""

    kind: str
    layer: int


@dataclass
class Layer:
    """Handles on one decoder layer's nodes, kept current by the rewrites that later rewrites need."""

    norms: list[list[Node]]
    q_t: Node
    k_t: Node
    v_t: Node
    cos_u: Node
    sin_u: Node
    rope: list[list[Node]]
    """q and k rotate-half chains; the last node of each is the rotated tensor."""
    repeat: list[list[Node]]
    attn: list[Node]
    """transpose(k), matmul, scale, mask add, softmax, cast, dropout, matmul(v)."""
    mlp: list[Node]
    """gate linear, silu, up linear, mul."""
    fused: dict[str, Node] = field(default_factory=dict)
    """Nodes the rewrites made (``attention``, ``rope``)."""


@dataclass
class Llama:
    """The graph and its handles."""

    g: Graph
    shape: LlamaShape
    layers: list[Layer]
    noop_slices: list[Node]
    guards: Node
    pos: Node
    sym: Node
    cos: Node
    sin: Node
    mask: list[Node]
    final_norm: list[Node]
    loss: Loss | None


def _norm(g: Graph, x: Node, weight: Node, sh: LlamaShape) -> list[Node]:
    a, r = sh.act(sh.hidden), sh.act(1)
    up = g.call("aten.to.dtype", [x, F32], a, F32)
    p = g.call("aten.pow.Tensor_Scalar", [up, "2"], a, F32)
    m = g.call("aten.mean.dim", [p, "[-1]", "True"], r, F32)
    e = g.call("aten.add.Tensor", [m, "1e-05"], r, F32)
    rs = g.call("aten.rsqrt.default", [e], r, F32)
    mu = g.call("aten.mul.Tensor", [up, rs], a, F32)
    down = g.call("aten.to.dtype", [mu, BF16], a)
    return [up, p, m, e, rs, mu, down, g.call("aten.mul.Tensor", [weight, down], a)]


def _rope_chain(g: Graph, x: Node, cos: Node, sin: Node, n: int, sh: LlamaShape) -> list[Node]:
    half = sh.head_dim // 2
    full, part = sh.bnsd(n), f"{sh.batch}x{n}x{sh.seq}x{half}"
    m1 = g.call("aten.mul.Tensor", [x, cos], full)
    s1 = g.call("aten.slice.Tensor", [x, "3", "0", str(half)], part)
    s2 = g.call("aten.slice.Tensor", [x, "3", str(half), MAX], part)
    ng = g.call("aten.neg.default", [s2], part)
    c = g.call("aten.cat.default", [[ng, s1], "-1"], full)
    m2 = g.call("aten.mul.Tensor", [c, sin], full)
    return [m1, s1, s2, ng, c, m2, g.call("aten.add.Tensor", [m1, m2], full)]


def export(layers: int, sh: LlamaShape = LlamaShape(), loss: Loss | None = None) -> Llama:
    """The graph ``export_to_gm`` dumps."""
    g = Graph()
    w = g.weight
    b, s, half = sh.batch, sh.seq, sh.head_dim // 2
    ids = g.placeholder("input_ids", f"{b}x{s}", I64)
    pos = g.placeholder("position_ids", f"{b}x{s}", I64)
    guards = g.call("_guards_fn", [ids, pos], "?", "N/A")
    # torch.export's counters do not start at 0: the nodes it traced away took the first names
    sym_b = g.call("aten.sym_size.int", [ids, "0"], "?", "SymInt", base="sym_size_int_4")
    sym = g.call("aten.sym_size.int", [ids, "1"], "?", "SymInt", base="sym_size_int_5")
    x = g.call(
        "aten.embedding.default",
        [w("model_embed_tokens_weight", f"{sh.vocab}x{sh.hidden}"), ids],
        sh.act(sh.hidden),
    )
    u0 = g.call(
        "aten.unsqueeze.default", [w("model_rotary_emb_inv_freq", str(half), F32), "0"], f"1x{half}", F32
    )
    noop = g.call("aten.slice.Tensor", [u0, "1", "0", MAX], f"1x{half}", F32)
    u1 = g.call("aten.unsqueeze.default", [noop, "2"], f"1x{half}x1", F32)
    f1 = g.call("aten.to.dtype", [u1, F32], f"1x{half}x1", F32)
    ex = g.call("aten.expand.default", [f1, [sym_b, "-1", "1"]], f"{b}x{half}x1", F32)
    u2 = g.call("aten.unsqueeze.default", [pos, "1"], f"{b}x1x{s}", I64)
    pf = g.call("aten.to.dtype", [u2, F32], f"{b}x1x{s}", F32)
    mm = g.call("aten.matmul.default", [ex, pf], f"{b}x{half}x{s}", F32)
    fr = g.call("aten.transpose.int", [mm, "1", "2"], f"{b}x{s}x{half}", F32)
    emb = g.call("aten.cat.default", [[fr, fr], "-1"], f"{b}x{s}x{sh.head_dim}", F32)
    trig = []
    for fn in ("cos", "sin"):
        t = g.call(f"aten.{fn}.default", [emb], f"{b}x{s}x{sh.head_dim}", F32)
        trig.append(g.call("aten.mul.Tensor", [t, "1.0"], f"{b}x{s}x{sh.head_dim}", F32))
    cos, sin = (g.call("aten.to.dtype", [t, BF16], f"{b}x{s}x{sh.head_dim}") for t in trig)
    full = g.call("aten.full.default", [[sym, sym], "-inf"], f"{s}x{s}")
    mask = g.call("aten.triu.default", [full, "1"], f"{s}x{s}")
    kv_dim, rep = sh.kv_heads * sh.head_dim, sh.heads // sh.kv_heads
    out: list[Layer] = []
    for li in range(layers):
        p = f"model_layers_{li}_"
        n1 = _norm(g, x, w(p + "input_layernorm_weight", str(sh.hidden)), sh)
        h = n1[-1]
        views = []
        for proj, dim, heads in (
            ("q", sh.hidden, sh.heads),
            ("k", kv_dim, sh.kv_heads),
            ("v", kv_dim, sh.kv_heads),
        ):
            lin = g.call(
                "aten.linear.default",
                [h, w(f"{p}self_attn_{proj}_proj_weight", f"{dim}x{sh.hidden}")],
                sh.act(dim),
            )
            vw = g.call("aten.view.default", [lin, [sym_b, sym, "-1", str(sh.head_dim)]], sh.bsnd(heads))
            views.append(g.call("aten.transpose.int", [vw, "1", "2"], sh.bnsd(heads)))
        q_t, k_t, v_t = views
        cu = g.call("aten.unsqueeze.default", [cos, "1"], f"{b}x1x{s}x{sh.head_dim}")
        su = g.call("aten.unsqueeze.default", [sin, "1"], f"{b}x1x{s}x{sh.head_dim}")
        rq = _rope_chain(g, q_t, cu, su, sh.heads, sh)
        rk = _rope_chain(g, k_t, cu, su, sh.kv_heads, sh)
        repeat = []
        for src in (rk[-1], v_t):
            un = g.call("aten.unsqueeze.default", [src, "2"], f"{b}x{sh.kv_heads}x1x{s}x{sh.head_dim}")
            e = g.call(
                "aten.expand.default",
                [un, [sym_b, str(sh.kv_heads), str(rep), sym, str(sh.head_dim)]],
                f"{b}x{sh.kv_heads}x{rep}x{s}x{sh.head_dim}",
            )
            repeat.append(
                [
                    un,
                    e,
                    g.call(
                        "aten.reshape.default",
                        [e, [sym_b, str(sh.heads), sym, str(sh.head_dim)]],
                        sh.bnsd(sh.heads),
                    ),
                ]
            )
        scores = f"{b}x{sh.heads}x{s}x{s}"
        kt = g.call("aten.transpose.int", [repeat[0][-1], "2", "3"], f"{b}x{sh.heads}x{sh.head_dim}x{s}")
        qk = g.call("aten.matmul.default", [rq[-1], kt], scores)
        sc = g.call("aten.mul.Tensor", [qk, str(sh.head_dim**-0.5)], scores)
        am = g.call("aten.add.Tensor", [sc, mask], scores)
        sm = g.call("aten.softmax.int", [am, "-1", F32], scores, F32)
        smb = g.call("aten.to.dtype", [sm, BF16], scores)
        dr = g.call("aten.dropout.default", [smb, "0.0", "False"], scores)
        av = g.call("aten.matmul.default", [dr, repeat[1][-1]], sh.bnsd(sh.heads))
        ot = g.call("aten.transpose.int", [av, "1", "2"], sh.bsnd(sh.heads))
        ct = g.call("aten.contiguous.default", [ot], sh.bsnd(sh.heads))
        r = g.call("aten.reshape.default", [ct, [sym_b, sym, "-1"]], sh.act(sh.hidden))
        o = g.call(
            "aten.linear.default",
            [r, w(p + "self_attn_o_proj_weight", f"{sh.hidden}x{sh.hidden}")],
            sh.act(sh.hidden),
        )
        x = g.call("aten.add.Tensor", [x, o], sh.act(sh.hidden))
        n2 = _norm(g, x, w(p + "post_attention_layernorm_weight", str(sh.hidden)), sh)
        h2 = n2[-1]
        gate = g.call(
            "aten.linear.default",
            [h2, w(p + "mlp_gate_proj_weight", f"{sh.inter}x{sh.hidden}")],
            sh.act(sh.inter),
        )
        si = g.call("aten.silu.default", [gate], sh.act(sh.inter))
        up = g.call(
            "aten.linear.default",
            [h2, w(p + "mlp_up_proj_weight", f"{sh.inter}x{sh.hidden}")],
            sh.act(sh.inter),
        )
        mu = g.call("aten.mul.Tensor", [si, up], sh.act(sh.inter))
        dn = g.call(
            "aten.linear.default",
            [mu, w(p + "mlp_down_proj_weight", f"{sh.hidden}x{sh.inter}")],
            sh.act(sh.hidden),
        )
        x = g.call("aten.add.Tensor", [x, dn], sh.act(sh.hidden))
        out.append(
            Layer(
                [n1, n2],
                q_t,
                k_t,
                v_t,
                cu,
                su,
                [rq, rk],
                repeat,
                [kt, qk, sc, am, sm, smb, dr, av],
                [gate, si, up, mu],
            )
        )
    nf = _norm(g, x, w("model_norm_weight", str(sh.hidden)), sh)
    last = g.call("aten.slice.Tensor", [nf[-1], "1", "0", MAX], sh.act(sh.hidden))
    g.output(
        g.call(
            "aten.linear.default", [last, w("lm_head_weight", f"{sh.vocab}x{sh.hidden}")], sh.act(sh.vocab)
        )
    )
    return Llama(g, sh, out, [noop, last], guards, pos, sym, cos, sin, [full, mask], nf, loss)
