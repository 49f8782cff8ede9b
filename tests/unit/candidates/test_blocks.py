"""MoE and attention blocks in the forms transformers 5 exports, and the scan's work as the dump grows."""

from __future__ import annotations

from typing import Any

import pytest

from ad_diff.candidates import graphview
from ad_diff.candidates.scan import scan_dump
from ad_diff.candidates.sizes import NOMINAL, numel, tensor_bytes
from tests.unit.candidates.conftest import dump

B = "torch.bfloat16"


def _layer(i: int, x: str) -> list[str]:
    """One GPT-OSS-like decoder layer (names suffixed ``_{i}``) reading the residual stream ``x``."""
    p = f"model_layers_{i}_"
    h, tok, sc = "s0x8x32", "s0*8x32", "s0x4x8x8"
    return [
        f"%n_{i} = aten.mul.Tensor(%{x} : {h} : {B}, %{p}norm_weight : 32 : {B}) : {h} : {B}",
        f"%q_{i} = aten.linear.default(%n_{i} : {h} : {B}, %{p}q_weight : 32x32 : {B}) : {h} : {B}",
        f"%k_{i} = aten.linear.default(%n_{i} : {h} : {B}, %{p}k_weight : 32x32 : {B}) : {h} : {B}",
        f"%v_{i} = aten.linear.default(%n_{i} : {h} : {B}, %{p}v_weight : 32x32 : {B}) : {h} : {B}",
        f"%qv_{i} = aten.view.default(%q_{i} : {h} : {B}, [-1, 4, 8, 8]) : {sc} : {B}",
        f"%kv_{i} = aten.view.default(%k_{i} : {h} : {B}, [-1, 4, 8, 8]) : {sc} : {B}",
        f"%kt_{i} = aten.transpose.int(%kv_{i} : {sc} : {B}, 2, 3) : {sc} : {B}",
        f"%vv_{i} = aten.view.default(%v_{i} : {h} : {B}, [-1, 4, 8, 8]) : {sc} : {B}",
        f"%qk_{i} = aten.matmul.default(%qv_{i} : {sc} : {B}, %kt_{i} : {sc} : {B}) : {sc} : {B}",
        f"%sc_{i} = aten.mul.Tensor(%qk_{i} : {sc} : {B}, 0.35) : {sc} : {B}",
        f"%am_{i} = aten.add.Tensor(%sc_{i} : {sc} : {B}, %mask : 1x1x8x8 : {B}) : {sc} : {B}",
        f"%sr_{i} = aten.reshape.default(%{p}self_attn_sinks : 4 : {B}, [1, -1, 1, 1]) : 1x4x1x1 : {B}",
        f"%se_{i} = aten.expand.default(%sr_{i} : 1x4x1x1 : {B}, [-1, -1, 8, -1]) : 1x4x8x1 : {B}",
        f"%ct_{i} = aten.cat.default([am_{i}, se_{i}], -1) : s0x4x8x9 : {B}",
        f"%mx_{i} = aten.amax.default(%ct_{i} : s0x4x8x9 : {B}, [-1], True) : s0x4x8x1 : {B}",
        f"%sb_{i} = aten.sub.Tensor(%ct_{i} : s0x4x8x9 : {B}, %mx_{i} : s0x4x8x1 : {B}) : s0x4x8x9 : {B}",
        f"%sm_{i} = aten.softmax.int(%sb_{i} : s0x4x8x9 : {B}, -1) : s0x4x8x9 : {B}",
        f"%sl_{i} = aten.slice.Tensor(%sm_{i} : s0x4x8x9 : {B}, 3, 0, -1) : {sc} : {B}",
        f"%pv_{i} = aten.matmul.default(%sl_{i} : {sc} : {B}, %vv_{i} : {sc} : {B}) : {sc} : {B}",
        f"%ao_{i} = aten.view.default(%pv_{i} : {sc} : {B}, [-1, 8, 32]) : {h} : {B}",
        f"%o_{i} = aten.linear.default(%ao_{i} : {h} : {B}, %{p}o_weight : 32x32 : {B}) : {h} : {B}",
        f"%r_{i} = aten.add.Tensor(%{x} : {h} : {B}, %o_{i} : {h} : {B}) : {h} : {B}",
        f"%m_{i} = aten.mul.Tensor(%r_{i} : {h} : {B}, %{p}post_norm_weight : 32 : {B}) : {h} : {B}",
        f"%f_{i} = aten.view.default(%m_{i} : {h} : {B}, [-1, 32]) : {tok} : {B}",
        f"%g_{i} = aten.linear.default(%f_{i} : {tok} : {B}, %{p}router_weight : 4x32 : {B}, "
        f"%{p}router_bias : 4 : {B}) : s0*8x4 : {B}",
        f"%tk_{i} = aten.topk.default(%g_{i} : s0*8x4 : {B}, 2) : (s0*8x2, s0*8x2) : ({B}, torch.int64)",
        f"%tv_{i} = <built-in function getitem>(%tk_{i} : ? : tuple, 0) : s0*8x2 : {B}",
        f"%ti_{i} = <built-in function getitem>(%tk_{i} : ? : tuple, 1) : s0*8x2 : torch.int64",
        f"%ts_{i} = aten.softmax.int(%tv_{i} : s0*8x2 : {B}, 1) : s0*8x2 : {B}",
        f"%hc_{i} = aten.histc.default(%ti_{i} : s0*8x2 : torch.int64, 4, 0, 3) : 4 : torch.float32",
        f"%so_{i} = aten.sort.default(%ti_{i} : s0*8x2 : torch.int64) : (s0*16, s0*16) "
        ": (torch.int64, torch.int64)",
        f"%si_{i} = <built-in function getitem>(%so_{i} : ? : tuple, 1) : s0*16 : torch.int64",
        f"%cs_{i} = aten.cumsum.default(%hc_{i} : 4 : torch.float32, 0) : 4 : torch.float32",
        f"%ix_{i} = aten.index.Tensor(%f_{i} : {tok} : {B}, [si_{i}]) : s0*16x32 : {B}",
        f"%wt_{i} = aten.transpose.int(%{p}experts_gate_up : 4x32x32 : {B}, 1, 2) : 4x32x32 : {B}",
        f"%e1_{i} = aten._grouped_mm.default(%ix_{i} : s0*16x32 : {B}, %wt_{i} : 4x32x32 : {B}, "
        f"%cs_{i} : 4 : torch.float32) : s0*16x32 : {B}",
        f"%ac_{i} = aten.silu.default(%e1_{i} : s0*16x32 : {B}) : s0*16x32 : {B}",
        f"%e2_{i} = aten._grouped_mm.default(%ac_{i} : s0*16x32 : {B}, %{p}experts_down : 4x32x32 : {B}, "
        f"%cs_{i} : 4 : torch.float32) : s0*16x32 : {B}",
        f"%tw_{i} = aten.reshape.default(%ts_{i} : s0*8x2 : {B}, [-1, 1]) : s0*16x1 : {B}",
        f"%wy_{i} = aten.mul.Tensor(%e2_{i} : s0*16x32 : {B}, %tw_{i} : s0*16x1 : {B}) : s0*16x32 : {B}",
        f"%z_{i} = aten.zeros.default([16, 32]) : {tok} : {B}",
        f"%ip_{i} = aten.index_put_.default(%z_{i} : {tok} : {B}, [si_{i}], %wy_{i} : s0*16x32 : {B}, True) "
        f": {tok} : {B}",
        f"%mv_{i} = aten.view.default(%ip_{i} : {tok} : {B}, [-1, 8, 32]) : {h} : {B}",
        f"%x_{i} = aten.add.Tensor(%r_{i} : {h} : {B}, %mv_{i} : {h} : {B}) : {h} : {B}",
    ]


