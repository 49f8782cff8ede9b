"""Where a graph routes tokens to experts: each MoE op, the router whose logits pick its experts, and ``k``.

Read from a parsed graph dump (any object with the graph kind's node fields: ``name``, ``target``,
``args`` of ``text``/``node``/``refs``/``meta``), so that the tensors kind can judge routing flips from
per-node captures without importing the graph kind. Names are never trusted: a MoE op is an op whose short
name holds ``moe`` (``torch_moe``, ``trtllm_moe_fused``, ``triton_quant_fp8_moe`` ...) and is not itself a
router; the router is found by walking back from the op's routing inputs:

* through a ``topk`` node (``k`` is its second argument): its input holds the scores the experts are ranked
  by, and walking further back through ops that keep each row's order (casts, views, ``softmax``,
  ``sigmoid``) reaches the router's linear layer, whose output are the router logits;
* or through a fused routing op (a ``*router*``/``*routing*``/``*topk*`` op, as AD's routing matchers insert)
  whose integer argument is ``k`` and whose tensor input leads back to the linear;
* or straight to a linear (the op routes itself: ``torch_moe(x, router_logits, ..., top_k)``), ``k`` then
  being the op's own integer argument.

The integer-typed routing input (the selected experts, ``getitem(topk, 1)``) is named too, so the runs'
actual choices can be compared where they were captured. Pure standard library; bounded by the graph's size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ad_diff.core.graphops import op_name

LINEAR_OPS = frozenset({"linear", "mm", "matmul", "addmm", "bmm", "torch_linear_simple", "fp8_linear",
                        "torch_fake_quant_fp8_linear", "trtllm_dsv3_router_gemm", "dsv3_router_gemm_op"})
"""Ops whose output can be router logits (a GEMM of the hidden states with the router's weight)."""
ORDER_KEEPING = frozenset({"to", "_to_copy", "float", "type_as", "view", "reshape", "_reshape_copy",
                           "contiguous", "clone", "softmax", "_softmax", "sigmoid", "log_softmax"})
"""Ops that keep the order of each row's values (so the top-k of their output is the top-k of their input),
when softmax runs over the last dim."""
_ROUTER_OP = re.compile(r"router|routing|topk|top_k|gating", re.IGNORECASE)
_INT_DTYPES = ("torch.int64", "torch.int32", "torch.int16", "torch.uint8", "int64", "int32")
MAX_WALK = 12
"""Most nodes walked back from one routing input (a router sits a few casts and views before its op)."""


@dataclass(frozen=True, slots=True)
class MoeRouting:
    """One MoE layer of a graph and the nodes that route its tokens (names of the baseline's final dump)."""

    layer: int
    """0-based order of the MoE op in the graph."""
    op: str
    """The MoE op's node (``trtllm_moe_fused_1``)."""
    op_target: str
    """Its op's short name (``trtllm_moe_fused``)."""
    router: str
    """The node whose output are the router logits (a linear)."""
    k: int | None
    """Experts per token, from the graph (``None`` when no integer argument says it)."""
    k_source: str
    """Where ``k`` came from: ``topk argument``, ``<op> argument``."""
    scheme: str
    """What ranks the experts between the router and the choice: ``softmax``, ``sigmoid``, ``logits`` (no
    transform), an op name (a fused routing op), or ``other: <op>`` (an op that may change the order)."""
    order_kept: bool
    """Every op between the router logits and the top-k keeps each row's order: the top-k of the logits is
    the routing's choice."""
    scores: str | None = None
    """The node the top-k ranks (``None`` when the choice is made inside an op)."""
    selected: str | None = None
    """The node holding the experts chosen per token, fed to the MoE op (``getitem_1``)."""
    routing: tuple[str, ...] = ()
    """Every node between the router and the MoE op (softmax, top-k, routing weights ...)."""


def _is_moe(op: str) -> bool:
    return "moe" in op.lower() and not _ROUTER_OP.search(op)


def _int_literals(node: Any) -> list[int]:
    out = []
    for a in node.args:
        if not a.node and not a.refs and re.fullmatch(r"-?\d+", a.text.strip()):
            out.append(int(a.text))
    return out


def _is_int(arg: Any) -> bool:
    meta = getattr(arg, "meta", None)
    return meta is not None and meta.dtype in _INT_DTYPES


def moe_layers(nodes: Iterable[Any]) -> tuple[MoeRouting, ...]:
    """The MoE layers of a graph's nodes (in graph order), each with its router when one is found."""
    nodes = list(nodes)
    by_name: Mapping[str, Any] = {n.name: n for n in nodes}
    out: list[MoeRouting] = []
    for node in nodes:
        if node.op != "call" or not _is_moe(op_name(node.target)):
            continue
        found = _routing(node, by_name)
        if found is not None:
            out.append(found(len(out)))
    return tuple(out)


def _walk_back(start: str, by_name: Mapping[str, Any], stop: Any) -> list[str]:
    """Node names from ``start`` back through first inputs until ``stop(node)`` is true (that node last),
    at most :data:`MAX_WALK` nodes; empty when no such node."""
    path: list[str] = []
    name: str | None = start
    while name is not None and name in by_name and len(path) < MAX_WALK:
        node = by_name[name]
        path.append(name)
        if stop(node):
            return path
        ins = node.inputs()
        name = ins[0] if ins else None
    return []


def _routing(node: Any, by_name: Mapping[str, Any]) -> Any:
    """A constructor of the op's :class:`MoeRouting` (taking the layer number), or ``None``."""
    op = op_name(node.target)
    for arg in node.args[1:]:
        if not arg.node:
            continue

        def chooser(n: Any) -> bool:
            name = op_name(n.target)
            return n.op == "call" and (name == "topk" or bool(_ROUTER_OP.search(name)) or name in LINEAR_OPS)

        path = _walk_back(arg.text, by_name, chooser)
        if not path:
            continue
        last = by_name[path[-1]]
        last_op = op_name(last.target)
        selected = arg.text if _is_int(arg) else _int_input(node, by_name)
        if last_op in LINEAR_OPS:  # the op routes itself from the logits
            ks = _int_literals(node)
            routing = _between(node, last.name, by_name)
            return lambda layer: MoeRouting(layer, node.name, op, last.name, ks[-1] if ks else None,
                                            f"{op} argument", op, True, None, None, routing)
        ins = last.inputs()
        if not ins:
            continue
        to_router = _walk_back(ins[0], by_name, lambda n: op_name(n.target) in LINEAR_OPS)
        if not to_router:
            continue
        between = [op_name(by_name[n].target) for n in to_router[:-1]]
        kept = all(b in ORDER_KEEPING for b in between) and _softmax_last(to_router[:-1], by_name)
        if last_op == "topk":
            ks = _int_literals(last)
            k, source = (ks[0] if ks else None), "topk argument"
            changing = [b for b in between if b not in ORDER_KEEPING]
            scheme = (f"other: {changing[0]}" if changing else
                      "softmax" if "softmax" in between else "sigmoid" if "sigmoid" in between else "logits")
            scores: str | None = ins[0]
        else:
            ks = _int_literals(last) or _int_literals(node)
            k, source, scheme, scores = (ks[0] if ks else None), f"{last_op} argument", last_op, None
        router = to_router[-1]
        routing = _between(node, router, by_name)
        return lambda layer: MoeRouting(layer, node.name, op, router, k, source, scheme, kept, scores,
                                        selected, routing)
    return None


def _between(node: Any, router: str, by_name: Mapping[str, Any]) -> tuple[str, ...]:
    """The nodes the MoE op's routing inputs (all but the first) are computed from, back to ``router``
    (excluded): softmax, top-k, the routing weights. At most ``4 * MAX_WALK`` nodes."""
    seen: dict[str, None] = {}
    todo = [a.text for a in node.args[1:] if a.node]
    while todo and len(seen) < 4 * MAX_WALK:
        name = todo.pop(0)
        if name == router or name in seen or name not in by_name:
            continue
        seen[name] = None
        todo += by_name[name].inputs()
    derived = {router}  # only what the router's logits flow into (never the hidden states' own path)
    changed = True
    while changed:
        changed = False
        for name in seen:
            if name not in derived and any(i in derived for i in by_name[name].inputs()):
                derived.add(name)
                changed = True
    return tuple(n for n in seen if n in derived)


def _int_input(node: Any, by_name: Mapping[str, Any]) -> str | None:
    """The op's first integer-typed node input (the selected experts), when the dump types it."""
    for a in node.args[1:]:
        if a.node and _is_int(a):
            return str(a.text)
    return None


def _softmax_last(names: Sequence[str], by_name: Mapping[str, Any]) -> bool:
    """Every softmax on the path runs over the last dim (``-1`` or the last index of its input's shape)."""
    for n in names:
        node = by_name[n]
        if op_name(node.target) not in ("softmax", "_softmax", "log_softmax"):
            continue
        ints = _int_literals(node)
        if not ints:
            return False
        dim = ints[0]
        shape = node.args[0].meta.shape if node.args and node.args[0].meta is not None else None
        rank = len(shape.split("x")) if shape and shape not in ("?", "scalar") else None
        if dim != -1 and (rank is None or dim != rank - 1):
            return False
    return True


__all__ = ["LINEAR_OPS", "ORDER_KEEPING", "MoeRouting", "moe_layers"]
