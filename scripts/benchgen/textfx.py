"""A small text model of a ``torch.fx`` graph, enough to replay what AD's transforms do to a graph without
torch: FX-style node names (per-base counters that never reuse a name), arguments rendered with the
current metadata of the node they point at, rewrites that insert nodes before an anchor, re-point users
and erase what became dead, and the D3 rendering of FORMATS.md 2.2/2.3.

Rendering a state is one pass over the live nodes, so a benchmark-size graph (80 layers, ~5,000 nodes)
renders in milliseconds and every distinct graph state of a pipeline is rendered once.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Union

BF16 = "torch.bfloat16"
F32 = "torch.float32"
I64 = "torch.int64"
I32 = "torch.int32"
RULE = "=" * 80

# FX never names a node after a Python builtin or keyword (``pow`` becomes ``pow_1``); a fixed list of the
# ones AD graphs can hit keeps the names independent of the interpreter version.
_ILLEGAL = frozenset(
    [
        "abs",
        "all",
        "any",
        "bool",
        "dict",
        "float",
        "format",
        "hash",
        "id",
        "input",
        "int",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "pow",
        "range",
        "round",
        "set",
        "slice",
        "sorted",
        "str",
        "sum",
        "tuple",
        "type",
        "zip",
        "and",
        "as",
        "assert",
        "break",
        "class",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "for",
        "from",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "try",
        "while",
        "with",
        "yield",
        "None",
        "True",
        "False",
    ]
)
_SUFFIX = re.compile(r"(.*)_(\d+)$")


class Namer:
    """FX's ``_Namespace.create_name``: ``add``, ``add_1``, ``add_2``, ... per base, never reusing a name."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._count: dict[str, int] = defaultdict(int)

    def __call__(self, candidate: str) -> str:
        m = _SUFFIX.match(candidate)
        base, num = (candidate, 0) if m is None else (m.group(1), int(m.group(2)))
        name = candidate if m is None else f"{base}_{num}"
        if not num:
            num = self._count[base]
        while name in self._used or name in _ILLEGAL:
            num += 1
            name = f"{base}_{num}"
        self._used.add(name)
        self._count[base] = num
        return name


Arg = Union["Node", str, list[Union["Node", str]]]


@dataclass(eq=False)
class Node:
    """One graph node. ``op`` is ``placeholder``, ``get_attr`` (weights: never a dump line), ``call`` or
    ``output``; ``shape``/``dtype`` are the rendered ``meta["val"]`` (tuple forms included)."""

    name: str
    op: str
    target: str
    args: list[Arg]
    shape: str
    dtype: str
    as_arg: str | None = None
    """How the node renders as an argument when not ``%name : shape : dtype`` (``? : tuple``)."""
    users: list[Node] = field(default_factory=list)
    alive: bool = True

    def ref(self) -> str:
        """This node as a call argument (FORMATS.md 2.3 ``<arg>``)."""
        return f"%{self.name} : {self.as_arg or f'{self.shape} : {self.dtype}'}"


def _arg_text(a: Arg) -> str:
    if isinstance(a, Node):
        return a.ref()
    if isinstance(a, list):  # lists print bare node names, no metadata
        return "[" + ", ".join(x.name if isinstance(x, Node) else x for x in a) + "]"
    return a


def _nodes_in(args: Iterable[Arg]) -> Iterator[Node]:
    for a in args:
        if isinstance(a, Node):
            yield a
        elif isinstance(a, list):
            yield from (x for x in a if isinstance(x, Node))


def base_of(target: str) -> str:
    """FX's node name stem for a target: ``aten.add.Tensor`` -> ``add``, ``<built-in function getitem>`` ->
    ``getitem``, ``aten.sym_size.int`` -> ``sym_size_int`` (as torch.export names it)."""
    if target.startswith("<built-in function "):
        return target.removeprefix("<built-in function ").rstrip(">")
    parts = target.split(".")
    if len(parts) == 3:
        return "sym_size_int" if parts[1] == "sym_size" else parts[1]
    return target


