# ruff: noqa: E501  (dump lines are data, kept whole)
"""MoE layers found in a graph dump whatever the names (ad_diff.core.moe): through a top-k, a fused routing op,
or an op that routes itself; k from the graph; whether the ops before the top-k keep each row's order."""

from __future__ import annotations

from pathlib import Path

from ad_diff.core.moe import moe_layers
from ad_diff.kinds.graph.parse import parse_text

HEAD = "# Transform: compile_model\n# Stage: compile\n\n"
X = "%x : 6x16 : torch.bfloat16\n"
W = "%w1 : 4x32x16 : torch.bfloat16, %w2 : 4x16x16 : torch.bfloat16"


def _layers(body: str):  # type: ignore[no-untyped-def]
    dump = parse_text(HEAD + X + body + "output %out\n", Path("001_compile_compile_model.txt"))
    return moe_layers(n for s in dump.sections for n in s.nodes)


def test_topk_routing_with_any_names_and_a_sigmoid_router() -> None:
    (layer,) = _layers(
        "%proj_17 = aten.mm.default(%x : 6x16 : torch.bfloat16, %g : 16x4 : torch.bfloat16) : 6x4 : torch.bfloat16\n"
        "%s = aten.sigmoid.default(%proj_17 : 6x4 : torch.bfloat16) : 6x4 : torch.float32\n"
        "%t = aten.topk.default(%s : 6x4 : torch.float32, 3) : (6x3, 6x3) : (torch.float32, torch.int64)\n"
        "%w = <built-in function getitem>(%t : ? : tuple, 0) : 6x3 : torch.float32\n"
        "%i = <built-in function getitem>(%t : ? : tuple, 1) : 6x3 : torch.int64\n"
        f"%out = auto_deploy.torch_moe.default(%x : 6x16 : torch.bfloat16, %i : 6x3 : torch.int64, "
        f"%w : 6x3 : torch.float32, {W}) : 6x16 : torch.bfloat16\n"
    )
    assert (layer.router, layer.k, layer.scheme, layer.order_kept, layer.selected) == ("proj_17", 3, "sigmoid",
                                                                                        True, "i")
    assert set(layer.routing) == {"s", "t", "w", "i"}


def test_a_bias_before_the_topk_changes_the_order() -> None:
    (layer,) = _layers(
        "%r = aten.linear.default(%x : 6x16 : torch.bfloat16, %g : 4x16 : torch.bfloat16) : 6x4 : torch.bfloat16\n"
        "%s = aten.sigmoid.default(%r : 6x4 : torch.bfloat16) : 6x4 : torch.float32\n"
        "%b = aten.add.Tensor(%s : 6x4 : torch.float32, %bias : 4 : torch.float32) : 6x4 : torch.float32\n"
        "%t = aten.topk.default(%b : 6x4 : torch.float32, 2) : (6x2, 6x2) : (torch.float32, torch.int64)\n"
        "%i = <built-in function getitem>(%t : ? : tuple, 1) : 6x2 : torch.int64\n"
        "%w = <built-in function getitem>(%t : ? : tuple, 0) : 6x2 : torch.float32\n"
        f"%out = auto_deploy.trtllm_moe_fused.default(%x : 6x16 : torch.bfloat16, %i : 6x2 : torch.int64, "
        f"%w : 6x2 : torch.float32, {W}) : 6x16 : torch.bfloat16\n"
    )
    assert (layer.router, layer.scores, layer.order_kept) == ("r", "b", False)
    assert layer.scheme == "other: add"


def test_a_fused_routing_op_and_an_op_that_routes_itself() -> None:
    fused, itself = _layers(
        "%r = aten.linear.default(%x : 6x16 : torch.bfloat16, %g : 4x16 : torch.bfloat16) : 6x4 : torch.bfloat16\n"
        "%ro = auto_deploy.noaux_tc_router.default(%r : 6x4 : torch.bfloat16, 2) : (6x2, 6x2) : "
        "(torch.float32, torch.int64)\n"
        "%w = <built-in function getitem>(%ro : ? : tuple, 0) : 6x2 : torch.float32\n"
        "%i = <built-in function getitem>(%ro : ? : tuple, 1) : 6x2 : torch.int64\n"
        f"%m = auto_deploy.triton_moe_fused.default(%x : 6x16 : torch.bfloat16, %i : 6x2 : torch.int64, "
        f"%w : 6x2 : torch.float32) : 6x16 : torch.bfloat16\n"
        "%r2 = aten.linear.default(%m : 6x16 : torch.bfloat16, %g2 : 4x16 : torch.bfloat16) : 6x4 : torch.bfloat16\n"
        f"%out = moe.torch_moe.default(%m : 6x16 : torch.bfloat16, %r2 : 6x4 : torch.bfloat16, {W}, 2) : "
        "6x16 : torch.bfloat16\n"
    )
    assert (fused.layer, fused.router, fused.k, fused.scheme, fused.selected) == (0, "r", 2, "noaux_tc_router",
                                                                                   "i")
    assert (itself.layer, itself.router, itself.k, itself.k_source) == (1, "r2", 2, "torch_moe argument")


def test_no_moe_op_no_layer() -> None:
    assert _layers("%out = aten.linear.default(%x : 6x16 : torch.bfloat16, %g : 4x16 : torch.bfloat16) : "
                   "6x4 : torch.bfloat16\n") == ()
