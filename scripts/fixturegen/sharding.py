"""Tensor-parallel sharding of the MLP for the fixture pipeline, after AD's ``detect_sharding`` and
``sharding_transform_executor`` (``transform/library/sharding.py``).

``detect_sharding`` plans the shards and ``sharding_transform_executor`` applies them, as upstream (which
keeps the plan in ``shared_config``; here it rides on ``gm.meta``). The plan follows a factory ``tp_plan``:
each MLP's gate and up projections are split column-wise (their output features), its down projection
row-wise (its input features) with an all-reduce after it, so every layer's MLP output keeps its shape.
Attention is not sharded. On one device ``detect_sharding`` logs ``Skipping sharding for single device``
and both transforms match 0, leaving the graph as it was.

Dumps are rank 0's (AD's graph writer skips other ranks), so the executor slices out rank 0's shard; every
rank of a run reports the same counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import fx, nn
from torch._guards import detect_fake_mode

from .events import say
from .fxutil import aten, insert, is_op, propagate
from .ops import op

if TYPE_CHECKING:
    from .transforms import Knobs

#: ``(weight-name part, split)`` for the MLP weights, as an HF/AD ``tp_plan`` names them.
TP_PLAN: tuple[tuple[str, str], ...] = (
    (".mlp.gate_proj.", "colwise"), (".mlp.up_proj.", "colwise"), (".mlp.down_proj.", "rowwise"))
_PLAN = "fixturegen_sharding_plan"
_RANK = 0


def detect_sharding(gm: fx.GraphModule, k: Knobs) -> int:
    """Plan one shard per MLP weight named in :data:`TP_PLAN` (3 per layer); 0 on one device."""
    world_size = k.world_size
    if world_size < 2:
        say("Skipping sharding for single device")
        return 0
    say("Running TP sharding detection")
    plan = []
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        split = next((how for part, how in TP_PLAN if part in str(node.target)), None)
        if split is not None:
            plan.append((str(node.target), split))
    gm.meta[_PLAN] = (world_size, tuple(plan))
    return len(plan)


def sharding_transform_executor(gm: fx.GraphModule, k: Knobs) -> int:
    """Apply the plan of :func:`detect_sharding`: slice each weight to rank 0's shard (a new, smaller
    parameter), re-propagate ``meta["val"]`` through what reads it, and put an all-reduce after every
    row-split linear. Returns the number of weights sliced."""
    world_size, plan = gm.meta.pop(_PLAN, (1, ()))
    if not plan:
        return 0
    g = gm.graph
    attrs = {str(n.target): n for n in g.nodes if n.op == "get_attr"}
    sliced: set[fx.Node] = set()
    for target, split in plan:
        node = attrs[target]
        weight = gm.get_parameter(target)
        shard = weight.detach().chunk(world_size, 0 if split == "colwise" else 1)[_RANK].clone()
        owner, _, name = target.rpartition(".")
        param = nn.Parameter(shard, requires_grad=weight.requires_grad)
        setattr(gm.get_submodule(owner), name, param)
        mode = detect_fake_mode([node.meta["val"]])
        assert mode is not None, f"no fake mode for {target}"
        node.meta["val"] = mode.from_tensor(param, static_shapes=True)
        sliced.add(node)
    _repropagate(g, sliced)
    for target, split in plan:
        if split != "rowwise":
            continue
        for lin in list(attrs[target].users):
            if is_op(lin, aten.linear.default, op("torch_fake_quant_fp8_linear")) and lin.args[1] is attrs[target]:
                with g.inserting_after(lin):
                    reduced = insert(g, op("torch_dist_all_reduce"), (lin,))
                lin.replace_all_uses_with(reduced, delete_user_cb=lambda user, new=reduced: user is not new)
    g.lint()
    gm.recompile()
    return len(plan)


def _repropagate(g: fx.Graph, changed: set[fx.Node]) -> None:
    """Recompute ``meta["val"]`` of every call node that reads a changed value, in graph order, and follow
    the nodes whose shape changed with it. Nodes without metadata keep none."""
    for node in g.nodes:
        if node.op != "call_function" or "val" not in node.meta:
            continue
        if not any(a in changed for a in node.all_input_nodes):
            continue
        before = _shapes(node.meta["val"])
        propagate(node)
        if _shapes(node.meta["val"]) != before:
            changed.add(node)


def _shapes(v: object) -> object:
    # as text: comparing symbolic dims would ask the shape environment (and could add guards)
    if isinstance(v, torch.Tensor):
        return tuple(str(d) for d in v.shape)
    if isinstance(v, (tuple, list)):
        return tuple(_shapes(e) for e in v)
    return None
