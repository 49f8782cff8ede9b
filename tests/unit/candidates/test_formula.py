"""Formulas of graph instances and of pattern expressions: notation, precedence, bounds."""

from __future__ import annotations

from ad_diff.candidates.formula import MAX_LEN, Expr, graph_formula, leaf, render
from ad_diff.candidates.scan import scan_dump
from ad_diff.kinds.graph.parse import parse
from tests.unit.candidates.conftest import C, call, dump, t


def test_precedence_and_notation() -> None:
    x, y, z = leaf("x"), leaf("y"), leaf("z")
    assert render(Expr("mul", "", (x, Expr("div", "", (y, z))))) == "x * (y / z)"
    assert render(Expr("div", "", (Expr("add", "", (x, y)), z))) == "(x + y) / z"
    assert render(Expr("sub", "", (x, Expr("sub", "", (y, z))))) == "x - (y - z)"
    assert render(Expr("pow", "", (Expr("add", "", (x, y)), leaf("2")))) == "(x + y)^2"
    assert render(Expr("neg", "", (x,))) == "-x"
    assert render(Expr("to", "", (x, leaf("float32")))) == "x"  # casts change no value
    assert render(Expr("auto_deploy::torch_linear_simple", "", (x, y))) == "torch_linear_simple(x, y)"


def test_graph_formula_of_the_sqrt_div_norm() -> None:
    g = next(g for g in scan_dump(parse(C / "sqrt_div" / "graphs" / "026_compile_compile_model.txt")))
    assert g.family == "rmsnorm"
    assert g.formula == "w * (x / sqrt(mean(x^2) + 1e-05))"


def test_shared_subexpressions_and_cycles_stay_bounded() -> None:
    # n_i = n_{i-1} * n_{i-1}: rendering every use would take 2^60 steps
    lines = [t("x")]
    prev = "x"
    for i in range(60):
        lines.append(call(f"n{i}", "aten.mul.Tensor", t(prev), t(prev)))
        prev = f"n{i}"
    lines.append(f"output %{prev}")
    sec = dump(("(root)", lines)).sections[0]
    nodes = [n for n in sec.nodes if n.op == "call"]
    text = graph_formula(nodes, lambda name: False)
    assert len(text) <= MAX_LEN
    assert text.endswith("…")
    # a node reading itself (a hostile dump) is cut, not followed forever
    loop = dump(("(root)", [t("x"), call("a", "aten.add.Tensor", t("a"), t("x")), "output %a"])).sections[0]
    assert graph_formula([n for n in loop.nodes if n.op == "call"], lambda name: False) == "… + x"