class Graph:
    """Nodes in order plus the insert point of the rewrite in progress (see :meth:`commit`)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.names = Namer()
        self.module_name = "(root)"
        self._anchor: Node | None = None
        self._pending: dict[int, list[Node]] = defaultdict(list)

    # ------------------------------------------------------------------ building
    def _add(self, node: Node) -> Node:
        for a in _nodes_in(node.args):
            a.users.append(node)
        if self._anchor is None:
            self.nodes.append(node)
        else:
            self._pending[id(self._anchor)].append(node)
        return node

    def placeholder(self, name: str, shape: str, dtype: str) -> Node:
        """An input node, placed with the other inputs at the top of the graph."""
        node = Node(self.names(name), "placeholder", "", [], shape, dtype)
        at = next((i for i, n in enumerate(self.nodes) if n.op != "placeholder"), len(self.nodes))
        self.nodes.insert(at, node)
        return node

    def weight(self, name: str, shape: str, dtype: str = BF16) -> Node:
        """A parameter or buffer (``get_attr``): only ever seen as an argument."""
        return Node(name, "get_attr", "", [], shape, dtype)

    def call(
        self,
        target: str,
        args: list[Arg],
        shape: str,
        dtype: str = BF16,
        *,
        base: str | None = None,
        as_arg: str | None = None,
    ) -> Node:
        """A ``call_*`` node, appended (while building) or inserted before the anchor (while rewriting)."""
        return self._add(
            Node(self.names(base or base_of(target)), "call", target, args, shape, dtype, as_arg)
        )

    def output(self, node: Node) -> None:
        """The graph's ``output`` node."""
        self._add(Node("output", "output", "output", [node], "", ""))

    # ------------------------------------------------------------------ rewriting
    def before(self, anchor: Node) -> Graph:
        """Insert the next :meth:`call` nodes just before ``anchor`` (visible after :meth:`commit`)."""
        assert anchor.alive, f"cannot insert before {anchor.name}: it was erased"
        assert anchor.op != "placeholder", "inputs are added with placeholder()"
        self._anchor = anchor
        return self

    def replace_uses(self, old: Node, new: Node) -> None:
        """Point every user of ``old`` at ``new``."""
        for u in old.users:
            u.args = [
                new if a is old else [new if x is old else x for x in a] if isinstance(a, list) else a
                for a in u.args
            ]
            new.users.append(u)
        old.users = []

    def erase(self, node: Node) -> None:
        """Remove ``node`` (it must have no users)."""
        assert not node.users, f"{node.name} still has users"
        node.alive = False
        for a in _nodes_in(node.args):
            a.users = [u for u in a.users if u is not node]

    def erase_dead(self, nodes: Iterable[Node]) -> None:
        """Erase the nodes of ``nodes`` left without users, repeatedly, so whole dead chains go."""
        todo = list(nodes)
        while dead := [n for n in todo if n.alive and not n.users and n.op != "output"]:
            for n in dead:
                self.erase(n)

    def replace(self, old: Node, new: Node, pattern: Iterable[Node]) -> None:
        """``old``'s users use ``new``; ``old`` and the nodes of ``pattern`` left dead are erased."""
        self.replace_uses(old, new)
        self.erase_dead([*pattern, old])

    def commit(self) -> None:
        """End a rewrite: place inserted nodes, drop erased ones."""
        order: list[Node] = []
        for n in self.nodes:
            order += self._pending.pop(id(n), ())
            if n.alive:
                order.append(n)
        assert not self._pending, "nodes inserted before a node that is not in the graph"
        self.nodes = [n for n in order if n.alive]
        self._pending.clear()
        self._anchor = None

    # ------------------------------------------------------------------ reading
    def find(self, target: str) -> list[Node]:
        """Live nodes calling ``target``, in order."""
        return [n for n in self.nodes if n.op == "call" and n.target == target]

    def lines(self) -> list[str]:
        """The SSA lines of this graph (FORMATS.md 2.3), in node order; weights are not lines."""
        out: list[str] = []
        for n in self.nodes:
            if n.op == "placeholder":
                out.append(f"%{n.name} : {n.shape} : {n.dtype}")
            elif n.op == "output":
                out.append("output " + ", ".join(f"%{a.name}" for a in _nodes_in(n.args)))
            elif n.op == "call":
                out.append(
                    f"%{n.name} = {n.target}({', '.join(map(_arg_text, n.args))}) : {n.shape} : {n.dtype}"
                )
        return out

    def body(self) -> str:
        """A D3 dump without its first two lines (``# Transform:``/``# Stage:``): those name the file."""
        head = ["# GraphModules found: 1", "", "", RULE, f"# GraphModule: {self.module_name}", RULE, ""]
        return "\n".join(head + self.lines()) + "\n"


def d3_file(stage: str, key: str, body: str) -> str:
    """The text of ``NNN_<stage>_<key>.txt`` holding ``body``."""
    return f"# Transform: {key}\n# Stage: {stage}\n{body}"
