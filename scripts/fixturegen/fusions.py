"""Post-load GEMM fusion for the fixture pipeline, written after AD's ``fuse_gemms`` (FORMATS.md 2.3 names).

Linears without bias that read the same activation become one linear over a concatenated weight: a new
parameter ``fused_weight_<n>`` (``n`` counts fused groups in graph order, so it shifts when an upstream
rewrite leaves one more or one fewer group), read through a ``get_attr`` node (not dumped: the weight shows
only as an argument), one ``linear`` node, a ``split_output`` call (a local Python function, written
``<function ... at 0x..>``, without ``meta["val"]`` as in AD) and one ``getitem`` per original linear.
"""

from __future__ import annotations

import operator

import torch
from torch import fx, nn

from .fxutil import aten, is_op, propagate, replace


def _weight(gm: fx.GraphModule, node: fx.Node) -> torch.Tensor:
    return gm.get_parameter(str(node.target))


def fuse_gemms(gm: fx.GraphModule, k: object) -> int:
    """Fuse every group of >= 2 bias-free linears that share their input and whose weights are parameters."""
    g = gm.graph
    groups: dict[fx.Node, list[fx.Node]] = {}
    for node in g.nodes:
        if is_op(node, aten.linear.default) and len(node.args) == 2 and node.args[1].op == "get_attr":
            groups.setdefault(node.args[0], []).append(node)
    n = 0
    first_attr = next(nd for nd in g.nodes if nd.op == "get_attr")
    for parent, lins in groups.items():
        if len(lins) < 2 or any(not is_op(u, aten.linear.default) for u in parent.users):
            continue
        weights = [_weight(gm, ln.args[1]) for ln in lins]
        sizes = [int(w.shape[0]) for w in weights]
        key = f"fused_weight_{n}"
        gm.register_parameter(key, nn.Parameter(torch.cat(weights, 0).detach(), requires_grad=False))
        with g.inserting_before(first_attr):
            attr = g.get_attr(key)
        mode = torch._guards.detect_fake_mode([lins[0].meta["val"]])
        attr.meta["val"] = mode.from_tensor(getattr(gm, key), static_shapes=True)

        def split_output(t: torch.Tensor, sizes: list[int] = sizes) -> tuple[torch.Tensor, ...]:
            return tuple(torch.split(t, sizes, dim=-1))

        split_output.__qualname__ = "_insert_fused_gemm.<locals>.split_output"  # as AD's dumps name it

        with g.inserting_before(lins[0]):
            fused = g.create_node("call_function", aten.linear.default, (parent, attr), name="linear")
            propagate(fused)
            split = g.create_node("call_function", split_output, (fused,), name="split_output")
        for i, ln in enumerate(lins):
            with g.inserting_before(ln):
                part = g.create_node("call_function", operator.getitem, (split, i), name="getitem")
            part.meta["val"] = ln.meta["val"]
            replace(ln, part, [])
        n += 1
    g.lint()
    gm.recompile()
    return n
