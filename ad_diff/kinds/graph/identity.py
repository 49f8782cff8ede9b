"""What a run's dumps say about which run they are: the decoder layers their weights name, the embedding's
vocabulary and hidden size, and the known ops a transform's dump adds (checked against the run's own log
and config: ADG015, ADG016)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from ad_diff.core import limits
from ad_diff.core.graphops import op_name
from ad_diff.core.known import ONE_OP_PER_MATCH
from ad_diff.kinds.graph.diff import RunDelta
from ad_diff.kinds.graph.model import GraphDump

_LAYER = re.compile(r"(?:^|_)layers_(\d{1,6})_")


def layers_of(dump: GraphDump) -> int | None:
    """How many decoder layers the dump's weights name (the highest ``layers_<n>_`` plus one), if any."""
    names = {a.text for s in dump.sections for n in s.nodes for a in n.args if a.node}  # each name once
    seen = [int(m.group(1)) for text in names for m in (_LAYER.search(text),) if m is not None]
    return max(seen) + 1 if seen else None


UNSHARDED_STAGES = frozenset({"factory", "export", "post_export", "pattern_matcher"})
"""Stages before sharding: a weight's shape in their dumps is the model's, not one rank's slice."""


def sizes_of(dump: GraphDump) -> dict[str, int]:
    """``{"vocab_size": V, "hidden_size": H}`` from the weight (``V x H``) of the embedding lookup of the
    graph's ``input_ids`` (the token embedding, not a position embedding), for a dump of a stage before
    sharding; empty where the dump shows none or could hold one rank's slice."""
    if dump.stage not in UNSHARDED_STAGES:
        return {}
    for s in dump.sections:
        for n in s.nodes:
            if op_name(n.target) != "embedding" or len(n.args) < 2 or n.args[0].meta is None \
                    or n.args[1].text != "input_ids":
                continue
            dims = [limits.digits(d, 9) for d in (n.args[0].meta.shape or "").split("x")]
            if len(dims) == 2 and dims[0] is not None and dims[1] is not None:
                return {"vocab_size": dims[0], "hidden_size": dims[1]}
            return {}
    return {}


def _op_counts(dump: GraphDump, ops: tuple[str, ...]) -> Counter[str]:
    wanted = frozenset(ops)
    # counted by target first: a dump of 10,000 nodes has a few dozen targets to name
    targets = Counter(n.target for s in dump.sections for n in s.nodes)
    out: Counter[str] = Counter()
    for target, k in targets.items():
        if (name := op_name(target)) in wanted:
            out[name] += k
    return out


def with_replaced(transform: str, prev: GraphDump | None, cur: GraphDump | None, d: RunDelta | None
              ) -> RunDelta | None:
    """``d`` with the known ops the transform's dump added (:data:`~ad_diff.core.known.ONE_OP_PER_MATCH`),
    for a transform that writes one per match and whose run has both dumps."""
    ops = ONE_OP_PER_MATCH.get(transform)
    if d is None or ops is None or prev is None or cur is None:
        return d
    before, after = _op_counts(prev, ops), _op_counts(cur, ops)
    rose = tuple(op for op in ops if after[op] > before[op])
    return replace(d, replaced=sum(after[op] - before[op] for op in rose), replaced_ops=rose)


__all__ = ["UNSHARDED_STAGES", "layers_of", "sizes_of", "with_replaced"]