def _model(layers: int) -> Any:
    lines = [f"%x : s0x8x32 : {B}", f"%mask : 1x1x8x8 : {B}"]
    x = "x"
    for i in range(layers):
        lines += _layer(i, x)
        x = f"x_{i}"
    return dump(("(root)", [*lines, f"output %{x}"]))


def test_transformers5_moe_and_attention_with_sinks_are_one_block_each() -> None:
    groups = scan_dump(_model(3))
    assert {g.family for g in groups[:2]} == {"moe", "attention"}
    moe = next(g for g in groups if g.family == "moe")
    att = next(g for g in groups if g.family == "attention")
    assert [i.layer for i in moe.instances] == [0, 1, 2]
    assert "moe[grouped_gemm] router: linear -> topk -> softmax (bias, routing: cumsum, histc, index" in (
        moe.signature
    )
    assert "experts: 4; expert GEMMs: 2; activation: silu" in moe.signature
    # the transposed stacked weight is a parameter of the block, not data feeding it
    assert any(n.startswith("wt_") for n in moe.instances[0].nodes)
    assert "sinks" in att.signature
    assert "max_subtracted" in att.signature
    assert {"se_0", "sr_0", "ct_0", "sl_0", "kt_0"} <= set(att.instances[0].nodes)
    assert "r_0" not in att.instances[0].nodes  # the residual add closes the layer
    # the softmax inside each block is nested under it, never listed beside it
    assert not any(g.family == "softmax" for g in groups)
    for block in (moe, att):
        assert {f: n for f, n, _ in block.nested}["softmax"] == 3  # one per layer, under its block


def test_sizes_at_the_nominal_size() -> None:
    assert numel("s0x8x32") == NOMINAL * 8 * 32
    assert numel("s0*s1x2") == NOMINAL * NOMINAL * 2
    assert numel("s72x4xs70xs70 + 1") == NOMINAL * 4 * NOMINAL * (NOMINAL + 1)
    assert numel("Max(1, s0)x4") == NOMINAL * 4
    assert tensor_bytes("(s0x2, s0x2)", f"({B}, torch.int64)") == NOMINAL * 2 * 2 + NOMINAL * 2 * 8
    assert tensor_bytes("?", B) is None
    assert tensor_bytes("s0x(", B) is None
    assert tensor_bytes("2x2", "torch.weird") is None


class _Counting(dict):  # type: ignore[type-arg]
    """A dict counting its reads: the scan's work, not its time."""

    reads = 0

    def __getitem__(self, k: Any) -> Any:
        _Counting.reads += 1
        return super().__getitem__(k)

    def get(self, k: Any, default: Any = None) -> Any:
        _Counting.reads += 1
        return super().get(k, default)


def _work(layers: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    init = graphview.Section.__init__

    def counted(self: graphview.Section, *a: Any) -> None:
        init(self, *a)
        for attr in ("nodes", "inputs", "users", "kinds", "order", "line"):
            setattr(self, attr, _Counting(getattr(self, attr)))

    monkeypatch.setattr(graphview.Section, "__init__", counted)
    _Counting.reads = 0
    groups = scan_dump(_model(layers))
    blocks = sum(len(g.instances) for g in groups if g.family in ("moe", "attention"))
    return _Counting.reads, blocks


def test_scan_work_at_most_roughly_doubles_when_the_dump_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    small, blocks_small = _work(8, monkeypatch)
    big, blocks_big = _work(16, monkeypatch)
    assert (blocks_small, blocks_big) == (16, 32)  # the work counted is the work that finds the blocks
    assert small > 0
    assert big <= 2.2 * small, (small, big)
