"""Within-run measurements from node identity (``body_change``): the same figures as comparing every node by
name (``run_delta`` without a change) and counting every node (``coverage``), on dumps built to differ in
each way a transform can change a graph, and on dumps that are not simple (repeated names or lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.kinds.graph.linememo import LineMemo
from ad_diff.kinds.graph.measure import NodeTable, body_change, coverage, coverage_after, run_delta
from ad_diff.kinds.graph.parse import parse_text
from scripts.synth_dumps import Spec, build

HEAD = "# Transform: t\n# Stage: s\n# GraphModules found: {n}\n\n"
SEC = "\n" + "=" * 80 + "\n# GraphModule: {name}\n" + "=" * 80 + "\n\n"


def _d3(*sections: tuple[str, list[str]]) -> str:
    body = "".join(SEC.format(name=n) + "\n".join(ls) + "\n" for n, ls in sections)
    return HEAD.format(n=len(sections)) + body


X = "%x : 2x3 : torch.float32"
Y = "%y : 2x3 : torch.float32"
ADD = "%add = aten.add.Tensor(%x : 2x3 : torch.float32, %y : 2x3 : torch.float32) : 2x3 : torch.float32"
ADD_LOST = "%add = aten.add.Tensor(%x : 2x3 : torch.float32, %y : 2x3 : torch.float32) : ? : N/A"
ADD_REWIRED = ("%add = aten.add.Tensor(%y : 2x3 : torch.float32, %x : 2x3 : torch.float32) : 2x3 : "
               "torch.float32")
MUL = "%mul = aten.mul.Tensor(%add : 2x3 : torch.float32, 2) : 2x3 : torch.float32"
RELU = "%relu = aten.relu.default(%mul : 2x3 : torch.float32) : 2x3 : torch.float32"
OUT_MUL, OUT_RELU = "output %mul", "output %relu"

PAIRS = {
    "synthetic fusion": (build(Spec(layers=3, fused_norm=False)), build(Spec(layers=3))),
    "unfused layer": (build(Spec(layers=3)), build(Spec(layers=3, unfused_layers=(1,)))),
    "renamed counters": (build(Spec(layers=3)), build(Spec(layers=3, counter_offset=2))),
    "metadata lost": (build(Spec(layers=3)), build(Spec(layers=3, norm_meta=False))),
    "sections": (_d3(("(root)", [X, Y, ADD, MUL, OUT_MUL]), ("sub", [X, ADD, OUT_MUL])),
                 _d3(("(root)", [X, Y, ADD_LOST, MUL, RELU, OUT_RELU]), ("other", [X, Y, ADD, OUT_MUL]))),
    "rewired and removed": (_d3(("(root)", [X, Y, ADD, MUL, RELU, OUT_RELU]), ("sub", [Y, MUL, OUT_MUL])),
                            _d3(("(root)", [X, Y, ADD_REWIRED, OUT_MUL]))),
    "a name twice": (_d3(("(root)", [X, Y, ADD, ADD_LOST, MUL, OUT_MUL])),
                     _d3(("(root)", [X, Y, ADD, OUT_MUL]))),
    "a line twice": (_d3(("(root)", [X, Y, ADD, MUL, OUT_MUL])), _d3(("(root)", [X, Y, ADD, ADD, OUT_MUL]))),
    "a section twice": (_d3(("(root)", [X, Y, ADD, OUT_MUL]), ("(root)", [X, MUL])),
                        _d3(("(root)", [X, Y, ADD_LOST, OUT_MUL]))),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_identity_delta_and_coverage_equal_the_full_comparison(case: str) -> None:
    before, after = PAIRS[case]
    memo = LineMemo()  # one object per line text, as the analysis parses them
    a, b = parse_text(before, Path("a"), memo), parse_text(after, Path("b"), memo)
    change = body_change(NodeTable(a), NodeTable(b))
    simple = case not in ("a name twice", "a line twice", "a section twice")
    assert (change is not None) == simple
    assert run_delta(a, b, False, change) == run_delta(a, b, False)
    if change is not None:
        assert coverage_after(coverage(a), change) == coverage(b)


def test_the_delta_counts_what_changed() -> None:
    memo = LineMemo()
    before, after = PAIRS["rewired and removed"]
    a, b = parse_text(before, Path("a"), memo), parse_text(after, Path("b"), memo)
    d = run_delta(a, b, False, body_change(NodeTable(a), NodeTable(b)))
    # mul and relu removed from (root), all of sub; add (inputs swapped) and output (reads mul, not relu)
    # are kept by name but rewired, so each counts as removed and added
    assert d.removed_names == ("mul", "relu", "sub/y", "sub/mul", "sub/output")
    assert (d.added, d.removed, d.meta_changed) == (0 + 2, 5 + 2, 0)
