"""Small torch.fx helpers for the fixture rewrites: op tests, node insertion with FakeTensor
propagation of ``meta["val"]``, and removal of the nodes a rewrite made dead."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import fx
from torch._guards import detect_fake_mode

aten = torch.ops.aten


def is_op(node: Any, *targets: Any) -> bool:
    """True if ``node`` is a ``call_function`` node whose target is one of ``targets``."""
    return isinstance(node, fx.Node) and node.op == "call_function" and node.target in targets


def val(node: Any) -> Any:
    """``meta["val"]`` of a node (``None`` if absent or not a node)."""
    return node.meta.get("val") if isinstance(node, fx.Node) else None


def _vals(obj: Any) -> Any:
    if isinstance(obj, fx.Node):
        return obj.meta["val"]
    if isinstance(obj, (list, tuple)):
        return type(obj)(_vals(o) for o in obj)
    return obj


def propagate(node: fx.Node) -> None:
    """Set ``node.meta["val"]`` by running its target on the FakeTensors of its inputs."""
    args, kwargs = _vals(node.args), _vals(node.kwargs)
    flat = [a for a in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
    mode = detect_fake_mode(flat)
    assert mode is not None, f"no fake mode for {node.name}"
    with mode:
        node.meta["val"] = node.target(*args, **kwargs)


def base_name(target: Any) -> str:
    """Node name stem for a target: the op packet name (``torch_rmsnorm``), as AD's graphs show."""
    packet = getattr(target, "overloadpacket", None)
    return packet.__name__ if packet is not None else getattr(target, "__name__", "node")


def insert(graph: fx.Graph, target: Any, args: tuple, *, meta: bool = True) -> fx.Node:
    """Insert a ``call_function`` node at the current insert point; propagate its meta unless told not to."""
    node = graph.create_node("call_function", target, args, name=base_name(target))
    if meta:
        propagate(node)
    return node


def replace(old: fx.Node, new: fx.Node, dead: Iterable[fx.Node]) -> None:
    """Point ``old``'s users at ``new``, then erase ``old`` and every node of ``dead`` left without users."""
    old.replace_all_uses_with(new)
    pending = [old, *dead]
    changed = True
    while changed:
        changed = False
        for n in list(pending):
            if n.graph is not None and not n.users and n in n.graph.nodes:
                n.graph.erase_node(n)
                pending.remove(n)
                changed = True


def single_user(node: fx.Node) -> bool:
    """True if exactly one node uses ``node``."""
    return len(node.users) == 1
