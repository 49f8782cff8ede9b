"""The text model of an FX graph the benchmark generators build on: FX's naming, rewrites, rendering."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from benchgen.textfx import BF16, Graph, Namer, base_of, d3_file  # noqa: E402


def test_namer_follows_fx() -> None:
    # the expected names are what torch.fx.graph._Namespace.create_name gives for the same sequence
    n = Namer()
    assert [n("add"), n("add"), n("add")] == ["add", "add_1", "add_2"]
    assert [n("pow"), n("pow")] == ["pow_1", "pow_2"]  # a builtin's name is never used bare
    assert n("slice") == "slice_1"
    assert [n("k_cache_0"), n("k_cache_1")] == ["k_cache_0", "k_cache_1"]  # explicit suffixes kept
    assert [n("sym_size_int_5"), n("sym_size_int"), n("sym_size_int")] == [
        "sym_size_int_5",
        "sym_size_int",
        "sym_size_int_6",
    ]
    assert n("add_1") == "add_3"  # a taken name moves on from the base's counter


def test_base_of_targets() -> None:
    assert base_of("aten.add.Tensor") == "add"
    assert base_of("aten.sym_size.int") == "sym_size_int"
    assert base_of("auto_deploy.torch_rmsnorm.default") == "torch_rmsnorm"
    assert base_of("<built-in function getitem>") == "getitem"


def _chain() -> tuple[Graph, list]:
    g = Graph()
    x = g.placeholder("x", "s4x8", BF16)
    w = g.weight("w", "8")
    a = g.call("aten.pow.Tensor_Scalar", [x, "2"], "s4x8")
    b = g.call("aten.mul.Tensor", [w, a], "s4x8")
    c = g.call("aten.add.Tensor", [b, x], "s4x8")
    g.output(c)
    return g, [x, w, a, b, c]


def test_rendering_follows_the_d3_grammar() -> None:
    g, (x, _, a, _, c) = _chain()
    tup = g.before(c).call(
        "aten.split.Tensor", [x, "4"], "(s4x4, s4x4)", f"({BF16}, {BF16})", as_arg="? : tuple"
    )
    g.before(c).call("aten.cat.default", [[a, tup], "-1"], "s4x8")
    g.before(c).call("<built-in function getitem>", [tup, "0"], "s4x4")
    g.commit()
    assert g.lines() == [
        "%x : s4x8 : torch.bfloat16",
        "%pow_1 = aten.pow.Tensor_Scalar(%x : s4x8 : torch.bfloat16, 2) : s4x8 : torch.bfloat16",
        "%mul = aten.mul.Tensor(%w : 8 : torch.bfloat16, %pow_1 : s4x8 : torch.bfloat16)"
        " : s4x8 : torch.bfloat16",
        "%split = aten.split.Tensor(%x : s4x8 : torch.bfloat16, 4)"
        " : (s4x4, s4x4) : (torch.bfloat16, torch.bfloat16)",
        "%cat = aten.cat.default([pow_1, split], -1) : s4x8 : torch.bfloat16",  # lists: bare names
        "%getitem = <built-in function getitem>(%split : ? : tuple, 0) : s4x4 : torch.bfloat16",
        "%add = aten.add.Tensor(%mul : s4x8 : torch.bfloat16, %x : s4x8 : torch.bfloat16)"
        " : s4x8 : torch.bfloat16",
        "output %add",
    ]
    text = d3_file("post_export", "t", g.body())
    assert text.startswith("# Transform: t\n# Stage: post_export\n# GraphModules found: 1\n\n\n" + "=" * 80)
    assert "# GraphModule: (root)\n" in text
    assert text.endswith("output %add\n")


def test_replace_erases_the_dead_pattern_and_keeps_names() -> None:
    g, (x, w, a, b, c) = _chain()
    fused = g.before(b).call("auto_deploy.fused.default", [x, w], "s4x8")
    g.replace(b, fused, [a])
    g.commit()
    assert [n.name for n in g.nodes] == ["x", "fused", "add", "output"]
    assert not a.alive
    assert not b.alive
    assert c.args[0] is fused
    assert c in fused.users
    # a new node after the rewrite takes the next free name of its base
    assert g.before(c).call("aten.mul.Tensor", [x, x], "s4x8").name == "mul_1"


def test_inserting_before_an_erased_node_is_refused() -> None:
    g, (x, w, a, b, c) = _chain()
    g.replace(b, a, [])
    g.commit()
    with pytest.raises(AssertionError, match="erased"):
        g.before(b)
