"""Packed array view of one GraphSection used by node alignment: inputs and users by index, and structural
signatures.

Signatures are Weisfeiler-Lehman style hashes computed to full depth: ``fwd`` from placeholders and
external names (weights) down the graph, ``bwd`` from the output up. Node names of call nodes never enter a
signature (they shift when a pass is added); names of placeholders and of external references (weights,
buffers: ``get_attr`` nodes are not dumped) do, counter suffix removed, because AD derives them from the
module path and they anchor each layer.

The index is arrays (numpy), so that the match chain (:mod:`ad_diff.kinds.graph.align`) works on whole
columns: per node its target, metadata, literals and external names as exact ids, its signatures; inputs
and users as packed rows. It is filled by one pass over the node objects in dump order, which reads each
line's arguments, resolves the names it reads and hashes the node's forward signature in the same visit,
then one pass in reverse for the backward signatures. Those two stay passes, not array rounds: a full-depth
signature is a chain as long as the graph is deep (a Llama residual stream is thousands of nodes deep), and
a joint Weisfeiler-Lehman refinement of both runs' graphs as array rounds took about 170 rounds to settle on
the benchmark's 160-layer pairs (a difference travels one node a round down the residual stream), each
round touching every node. Reading the node objects into arrays first (numpy over ``attrgetter`` maps) and
hashing after measured slower than this one visit: per argument, each extra pass over Python objects costs
about what the visit does. The candidate takes what it can from the baseline's index: the leading nodes
both sections share keep their inputs and forward signatures, the trailing ones their backward signatures.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain, count
from operator import attrgetter
from typing import TYPE_CHECKING, overload

from ad_diff.core import lazy
from ad_diff.kinds.graph.model import GraphNode, GraphSection
from ad_diff.kinds.graph.names import (
    MetaKey,
    has_counter,
    meta_agrees,
    meta_key,
    norm_target,
    short_target,
    strip_counter,
    sym_shape,
)
from ad_diff.kinds.graph.packed import machine, ptr_of

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = lazy.module("numpy")

PLACEHOLDER, CALL, OUTPUT = 0, 1, 2
"""Node kinds in :attr:`GraphIndex.op`."""
_OPS = {"placeholder": PLACEHOLDER, "call": CALL, "output": OUTPUT}
_NAME, _OP, _META = attrgetter("name"), attrgetter("op"), attrgetter("meta")
_UNKNOWN = frozenset({"N/A", "unknown"})
_Texts = tuple[str, ...] | None
"""A node's literal texts or external names, in order (``None``: none)."""


class Ids(dict[object, int]):
    """Exact ids of the values one alignment compares as columns (targets, literal tuples, external-name
    tuples, shapes, dtypes): equal values, equal ids. Made for the baseline's index and handed to the
    candidate's with ``like``; let go with the alignment."""

    def __init__(self) -> None:
        super().__init__()
        self.next = count().__next__

    def __missing__(self, key: object) -> int:
        got = self[key] = self.next()
        return got


class _Norm(dict[str, str]):
    """:func:`norm_target` of each target text, remembered (a few hundred targets per comparison)."""

    def __missing__(self, target: str) -> str:
        if len(self) >= 1 << 16:
            self.clear()
        got = self[target] = norm_target(target)
        return got


_NORM = _Norm()


