"""The shared graph helpers (ad_diff.core.graphops): the union-find against a naive connected-components
reference, and the op name of every target form FORMATS.md lists."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ad_diff.core.graphops import UnionFind, op_name

_INTS = st.integers(min_value=0, max_value=40)
_NAMES = st.text(alphabet="abcxyz_", min_size=1, max_size=3)


def _components(items: list, edges: list[tuple]) -> dict:
    """Naive reference: every item -> the set of items reachable from it over ``edges`` (both ways)."""
    nbrs: dict = {x: set() for x in items}
    for a, b in edges:
        nbrs.setdefault(a, set()).add(b)
        nbrs.setdefault(b, set()).add(a)
    comp: dict = {}
    for start in nbrs:
        if start in comp:
            continue
        seen, stack = {start}, [start]
        while stack:
            for y in nbrs[stack.pop()]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        for x in seen:
            comp[x] = frozenset(seen)
    return comp


def _naive_groups(order: list, comp: dict) -> list[list]:
    groups: list[list] = []
    for x in order:
        for g in groups:
            if x in comp[g[0]]:
                g.append(x)
                break
        else:
            groups.append([x])
    return groups


@pytest.mark.parametrize("items", [_INTS, _NAMES], ids=["ints", "names"])
def test_union_find_matches_connected_components(items: st.SearchStrategy) -> None:
    @given(st.lists(st.tuples(items, items), max_size=60), st.lists(items, max_size=30))
    def check(edges: list[tuple], extra: list) -> None:
        uf: UnionFind = UnionFind()
        for a, b in edges:
            uf.union(a, b)
        order = list(dict.fromkeys([x for e in edges for x in e] + extra))
        comp = _components(order, edges)
        for x in order:
            assert uf.find(x) == min(comp[x])  # the root is the smallest member
        assert uf.groups(order) == _naive_groups(order, comp)

    check()


@given(st.lists(st.tuples(_INTS, _INTS), max_size=60), st.randoms())
def test_groups_do_not_depend_on_union_order(edges: list[tuple[int, int]], rnd) -> None:
    order = sorted({x for e in edges for x in e})
    first: UnionFind[int] = UnionFind()
    for a, b in edges:
        first.union(a, b)
    shuffled = [(b, a) if rnd.random() < 0.5 else (a, b) for a, b in edges]
    rnd.shuffle(shuffled)
    second: UnionFind[int] = UnionFind()
    for a, b in shuffled:
        second.union(a, b)
    assert first.groups(order) == second.groups(order)
    assert first.groups(reversed(order)) == second.groups(reversed(order))


def test_unseen_item_is_its_own_set() -> None:
    uf: UnionFind[str] = UnionFind()
    uf.union("b", "c")
    assert uf.find("a") == "a"
    assert uf.groups(["c", "a", "b"]) == [["c", "b"], ["a"]]


_IDENT = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=8)


@given(_IDENT, _IDENT, st.one_of(st.none(), _IDENT))
def test_op_name_of_an_op_overload(ns: str, op: str, overload: str | None) -> None:
    target = f"{ns}.{op}" if overload is None else f"{ns}.{op}.{overload}"
    assert op_name(target) == op


_CALLABLE_FORMS = ["<built-in function {}>", "<function {} at 0x7f3a2c>", "<built-in method {} of"]


@given(_IDENT, st.sampled_from(_CALLABLE_FORMS))
def test_op_name_of_a_python_callable(name: str, form: str) -> None:
    assert op_name(form.format(name)) == name


@given(_IDENT)
def test_op_name_of_a_method_is_the_method(name: str) -> None:
    assert op_name(name) == name


def test_op_name_keeps_an_unknown_bracket_form() -> None:
    assert op_name("<lambda>") == "<lambda>"
