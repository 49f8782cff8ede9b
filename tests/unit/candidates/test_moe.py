"""The MoE family: a router (GEMM, softmax/sigmoid, topk) feeding expert GEMMs is one block per router."""

from __future__ import annotations

from ad_diff.candidates.graphview import Section
from ad_diff.candidates.moe import find_moe
from ad_diff.candidates.scan import scan_dump
from ad_diff.kinds.graph.parse import parse
from tests.unit.candidates.conftest import C, call, dump, t

LOOP = C / "moe" / "graphs" / "028_compile_compile_model.txt"
GROUPED = C / "moe_grouped" / "graphs" / "001_compile_compile_model.txt"


def _blocks(d):
    return [b for i, s in enumerate(d.sections) for b in find_moe(Section(i, s))]


def test_per_expert_loop_is_one_block_per_layer() -> None:
    d = parse(LOOP)
    blocks = _blocks(d)
    assert len(blocks) == 4
    b = blocks[0]
    assert b.form == "per_expert_loop"
    assert b.router == ("linear", "softmax", "topk")
    assert b.experts == 3  # one index_add_ per expert
    assert b.expert_gemms == 9  # w1, w3, w2 per expert
    assert b.activations == ("silu",)
    assert b.nodes[:3] == ("linear_4", "softmax_1", "topk")
    assert "index_add_" in b.nodes
    # the block ends before the residual add that closes the layer
    names = {n.name: n for n in d.sections[0].nodes}
    order = {n.name: i for i, n in enumerate(d.sections[0].nodes)}
    closing = next(
        n for n in d.sections[0].nodes if n.target == "aten.add.Tensor" and order[n.name] > order["topk"]
    )
    assert closing.name not in b.nodes
    # the attention of the layer is no part of it
    assert not any(names[n].target.startswith("auto_deploy.cached_attention") for n in b.nodes)


def test_blocks_group_into_one_candidate_with_layers() -> None:
    moe = next(g for g in scan_dump(parse(LOOP)) if g.family == "moe")
    assert len(moe.instances) == 4
    assert [i.layer for i in moe.instances] == [0, 1, 2, 3]
    assert moe.signature == (
        "moe[per_expert_loop] router: linear -> softmax -> topk (renormalised, routing: index, index_add_, "
        "one_hot, where); experts: 3; expert GEMMs: 9; "
        "activation: silu"
    )
    assert moe.formula == ""


def test_grouped_gemm_with_sigmoid_after_topk() -> None:
    blocks = _blocks(parse(GROUPED))
    assert len(blocks) == 2
    assert {b.form for b in blocks} == {"grouped_gemm"}
    assert blocks[0].router == ("linear", "topk", "sigmoid")
    assert blocks[0].experts == 4  # stacked experts: the router GEMM's output width (16x4)
    assert blocks[0].activations == ("silu",)
    assert "add_0" not in blocks[0].nodes  # the residual add reads the block's input: it closes the block


def _router_lines(extra: list[str]) -> list[str]:
    return [
        t("h", "4x8"),
        call("r", "aten.linear.default", t("h", "4x8"), t("gate_w", "2x8"), shape="4x2"),
        call("p", "aten.softmax.int", t("r", "4x2"), "1", shape="4x2"),
        "%k = aten.topk.default(%p : 4x2 : torch.float32, 1) : (4x1, 4x1) : (torch.float32, torch.int64)",
        "%kv = <built-in function getitem>(%k : ? : tuple, 0) : 4x1 : torch.float32",
        *extra,
    ]


def test_no_block_without_experts_or_without_a_router() -> None:
    # a router whose scores only feed a pointwise op: no expert GEMM, no MoE
    d = dump(
        ("(root)", _router_lines([call("o", "aten.mul.Tensor", t("h", "4x8"), t("kv", "4x1")), "output %o"]))
    )
    assert _blocks(d) == []
    # a topk straight on a placeholder: no router GEMM
    d = dump(
        (
            "(root)",
            [
                t("x"),
                "%k = aten.topk.default(%x : 2x8 : torch.float32, 1) : (2x1, 2x1) "
                ": (torch.float32, torch.int64)",
                "output %k",
            ],
        )
    )
    assert _blocks(d) == []


def test_a_block_that_already_holds_a_moe_op_is_matched_not_a_candidate() -> None:
    lines = _router_lines(
        [
            "%kd = <built-in function getitem>(%k : ? : tuple, 1) : 4x1 : torch.int64",
            call("e1", "aten.linear.default", t("h", "4x8"), t("w1", "8x8"), shape="4x8"),
            call("e2", "aten.linear.default", t("e1", "4x8"), t("w2", "8x8"), shape="4x8"),
            call(
                "m",
                "auto_deploy.torch_moe.default",
                t("h", "4x8"),
                "%kd : 4x1 : torch.int64",
                t("kv", "4x1"),
                t("e2", "4x8"),
                shape="4x8",
            ),
            "output %m",
        ]
    )
    assert _blocks(dump(("(root)", lines))) == []
    unmatched = [ln for ln in lines if not ln.startswith("%m =")][:-1] + [
        call("m", "aten.mul.Tensor", t("e2", "4x8"), t("kv", "4x1"), shape="4x8"),
        "output %m",
    ]
    (block,) = _blocks(dump(("(root)", unmatched)))
    assert block.expert_gemms == 2
    assert block.nodes[-1] == "m"
