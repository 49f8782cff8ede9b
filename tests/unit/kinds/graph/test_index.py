"""The packed alignment index (``ad_diff.kinds.graph.index``) against its definitions.

The invariant: two nodes (of either run) have equal forward signatures exactly when their unfoldings up the
graph are equal (target, literals, external names and, recursively, the inputs in argument order), and
equal backward signatures exactly when their unfoldings down the graph are (target, placeholder or not and
the multiset of (user, argument position)). The reference here computes both as exact canonical ids by
interning nested keys (no hash); the index must induce the same partition of both sections' nodes, however
it shortcuts (a shared prefix or suffix taken from the other run's index). Random graphs are drawn with
many repeated shapes, so equal signatures are common, not rare.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.kinds.graph.index import GraphIndex, strip_counter
from ad_diff.kinds.graph.linememo import LineMemo
from ad_diff.kinds.graph.model import GraphSection
from ad_diff.kinds.graph.parse import parse_text

F32 = "torch.float32"
_TARGETS = ["aten.add.Tensor", "aten.mul.Tensor", "aten.view.default", "<built-in function getitem>"]


@st.composite
def sections(draw: st.DrawFn) -> list[str]:
    """The SSA lines of a random section: placeholders, then calls reading earlier nodes, weights (never
    defined: external), names defined later (external too), literals and lists naming nodes."""
    lines = [f"%x{k} : 2x{k % 2} : {F32}" for k in range(draw(st.integers(1, 3)))]
    names = [f"x{k}" for k in range(len(lines))]
    for i in range(draw(st.integers(1, 14))):
        name = draw(st.sampled_from(["add", "mul", "view", "getitem"])) + f"_{i}"
        args = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["node", "node", "weight", "later", "lit", "list"]))
            if kind == "node":
                args.append(f"%{draw(st.sampled_from(names))} : 2x1 : {F32}")
            elif kind == "weight":
                args.append(f"%w_{draw(st.integers(0, 1))} : 2 : {F32}")
            elif kind == "later":
                args.append(f"%zz_{i + 1} : 2 : {F32}")
            elif kind == "lit":
                args.append(draw(st.sampled_from(["1", "-1", "None"])))
            else:
                args.append("[" + ", ".join(draw(st.lists(st.sampled_from([*names, "s0", "2"]), max_size=3)))
                            + "]")
        lines.append(f"%{name} = {draw(st.sampled_from(_TARGETS))}({', '.join(args)}) : 2x1 : {F32}")
        names.append(name)
    lines.append(f"output %{names[-1]}")
    return lines


def _section(lines: list[str], memo: LineMemo | None = None, name: str = "x") -> GraphSection:
    text = "# Transform: t\n# Stage: s\n\n" + "\n".join(lines) + "\n"
    return parse_text(text, Path(f"{name}.txt"), memo).sections[0]


def _reference(secs: list[GraphSection]) -> tuple[list[int], list[int]]:
    """Exact forward and backward classes of every node of ``secs`` (in order), by interning."""
    table: dict[object, int] = {}
    fwd_all: list[int] = []
    bwd_all: list[int] = []
    for sec in secs:
        nodes = sec.nodes
        pos = {n.name: i for i, n in enumerate(nodes)}
        fwd: list[int] = []
        users: list[list[tuple[int, int]]] = [[] for _ in nodes]
        for i, n in enumerate(nodes):
            if n.op == "placeholder":
                fwd.append(table.setdefault(("P", strip_counter(n.name)), len(table)))
                continue
            labels: list[object] = []
            for k, a in enumerate(n.args):
                if a.node:
                    j = pos.get(a.text)
                    if j is None or j >= i:
                        labels.append(("W", strip_counter(a.text)))
                    else:
                        users[j].append((i, k))
                        labels.append(("N", fwd[j]))
                elif a.refs:
                    sub: list[object] = []
                    for r in a.refs:
                        j = pos.get(r)
                        if j is None or j >= i:
                            sub.append(("S", r))
                        else:
                            users[j].append((i, k))
                            sub.append(("N", fwd[j]))
                    labels.append(("R", tuple(sub)))
                else:
                    labels.append(("L", a.text))
            target = n.target
            fwd.append(table.setdefault(("C", target, tuple(labels)), len(table)))
        bwd = [0] * len(nodes)
        for i in range(len(nodes) - 1, -1, -1):
            n = nodes[i]
            key = tuple(sorted((bwd[u], k) for u, k in users[i]))
            head = ("P", strip_counter(n.name)) if n.op == "placeholder" else ("C", n.target)
            bwd[i] = table.setdefault(("B", head, key), len(table))
        fwd_all += fwd
        bwd_all += bwd
    return fwd_all, bwd_all


def _same_partition(a: list[int], b: list[int]) -> bool:
    pairs = set(zip(a, b, strict=True))
    return len(pairs) == len(set(a)) == len(set(b))


@settings(max_examples=300, deadline=None)
@given(lb=sections(), mutate=st.lists(st.integers(0, 30), max_size=3), drop=st.booleans())
def test_signatures_partition_as_the_unfoldings(lb: list[str], mutate: list[int], drop: bool) -> None:
    """Both runs' signatures split the nodes exactly as the unfoldings do, with the candidate's index built
    from the baseline's (memo-parsed: shared leading and trailing nodes) or on its own."""
    lc = list(lb)
    for m in mutate:  # rewire or drop a line in the middle: the leading and trailing lines stay shared
        k = len(lc[:-1]) and 1 + m % max(1, len(lc) - 2)
        if 0 < k < len(lc) - 1 and " = " in lc[k]:
            lc[k] = lc[k].replace("aten.add", "aten.mul") if not drop else lc[k].replace("(%", "(%w_9 : 2 : "
                                                                                          + F32 + ", %", 1)
    memo = LineMemo()
    sb, sc = _section(lb, memo, "b"), _section(lc, memo, "c")
    B = GraphIndex(sb)
    C = GraphIndex(sc, like=B)
    fwd, bwd = _reference([sb, sc])
    assert _same_partition([*B.fwd.tolist(), *C.fwd.tolist()], fwd)
    assert _same_partition([*B.bwd.tolist(), *C.bwd.tolist()], bwd)
    alone = GraphIndex(sc, ids=B.ids)  # nothing taken from the baseline's index: the same columns
    for field in ("tid", "op", "mknown", "mshape", "mdtype", "mtext", "lits", "ext", "in_ptr", "in_src",
                  "in_arg", "us_ptr", "us_node", "us_arg", "fwd", "bwd"):
        assert np.array_equal(getattr(C, field), getattr(alone, field)), field


