"""Per-section indexes the pattern scan reads: nodes by name, distinct inputs and users, op kinds.

Only placeholders and calls are nodes here. The ``output`` line is not: a value it reads is recorded in
:attr:`Section.outputs` (it leaves the graph) instead of as a user, so no neighbourhood walk can step onto
it. Every name a walk can reach is a key of :attr:`Section.nodes`: references to names without a line
(weights and buffers: ``get_attr`` is never dumped) are parameters, found through :meth:`Section.params`.
"""

from __future__ import annotations

import re

from ad_diff.candidates.ops import CASTS, kind
from ad_diff.core.graphops import op_name
from ad_diff.core.limits import INT_DIGITS
from ad_diff.kinds.graph.model import GraphNode, GraphSection

LAYER = re.compile(rf"(?:^|_)(?:layers|layer|h|blocks|block|decoder_layers)_(\d{{1,{INT_DIGITS}}})(?:_|$)")
"""A layer index in a node or parameter name; a longer digit run is no index (never handed to ``int()``:
:data:`ad_diff.core.limits.INT_DIGITS`)."""


_ASSERT = re.compile(r"_assert|sym_constrain_range")
"""Runtime checks ``torch.export`` leaves in a graph (``_assert_tensor_metadata``): they read, never use."""


def node_kind(n: GraphNode) -> str:
    """:func:`~ad_diff.candidates.ops.kind` of a node; ``input`` for placeholders."""
    if n.op == "placeholder":
        return "input"
    return kind(n.target, n.meta.dtype if n.meta else None)


class Section:
    """Indexes of one GraphModule section. Built in one pass over its nodes (linear in the section)."""

    def __init__(self, index: int, sec: GraphSection) -> None:
        self.index = index
        """Position of the section in the dump (names may repeat in a hostile dump; positions do not)."""
        self.name = sec.name
        nodes: dict[str, GraphNode] = {}
        first: dict[str, int] = {}
        for k, n in enumerate(sec.nodes):
            # a repeated name keeps its first line: later lines cannot be told apart by their readers
            if n.op != "output" and n.name not in nodes:
                nodes[n.name] = n
                first[n.name] = k
        self.nodes = nodes
        self.order = {name: i for i, name in enumerate(nodes)}
        self.line = {name: sec.line_of(k) for name, k in first.items()}
        """Line number of each node in the dump."""
        self.users: dict[str, list[str]] = {name: [] for name in nodes}
        self.inputs: dict[str, list[str]] = {}
        self.outputs: set[str] = set()
        for k, n in enumerate(sec.nodes):
            ins = [i for i in dict.fromkeys(n.inputs()) if i in nodes]
            if n.op == "output":
                self.outputs.update(ins)
                continue
            if first[n.name] != k:  # by position: two equal lines are one node object
                continue
            self.inputs[n.name] = ins
            if _ASSERT.match(op_name(n.target)):
                continue  # a runtime check reads a value without consuming it: no user of it
            for i in ins:
                self.users[i].append(n.name)
        self.kinds = {name: node_kind(n) for name, n in nodes.items()}
        self._running: dict[str, int | None] | None = None
        self.param_derived = self._param_derived()
        """Layout ops and casts of parameters (or of such values), transitively: a ``transpose`` of a weight
        or a ``stack`` of expert weights is a parameter, not data."""

    def _param_derived(self) -> set[str]:
        out: set[str] = set()
        for name, n in self.nodes.items():  # dump order: inputs come first
            if self.kinds[name] != "layout" and op_name(n.target) not in CASTS:
                continue
            ins = [i for i in self.inputs[name] if self.kinds[i] != "symbolic"]  # sizes are no data
            weights = any(a.node and a.text not in self.nodes for a in n.args) or any(
                r not in self.nodes for a in n.args for r in a.refs
            )
            if all(i in out for i in ins) and (weights or ins):
                out.add(name)
        return out

    def params(self, node: GraphNode) -> list[str]:
        """``%name`` arguments with no node of their own: weights and buffers."""
        return [a.text for a in node.args if a.node and a.text not in self.nodes]

    def neighbours(self, name: str) -> list[str]:
        """Inputs and users of ``name`` (never the output line)."""
        return [*self.inputs[name], *self.users[name]]

    def running_layer(self, name: str) -> int | None:
        """The last layer index named at or before ``name`` in dump order (graphs run layer by layer), for
        patterns (layout glue, attention) whose own and neighbouring names carry no index."""
        if self._running is None:
            self._running, last = {}, None
            for n, node in self.nodes.items():
                for x in (n, *self.params(node)):
                    if m := LAYER.search(x):
                        last = int(m.group(1))
                self._running[n] = last
        return self._running.get(name)
