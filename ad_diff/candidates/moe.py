"""Find unfused mixture-of-experts blocks: a router feeding per-expert GEMMs, one block per router.

A **router** is a ``topk`` whose input chain (pointwise, reduction and layout ops only, at most
:data:`ROUTER_DEPTH` steps) reaches a GEMM, with a ``softmax`` or ``sigmoid`` on that chain or on the
``topk`` values (``linear -> softmax -> topk``, ``linear -> sigmoid -> add -> topk``, ``linear -> topk ->
sigmoid``). The GEMM's first input is the block's hidden state ``H``.

The **block** of router ``r`` grows in one pass in dump order: a node joins it when it reads a node of the
block and every other tensor it reads descends from ``H`` or is a constant (``zeros``, ``full``; parameters
and symbolic sizes are ignored). The residual add that closes the layer reads the residual stream, which is
an ancestor of ``H`` and not a descendant, so the block stops there; the next router starts its own block.
A node reading two blocks goes to the later one. A second pass, in reverse dump order, adds the descendants
of ``H`` whose every user is in the block (experts run on all tokens before the routing weights meet them).
Without a norm between the residual stream and the router (``H`` is the residual itself) nothing tells the
block's end apart: it then runs on to the next router.

A block is an **MoE** when, besides the router GEMM, it holds expert GEMMs: at least two (a per-expert loop,
``index`` / ``index_add_`` per expert) or one grouped GEMM (``bmm``, ``baddbmm``, ``_grouped_mm``,
``einsum``). Blocks holding a MoE op already (a name with ``moe`` in it) are matched, not candidates.
Everything is linear in the number of nodes and edges.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ad_diff.candidates.graphview import Section
from ad_diff.candidates.ops import ROUTING, canonical_target
from ad_diff.core import limits
from ad_diff.core.graphops import op_name

ROUTER_DEPTH = 8
"""Most ops between the router GEMM and the ``topk``."""
_SCORE = frozenset({"softmax", "_softmax", "sigmoid"})
_GROUPED = frozenset({"bmm", "baddbmm", "_grouped_mm", "einsum"})
_ACTS = frozenset({"silu", "gelu", "relu", "sigmoid", "tanh"})
_CHAIN_KINDS = frozenset({"elementwise", "reduction", "layout"})


@dataclass(frozen=True, slots=True)
class MoeBlock:
    """One unfused MoE block."""

    nodes: tuple[str, ...]
    """Every node of the block, dump order (router first)."""
    router: tuple[str, ...]
    """Router ops from the GEMM to the ``topk`` (canonical names)."""
    form: str
    """``per_expert_loop`` or ``grouped_gemm``."""
    expert_gemms: int
    experts: int | None
    """One ``index_add_`` per expert in a per-expert loop; ``None`` when the graph does not show it."""
    activations: tuple[str, ...]
    variant: tuple[str, ...] = ()
    """Router variant marks: ``bias`` (the router GEMM adds a bias), ``float32`` (logits cast before
    scoring), ``renormalised`` (top-k weights divided by their sum), ``routing: histc, sort, ...`` (token
    grouping ops of a grouped form)."""

    @property
    def signature(self) -> str:
        """Grouping key: the block's shape without node names (identical layers share it)."""
        marks = f" ({', '.join(self.variant)})" if self.variant else ""
        return (
            f"moe[{self.form}] router: {' -> '.join(self.router)}{marks}; experts: {self.experts or '?'}; "
            f"expert GEMMs: {self.expert_gemms}; activation: {', '.join(self.activations) or '-'}"
        )


def _data_input(s: Section, name: str) -> str | None:
    """First input of ``name`` that is data: not a parameter-derived value."""
    return next((i for i in s.inputs[name] if i not in s.param_derived), None)


def _router(s: Section, topk: str) -> tuple[str, list[str]] | None:
    """``(gemm, chain)`` of a router ending in ``topk``: ``chain`` runs from the GEMM to the ``topk`` (and
    to the score op when it comes after the ``topk``, on its values)."""
    chain = [topk]
    cur = _data_input(s, topk)
    for _ in range(ROUTER_DEPTH):
        if cur is None:
            return None
        if s.kinds[cur] == "gemm":
            chain.append(cur)
            chain.reverse()
            if any(op_name(s.nodes[n].target) in _SCORE for n in chain):
                return cur, chain
            after = [v for u in s.users[topk] for v in s.users[u] if op_name(s.nodes[v].target) in _SCORE]
            return (cur, [*chain, after[0]]) if after else None
        if s.kinds[cur] not in _CHAIN_KINDS:
            return None
        chain.append(cur)
        cur = _data_input(s, cur)
    return None