@settings(max_examples=200, deadline=None)
@given(lines=sections())
def test_users_are_the_inputs_transposed(lines: list[str]) -> None:
    x = GraphIndex(_section(lines))
    ptr = x.in_ptr.tolist()
    ins = [list(zip(x.in_src[ptr[i]:ptr[i + 1]].tolist(), x.in_arg[ptr[i]:ptr[i + 1]].tolist(), strict=True))
           for i in range(len(x))]
    edges = sorted((j, i, k) for i in range(len(x)) for j, k in ins[i])
    got = [(j, u, k) for j in range(len(x)) for u, k in x.users_of(j)]
    assert got == edges  # every input edge once, users in (reader, argument) order
    assert [x.inputs_of(i) for i in range(len(x))] == [
        [int(v) for v in x.in_src[x.in_ptr[i]:x.in_ptr[i + 1]]] for i in range(len(x))]


def test_a_shared_suffix_takes_the_backward_signatures() -> None:
    """A change in the first lines leaves the trailing nodes' users as they were: the candidate's index takes
    their backward signatures from the baseline's (and they are the ones a full build gives)."""
    reads = ["x", *(f"a_{i}" for i in range(11))]
    lines = [f"%x : 2 : {F32}", *(f"%a_{i} = aten.neg.default(%{reads[i]} : 2 : {F32}) : 2 : {F32}"
                                  for i in range(12)), "output %a_11"]
    changed = [lines[0], lines[1].replace("neg", "relu"), *lines[2:]]
    memo = LineMemo()
    B = GraphIndex(_section(lines, memo, "b"))
    C = GraphIndex(_section(changed, memo, "c"), like=B)
    assert C.shared == 1
    assert C.tail == len(lines) - 2
    assert np.array_equal(C.bwd, GraphIndex(C.section, ids=B.ids).bwd)
    assert C.fwd[5] != B.fwd[5]  # downstream of the change: new inputs ...
    assert C.bwd[5] == B.bwd[5]  # ... the same users