class GraphIndex:
    """Positions, edges and signatures of one section's nodes (dump order = topological order).

    ``GraphIndex(section, like)`` takes what it can from the index ``like`` of the other run's section: where
    both begin with the same nodes and neither repeats a name, the leading nodes resolve their inputs to the
    same positions and so get the same inputs, literals and forward signatures (:attr:`shared` of them);
    where both end with the same nodes, those have the same users, so the same backward signatures
    (:attr:`tail` of them).

    Per node (arrays of ``len(self)``): :attr:`op`, :attr:`tid` (target id), metadata (:attr:`mknown`,
    :attr:`mshape`, :attr:`mdtype`, :attr:`mtext`), :attr:`lits` and :attr:`ext` (ids of the literal
    arguments and of the external names read, in order), :attr:`fwd` and :attr:`bwd`. Inputs (in argument
    order) and users (by reading node, then argument position) are packed rows: :attr:`in_ptr`/
    :attr:`in_src`/:attr:`in_arg` and :attr:`us_ptr`/:attr:`us_node`/:attr:`us_arg`.
    """

    __slots__ = ("section", "ids", "n", "names", "pos", "unique", "targets", "tid", "op", "mknown", "mshape",
                 "mdtype", "mtext", "lits", "ext", "in_ptr", "in_src", "in_arg", "us_ptr", "us_node",
                 "us_arg", "fwd", "bwd", "shared", "tail", "renamed")
    ids: Ids
    in_ptr: NDArray[np.intp]
    in_src: NDArray[np.intp]
    in_arg: NDArray[np.intp]
    us_ptr: NDArray[np.intp]
    us_node: NDArray[np.intp]
    us_arg: NDArray[np.intp]
    fwd: NDArray[np.int64]
    bwd: NDArray[np.int64]
    lits: NDArray[np.int64]
    ext: NDArray[np.int64]

    def __init__(self, section: GraphSection, like: GraphIndex | None = None, ids: Ids | None = None) -> None:
        """``ids``: the table of :class:`Ids` to draw from (``like``'s when given; a new one otherwise)."""
        self.section = section
        self.ids = ids = like.ids if like is not None else ids if ids is not None else Ids()
        nodes = section.nodes
        self.n = n = len(nodes)
        self.names: list[str] = list(map(_NAME, nodes))
        self.pos: dict[str, int] = dict(zip(self.names, range(n), strict=True))
        self.unique = len(self.pos) == n
        """No name repeats (inputs resolve by name to one node; what the fast paths rely on)."""
        shared = tail = 0
        if like is not None and self.unique and like.unique:
            shared = shared_prefix(like.section.nodes, nodes)
            tail = min(shared_suffix(like.section.nodes, nodes), n - shared)
        self.op = np.fromiter(map(_OPS.__getitem__, map(_OP, nodes)), np.int8, n)
        # A placeholder's target is its name without counter (a counter name, ``fused_weight_3``, is no
        # identity); a renamed graph input takes the other run's name (see :func:`input_names`), so a rename
        # reaches no signature.
        self.targets = targets = list(map(_NORM.__getitem__, map(attrgetter("target"), nodes)))
        for i in np.flatnonzero(self.op == PLACEHOLDER).tolist():
            targets[i] = strip_counter(self.names[i])
        self.renamed = input_names(like, self) if like is not None else {}
        """Placeholders compared under the other run's input name: ``{index: name}``."""
        for i, name in self.renamed.items():
            targets[i] = name
        self.tid = np.fromiter(map(ids.__getitem__, targets), np.int64, n)
        if tail and like is not None and not np.array_equal(self.tid[n - tail:], like.tid[like.n - tail:]):
            tail = 0  # a renamed input: the targets differ, so may the signatures
        self.shared = shared
        """Leading nodes whose inputs, literals and forward signatures were taken from ``like``."""
        self.tail = tail
        """Trailing nodes whose backward signatures were taken from ``like``."""
        self._metadata(nodes)
        self._forward(nodes, like)
        self.bwd = self._backward(like)

    def __len__(self) -> int:
        return self.n

    def drop_positions(self) -> None:
        """Let go of :attr:`pos` (the match chain's steps after ``exact`` resolve no name); reading it after
        is an error, not a miss."""
        del self.pos

    def _metadata(self, nodes: tuple[GraphNode, ...]) -> None:
        """Per node: whether its metadata is known, ids of its shape (symbols as ``s?``; -1 without one),
        dtype and whole text (-1 without metadata). The parser shares one object per text: each is read
        once."""
        ids = self.ids
        table = {}
        # The distinct metadata objects by identity, then each node's row through its object's identity: no
        # list of every node's key (an int object a node) is held meanwhile.
        for k, m in {id(m): m for m in map(_META, nodes)}.items():
            if m is None:
                table[k] = (0, -1, -1, -1)
            else:
                shape = -1 if m.shape is None else ids[sym_shape(m.shape)]
                table[k] = (int(m.dtype not in _UNKNOWN), shape, ids[m.dtype], ids[(m.shape, m.dtype)])
        n = self.n
        rows = np.fromiter(chain.from_iterable(map(table.__getitem__, map(id, map(_META, nodes)))), np.int64,
                           4 * n).reshape(n, 4)
        self.mknown = rows[:, 0] != 0
        self.mshape, self.mdtype, self.mtext = rows[:, 1].copy(), rows[:, 2].copy(), rows[:, 3].copy()

    def _forward(self, nodes: tuple[GraphNode, ...], like: GraphIndex | None) -> None:
        """Inputs, literals, external names and forward signatures, in one visit per node in dump order (an
        input's signature is made before its readers'). A node's forward signature is the hash of its target
        and its argument labels: an input's signature, ``("W", name)`` for an external name, ``("R", ...)``
        for a list literal naming nodes, the text of any other literal."""
        targets, get = self.targets, self.pos.get
        n, shared = self.n, self.shared
        # Machine integers, not lists of int objects: 8 bytes a value (75,000 nodes hold 150,000 edges)
        fwd = array("q", bytes(8 * n))
        lits: list[tuple[str, ...] | None] = [None] * n
        ext: list[tuple[str, ...] | None] = [None] * n
        ends = array("q", bytes(8 * n))  # how many inputs the nodes up to each hold
        src, argk = array("q"), array("q")
        add_src, add_arg = src.append, argk.append
        if shared:
            assert like is not None
            cut = int(like.in_ptr[shared])
            machine(like.in_src[:cut], src)
            machine(like.in_arg[:cut], argk)
            ends[:shared] = machine(like.in_ptr[1:shared + 1])
            fwd[:shared] = machine(like.fwd[:shared])
        for i in range(shared, n):
            node = nodes[i]
            if node.op == "placeholder":
                fwd[i] = hash(("P", targets[i]))  # the name without its counter: a counter is no identity
                ends[i] = len(src)
                continue
            labels: list[object] = []
            e: list[str] | None = None
            lt: list[str] | None = None
            for k, a in enumerate(node.args):
                if a.node:
                    j = get(a.text)
                    if j is None or j >= i:  # a name read before it is defined is no input: external
                        w = strip_counter(a.text)
                        if e is None:
                            e = []
                        e.append(w)
                        labels.append(("W", w))
                    else:
                        add_src(j)
                        add_arg(k)
                        labels.append(fwd[j])
                elif a.refs:
                    sub: list[object] = []
                    resolved = False
                    for r in a.refs:
                        j = get(r)
                        if j is None or j >= i:
                            sub.append(r)  # not a node: a symbol such as s44 printed inside a list
                        else:
                            resolved = True
                            add_src(j)
                            add_arg(k)
                            sub.append(fwd[j])
                    labels.append(("R", tuple(sub)))
                    if not resolved:  # node names inside lists are compared through the inputs instead
                        if lt is None:
                            lt = []
                        lt.append(a.text)
                else:
                    labels.append(a.text)
                    if lt is None:
                        lt = []
                    lt.append(a.text)
            if e is not None:
                ext[i] = tuple(e)
            if lt is not None:
                lits[i] = tuple(lt)
            ends[i] = len(src)
            fwd[i] = hash((targets[i], tuple(labels)))
        self._pack(fwd, (lits, ext), ends, src, argk, like)

    def _pack(self, fwd: array[int], literal: tuple[list[_Texts], list[_Texts]], ends: array[int],
              src: array[int], argk: array[int], like: GraphIndex | None) -> None:
        """The forward visit's results as arrays: signatures, literal and external-name ids, inputs, and the
        users (the inputs transposed)."""
        n, shared, ids = self.n, self.shared, self.ids
        self.fwd = np.frombuffer(fwd, dtype=np.int64).copy()
        ids[None] = -1  # no literal, no external name
        self.lits = np.fromiter(map(ids.__getitem__, literal[0]), np.int64, n)
        self.ext = np.fromiter(map(ids.__getitem__, literal[1]), np.int64, n)
        if shared:
            assert like is not None
            self.lits[:shared], self.ext[:shared] = like.lits[:shared], like.ext[:shared]
        self.in_src = np.frombuffer(src, dtype=np.int64).astype(np.intp)
        self.in_arg = np.frombuffer(argk, dtype=np.int64).astype(np.intp)
        self.in_ptr = np.zeros(n + 1, dtype=np.intp)
        self.in_ptr[1:] = np.frombuffer(ends, dtype=np.int64)
        owners = np.repeat(np.arange(n), np.diff(self.in_ptr))
        order = np.argsort(self.in_src, kind="stable")  # users in reading-node order, then argument order
        self.us_ptr = ptr_of(np.bincount(self.in_src, minlength=n))
        self.us_node, self.us_arg = owners[order], self.in_arg[order]

    def _backward(self, like: GraphIndex | None) -> NDArray[np.int64]:
        """Backward signatures, from the output up: a node's target hashed with the multiset of its users'
        signatures and the argument positions they read it at."""
        n, tail, targets = self.n, self.tail, self.targets
        bwd = array("q", map(hash, zip(targets)))
        for i in np.flatnonzero(self.op == PLACEHOLDER).tolist():
            bwd[i] = hash(("P", targets[i]))
        if tail:
            assert like is not None
            bwd[n - tail:] = machine(like.bwd[like.n - tail:])
        users, args = machine(self.us_node), machine(self.us_arg)
        ptr = self.us_ptr
        rows = np.flatnonzero(ptr[1:] > ptr[:-1])
        rows = rows[rows < n - tail][::-1]
        get = bwd.__getitem__
        # Machine integers iterated, not lists: three lists of every node's values were an int object each,
        # the index's largest transient (about 9 MB on a 75,000-node section).
        for i, a, b in zip(machine(rows), machine(ptr[rows]), machine(ptr[rows + 1]), strict=True):
            if b - a == 1:
                bwd[i] = hash((bwd[i], bwd[users[a]], args[a]))
            else:  # a multiset: the sum of each user's hash does not depend on their order
                bwd[i] = hash((bwd[i], sum(map(hash, zip(map(get, users[a:b]), args[a:b], strict=True)))))
        return np.frombuffer(bwd, dtype=np.int64).copy()

    def target(self, i: int) -> str:
        """Node ``i``'s target as compared (a placeholder's: its name without counter, or the other run's)."""
        return self.targets[i]

    def inputs_of(self, i: int) -> list[int]:
        """Node ``i``'s inputs, in argument order."""
        return self.in_src[self.in_ptr[i]:self.in_ptr[i + 1]].tolist()  # type: ignore[no-any-return]

    def users_of(self, i: int) -> list[tuple[int, int]]:
        """Who reads node ``i``, and at which argument, in ascending order."""
        a, b = self.us_ptr[i], self.us_ptr[i + 1]
        return list(zip(self.us_node[a:b].tolist(), self.us_arg[a:b].tolist(), strict=True))

    def meta_key(self, i: int) -> MetaKey:
        """:func:`meta_key` of node ``i``."""
        return meta_key(self.section.nodes[i].meta)


