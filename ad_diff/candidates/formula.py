"""Short formulas of a pattern, the same notation for a graph instance and an upstream pattern function.

``w * (x / sqrt(mean(x^2) + 1e-05))`` tells a developer more than two op lists: it is what the report puts
beside an upstream pattern (``weight * (data * rsqrt(mean(data^2) + eps))``) when the two differ. Casts and
copies are left out (they change no value), reduction dims and other literal arguments of named ops are
dropped, and every formula is cut at :data:`MAX_LEN` characters. Building is bounded by :data:`MAX_DEPTH`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ad_diff.candidates.ops import NEUTRAL, canonical_target
from ad_diff.kinds.graph.model import GraphNode

MAX_LEN = 160
"""Longest formula written; longer ones end in ``…``."""
MAX_DEPTH = 48
"""Deepest expression built; deeper operands render as ``…``."""

_INFIX = {"add": ("+", 1), "sub": ("-", 1), "mul": ("*", 2), "div": ("/", 2), "matmul": ("@", 2)}


@dataclass(frozen=True, slots=True)
class Expr:
    """An op applied to operands, or a leaf (``op`` empty: a name or a literal)."""

    op: str = ""
    text: str = ""
    args: tuple[Expr, ...] = ()


def leaf(text: str) -> Expr:
    """A name or literal."""
    return Expr("", text)


ELLIPSIS = leaf("…")


def _render(e: Expr, depth: int, budget: list[int]) -> tuple[str, int]:
    """``(text, precedence)``: 9 for atoms and calls, 3 for powers and negation, 2/1 for * / and + -.

    ``budget`` counts the operands still to visit: shared sub-expressions render once per use, so without it
    a chain of diamonds would render in exponential time."""
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        return "…", 9
    if not e.op:
        return e.text, 9
    if e.op in NEUTRAL and e.args:
        return _render(e.args[0], depth + 1, budget)
    parts = [_render(a, depth + 1, budget) for a in e.args]
    if e.op == "pow" and len(parts) == 2:
        base, exp = parts
        return f"{base[0] if base[1] >= 9 else f'({base[0]})'}^{exp[0]}", 3
    if e.op == "neg" and len(parts) == 1:
        return f"-{parts[0][0] if parts[0][1] >= 3 else f'({parts[0][0]})'}", 3
    if e.op in _INFIX and len(parts) == 2:
        sym, prec = _INFIX[e.op]
        (lt, lp), (rt, rp) = parts
        left = lt if lp >= prec else f"({lt})"
        # the right operand keeps its parentheses at equal precedence: w * (x / y) shows the graph's nesting
        right = rt if rp > prec else f"({rt})"
        return f"{left} {sym} {right}", prec
    return f"{e.op.split('::')[-1]}({', '.join(t for t, _ in parts)})", 9


def render(e: Expr) -> str:
    """The formula of ``e``, at most :data:`MAX_LEN` characters."""
    return _cut(_render(e, 0, [MAX_LEN])[0])


def render_all(roots: Sequence[Expr]) -> str:
    """Formulas of several outputs, comma separated (a pattern returning ``q_embed, k_embed``)."""
    budget = [MAX_LEN]
    return _cut(", ".join(_render(r, 0, budget)[0] for r in roots))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LEN else text[: MAX_LEN - 1] + "…"


def graph_formula(nodes: Sequence[GraphNode], is_param: Callable[[str], bool]) -> str:
    """Formula of a graph instance: the expression of its last node (dump order), operands inside the
    instance expanded, outside tensors named ``x``, ``y``, ``z`` ... and parameters ``w``, ``w2`` ... in the
    order the expression reads them."""
    local = {n.name: n for n in nodes}
    names: dict[str, str] = {}
    counts = {"w": 0, "x": 0}
    letters = ("x", "y", "z")

    def ext(name: str) -> Expr:
        if name not in names:
            kind = "w" if is_param(name) else "x"
            counts[kind] += 1
            i = counts[kind]
            if kind == "w":
                names[name] = "w" if i == 1 else f"w{i}"
            else:
                names[name] = letters[i - 1] if i <= len(letters) else f"x{i}"
        return leaf(names[name])

    built: dict[str, Expr] = {}

    def build(n: GraphNode, depth: int) -> Expr:
        # memoised, and a name met again while it is being built (a cycle in a hostile dump) is cut
        if n.name in built:
            return built[n.name]
        if depth > MAX_DEPTH:
            return ELLIPSIS
        built[n.name] = ELLIPSIS
        op = canonical_target(n.target)
        keep_literals = op in _INFIX or op == "pow"
        args: list[Expr] = []
        for a in n.args:
            if a.node:
                args.append(build(local[a.text], depth + 1) if a.text in local else ext(a.text))
            elif a.refs:
                args.extend(build(local[r], depth + 1) if r in local else ext(r) for r in a.refs)
            elif keep_literals:
                args.append(leaf(a.text))
        built[n.name] = Expr(op, "", tuple(args))
        return built[n.name]

    return render(build(nodes[-1], 0)) if nodes else ""