def find_moe(s: Section) -> list[MoeBlock]:
    """The unfused MoE blocks of one section, dump order."""
    routers: list[tuple[str, list[str]]] = []
    for name, node in s.nodes.items():
        if op_name(node.target) == "topk" and (found := _router(s, name)):
            routers.append(found)
    if not routers:
        return []
    hidden: dict[str, int] = {}
    owner: dict[str, int] = {}
    for i, (gemm, chain) in enumerate(routers):
        if (h := _data_input(s, gemm)) is not None:
            hidden.setdefault(h, i)
        for n in chain:
            owner.setdefault(n, i)
    below: dict[str, int] = {}  # node -> latest router whose H is an ancestor-or-self
    const: set[str] = set()
    for name in s.nodes:
        ins = [i for i in s.inputs[name] if s.kinds[i] != "symbolic"]
        b = max((below[i] for i in ins if i in below), default=-1)
        if name in hidden:
            b = max(b, hidden[name])
        if b >= 0:
            below[name] = b
        if s.kinds[name] not in ("input", "symbolic") and all(i in const for i in ins):
            const.add(name)
        if name in owner:
            continue
        mine = [owner[i] for i in ins if i in owner]
        if not mine:
            continue
        r = max(mine)
        if all(owner.get(i) == r or below.get(i, -1) >= r or i in const for i in ins):
            owner[name] = r
    # experts computed on every token before the routing weights meet them (a dense or stacked form): a
    # descendant of H whose every user is in the block joins it, in reverse dump order (H itself stays out)
    for name in reversed(list(s.nodes)):
        latest = below.get(name)
        if latest is None or name in owner or name in hidden or name in s.outputs:
            continue
        us = s.users[name]
        if us and all(owner.get(u) == latest for u in us):
            owner[name] = latest
    # weights reshaped, transposed or stacked for the experts (parameters, not data) go with the block that
    # alone reads them: a fused MoE op takes the weights as they are stored
    for name in reversed(list(s.nodes)):
        us = s.users[name]
        if name in s.param_derived and name not in owner and us and name not in s.outputs:
            first = owner.get(us[0])
            if first is not None and all(owner.get(u) == first for u in us):
                owner[name] = first
    blocks: list[list[str]] = [[] for _ in routers]
    for name, block_of in owner.items():
        blocks[block_of].append(name)
    out = []
    for (gemm, chain), members in zip(routers, blocks, strict=True):
        if block := _classify(s, gemm, chain, members):
            out.append(block)
    return out


def _classify(s: Section, gemm: str, chain: list[str], members: list[str]) -> MoeBlock | None:
    nodes = sorted(members, key=s.order.__getitem__)
    names = Counter(op_name(s.nodes[n].target) for n in nodes)
    if any("moe" in op for op in names):
        return None  # a MoE op is already in the graph: the block was matched
    gemms = [n for n in nodes if s.kinds[n] == "gemm" and n != gemm]
    grouped = any(op_name(s.nodes[n].target) in _GROUPED for n in gemms)
    if len(gemms) < 2 and not grouped:
        return None
    loop = names["index_add_"] or names["index_add"] or None
    return MoeBlock(
        nodes=tuple(nodes),
        router=tuple(canonical_target(s.nodes[n].target) for n in chain),
        form="grouped_gemm" if grouped else "per_expert_loop",
        expert_gemms=len(gemms),
        experts=_router_width(s, gemm) or (loop if not grouped else None),
        activations=tuple(sorted({op_name(s.nodes[n].target) for n in nodes if _after_gemm(s, n, gemms)})),
        variant=_variant(s, gemm, chain, names),
    )


def _router_width(s: Section, gemm: str) -> int | None:
    """Number of experts: the last dim of the router GEMM's output when the dump gives it as a number."""
    meta = s.nodes[gemm].meta
    last = meta.shape.rsplit("x", 1)[-1] if meta and meta.shape else ""
    return limits.digits(last, 6)


def _variant(s: Section, gemm: str, chain: list[str], names: Counter[str]) -> tuple[str, ...]:
    """Marks telling router variants apart (:attr:`MoeBlock.variant`)."""
    marks = []
    node = s.nodes[gemm]
    if (op_name(node.target) == "linear" and len(node.args) >= 3 and node.args[2].text != "None") or any(
        op_name(s.nodes[n].target) == "add" and s.params(s.nodes[n]) for n in chain
    ):
        marks.append("bias")
    if any(op_name(s.nodes[n].target) in ("to", "_to_copy", "float") for n in chain):
        marks.append("float32")
    if names["sum"] and (names["div"] or names["true_divide"]):
        marks.append("renormalised")
    routing = sorted(op for op in names if op in ROUTING and op != "topk")
    if routing:
        marks.append("routing: " + ", ".join(routing))
    return tuple(marks)


def _after_gemm(s: Section, name: str, gemms: list[str]) -> bool:
    """An activation reading an expert GEMM's output within five hops (getitem, chunk, view, a bias add, a
    clamp and a scale: GPT-OSS's gate)."""
    if op_name(s.nodes[name].target) not in _ACTS:
        return False
    frontier, expert = [name], set(gemms)
    for _ in range(5):
        frontier = [i for n in frontier for i in s.inputs[n]][:64]  # bounded on hostile fan-in
        if expert.intersection(frontier):
            return True
    return False