def input_names(ref: GraphIndex, x: GraphIndex) -> dict[int, str]:
    """The graph inputs of ``x`` that are the inputs of ``ref`` under another name: ``{index in x: the ref
    input's name without its counter}``.

    A graph input (placeholder) is the forward's positional parameter: its name is its identity when both runs
    use it, its position when they do not (a torch upgrade names inputs anew, ``arg0_1`` for ``input_ids``).
    The inputs whose names the other run lacks are paired in order, and only when both runs have as many of
    them and each pair agrees in shape and dtype: an added or removed input keeps its own name.
    """
    def inputs(g: GraphIndex) -> list[tuple[int, str]]:
        return [(i, g.targets[i]) for i in np.flatnonzero(g.op == PLACEHOLDER).tolist()]

    mine, theirs = inputs(x), inputs(ref)
    names_mine, names_theirs = {b for _, b in mine}, {b for _, b in theirs}
    left = [t for t in mine if t[1] not in names_theirs]
    right = [t for t in theirs if t[1] not in names_mine]
    if not left or len(left) != len(right):
        return {}
    if not all(meta_agrees(x.meta_key(i), ref.meta_key(k))
               for (i, _), (k, _) in zip(left, right, strict=True)):
        return {}
    return {i: base for (i, _), (_, base) in zip(left, right, strict=True)}


