"""Find unfused attention blocks: ``QK^T -> (scale, mask, sinks, casts) -> softmax -> PV`` is one block.

An **attention block** is anchored on a ``softmax`` whose input chain (pointwise, reduction and layout
ops, :data:`DEPTH` steps at most) reaches a GEMM (``Q @ K^T``) and whose output, through a chain of
single-user pointwise and layout ops (casts, dropout, the slice dropping a sink column), is the data input
of a second GEMM (``P @ V``). Around that spine the block takes:

- the side branches between the two GEMMs that read only the block and parameter-derived values (the
  ``max`` subtracted before the softmax, a learned sink logit ``reshape -> expand`` concatenated to the
  scores: GPT-OSS);
- the layout ops and casts feeding it whose every user is in the block (``transpose`` of ``K``, the
  ``unsqueeze -> expand -> reshape`` of a grouped-query ``repeat_kv``, the sink's ``expand``).

The mask is an input of the block, whatever built it (causal or sliding window): one attention variant
per spine, not one per mask. Each node is visited a bounded number of times: linear in the section.
"""

from __future__ import annotations

from dataclasses import dataclass

from ad_diff.candidates.graphview import Section
from ad_diff.candidates.ops import CASTS, canonical_target
from ad_diff.core.graphops import op_name

DEPTH = 8
"""Most ops between a GEMM and the softmax, and between the softmax and the next GEMM."""
_CHAIN_KINDS = frozenset({"elementwise", "reduction", "layout"})
_PASS = frozenset({"dropout", "native_dropout", "alias"})
_SOFTMAX = frozenset({"softmax", "_softmax"})
_ABSORB = frozenset({"layout"})
_JOINS = frozenset({"cat", "concat", "stack"})


@dataclass(frozen=True, slots=True)
class AttentionBlock:
    """One unfused attention block."""

    nodes: tuple[str, ...]
    """Every node of the block, dump order."""
    spine: tuple[str, ...]
    """Canonical ops from the ``QK`` GEMM to the ``PV`` GEMM."""
    variant: tuple[str, ...]
    """``sinks``, ``mask``, ``scale``, ``float32``, ``max_subtracted``, ``softcap``, ``repeat_kv``."""

    @property
    def signature(self) -> str:
        """Grouping key: the spine and its marks, no node names."""
        marks = f" ({', '.join(self.variant)})" if self.variant else ""
        return f"attention[eager] {' -> '.join(self.spine)}{marks}"


def _data(s: Section, name: str) -> str | None:
    return next((i for i in s.inputs[name] if i not in s.param_derived), None)


def _back(s: Section, sm: str) -> list[str] | None:
    """``[qk_gemm, ..., softmax]`` or ``None``."""
    chain = [sm]
    cur = _data(s, sm)
    for _ in range(DEPTH):
        if cur is None:
            return None
        if s.kinds[cur] == "gemm":
            return [cur, *reversed(chain)]
        if s.kinds[cur] not in _CHAIN_KINDS:
            return None
        chain.append(cur)
        cur = _data(s, cur)
    return None


def _forward(s: Section, sm: str) -> list[str] | None:
    """``[first op after the softmax, ..., pv_gemm]`` or ``None``."""
    chain: list[str] = []
    cur = sm
    for _ in range(DEPTH):
        us = s.users[cur]
        if len(us) != 1 or cur in s.outputs:
            return None
        u = us[0]
        if s.kinds[u] == "gemm":
            return [*chain, u] if _data(s, u) == cur else None
        if s.kinds[u] not in _CHAIN_KINDS and op_name(s.nodes[u].target) not in _PASS:
            return None
        chain.append(u)
        cur = u
    return None


def _grow(s: Section, spine: list[str], taken: set[str]) -> set[str]:
    """The spine plus side branches and the layout ops feeding it (module docstring)."""
    block = set(spine)
    lo, hi = s.order[spine[0]], s.order[spine[-1]]
    work = list(spine)
    while work:  # side branches: read the block (and parameters) only, between the two GEMMs
        n = work.pop()
        for u in s.users[n]:
            if u in block or u in taken or not lo < s.order[u] < hi:
                continue
            if all(i in block or i in s.param_derived or s.kinds[i] == "symbolic" for i in s.inputs[u]):
                block.add(u)
                work.append(u)
    work = list(block)
    while work:  # feeding layout ops and casts whose every user is in the block
        n = work.pop()
        for p in s.inputs[n]:
            if p in block or p in taken or p in s.outputs:
                continue
            node = s.nodes[p]
            if s.kinds[p] not in _ABSORB and op_name(node.target) not in CASTS:
                continue
            if op_name(node.target) in _JOINS and p not in s.param_derived:
                continue  # a concatenation of data (RoPE's halves) belongs to what computed them
            if all(u in block for u in s.users[p]):
                block.add(p)
                work.append(p)
    return block


def _variant(s: Section, spine: list[str], block: set[str]) -> tuple[str, ...]:
    ops = {n: op_name(s.nodes[n].target) for n in block}
    marks = []
    if any(
        op in ("cat", "concat") and any(i in s.param_derived for i in s.inputs[n]) for n, op in ops.items()
    ):
        marks.append("sinks")
    if any(
        ops[n] in ("add", "masked_fill", "where") and any(i not in block for i in s.inputs[n]) for n in spine
    ):
        marks.append("mask")
    if any(ops[n] in ("mul", "div") and len(s.inputs[n]) == 1 for n in spine):
        marks.append("scale")
    if any(ops[n] in CASTS for n in spine):
        marks.append("float32")
    if any(ops[n] == "sub" for n in spine) and ({"amax", "max"} & set(ops.values())):
        marks.append("max_subtracted")
    if any(ops[n] == "tanh" for n in spine):
        marks.append("softcap")
    if "expand" in ops.values() and any(ops[n] in ("reshape", "view", "_unsafe_view") for n in block):
        marks.append("repeat_kv")
    return tuple(marks)


def find_attention(s: Section, taken: set[str]) -> list[AttentionBlock]:
    """The unfused attention blocks of one section whose nodes are not in ``taken``, dump order."""
    out = []
    claimed = set(taken)
    for name, node in s.nodes.items():
        if op_name(node.target) not in _SOFTMAX or name in claimed:
            continue
        back = _back(s, name)
        fwd = _forward(s, name) if back else None
        if not back or not fwd or back[0] in claimed or fwd[-1] in claimed:
            continue
        spine = [*back, *fwd]
        block = _grow(s, spine, claimed)
        claimed |= block
        nodes = tuple(sorted(block, key=s.order.__getitem__))
        out.append(
            AttentionBlock(
                nodes, tuple(canonical_target(s.nodes[n].target) for n in spine), _variant(s, spine, block)
            )
        )
    return out