def shared_prefix(a: tuple[GraphNode, ...], b: tuple[GraphNode, ...]) -> int:
    """How many leading nodes ``a`` and ``b`` share as the same objects (the parser's memo hands out one
    object per line text and line number, so this is the run of identical leading lines)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y:
            break
        n += 1
    return n


def shared_suffix(a: tuple[GraphNode, ...], b: tuple[GraphNode, ...]) -> int:
    """How many trailing nodes ``a`` and ``b`` share as the same objects."""
    return shared_prefix(a[::-1], b[::-1])


class Rows(Sequence[list[int]]):
    """Packed rows read one at a time (``rows[i]``: row ``i`` as a list), e.g. a kept alignment's inputs."""

    __slots__ = ("_ptr", "_values")

    def __init__(self, ptr: NDArray[np.intp], values: NDArray[np.intp]) -> None:
        self._ptr, self._values = ptr, values

    def __len__(self) -> int:
        return len(self._ptr) - 1

    @overload
    def __getitem__(self, i: int) -> list[int]: ...
    @overload
    def __getitem__(self, i: slice) -> list[list[int]]: ...
    def __getitem__(self, i: int | slice) -> list[int] | list[list[int]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return self._values[self._ptr[i]:self._ptr[i + 1]].tolist()  # type: ignore[no-any-return]


__all__ = ["CALL", "OUTPUT", "PLACEHOLDER", "GraphIndex", "Ids", "MetaKey", "Rows", "has_counter",
           "input_names", "meta_agrees", "meta_key", "norm_target", "shared_prefix", "short_target",
           "strip_counter"]
