"""The routing analysis applied to a comparison: which captures it judges, which rows it explains.

:func:`judge_routing` runs :func:`ad_diff.kinds.tensors.routing.compare_layer` for every MoE layer whose
router logits both runs captured, then

* marks the captures between each judged router and its MoE op (softmax, top-k, routing weights) as
  :attr:`~ad_diff.kinds.tensors.model.TensorVerdict.ROUTED`: they are functions of the router logits, and
  their layer's routing finding judges them (experts as sets, flips against the noise), not an elementwise
  tolerance of their own dtype (fp32 probabilities of bf16 logits move by bf16 noise);
* re-measures every tensor downstream of a layer with near-tie flips (the MoE op's output, later layers,
  the outputs) without the flipped tokens' rows, so the rest is judged as usual. A token's own rows are left
  out; other tokens its change reaches later (through attention) are judged as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ad_diff.core.moe import MoeRouting
from ad_diff.kinds.tensors.model import (
    LayerRouting,
    TensorComparison,
    TensorKind,
    TensorRecord,
    TensorVerdict,
)
from ad_diff.kinds.tensors.routing import LayerData, compare_layer, layer_routing, token_layout, token_rows

Remeasure = Callable[[TensorComparison, frozenset[int]], TensorComparison]


def _node(name: str) -> str:
    head, dot, tail = name.rpartition(".")
    return head if dot and tail.isdigit() else name


def _both(name: str | None, base: Mapping[str, TensorRecord], cand: Mapping[str, TensorRecord]
          ) -> tuple[TensorRecord, TensorRecord] | None:
    if name is None or name not in base or name not in cand:
        return None
    b, c = base[name], cand[name]
    return (b, c) if b.shape == c.shape else None


def judge_routing(
    layers: Sequence[MoeRouting],
    comparisons: Sequence[TensorComparison],
    base: Mapping[str, TensorRecord],
    cand: Mapping[str, TensorRecord],
    inputs: Mapping[str, TensorRecord],
    node_order: Sequence[str] | None,
    remeasure: Remeasure,
) -> tuple[tuple[LayerRouting, ...], list[TensorComparison]]:
    """Every layer's routing and the comparisons it changes (see the module doc). ``base``/``cand``: each
    run's records by (baseline) name; ``layers``: :class:`ad_diff.core.moe.MoeRouting` in graph order."""
    by_name = {c.name: c for c in comparisons}
    position = {n: i for i, n in enumerate(node_order or ())}
    results: list[LayerRouting] = []
    routed: set[str] = set()
    touched: dict[str, dict[int, tuple[int, ...]]] = {}  # comparison -> flat row -> token
    for layer in layers:
        router_name, k = layer.router, layer.k
        router = by_name.get(router_name)
        pair = _both(router_name, base, cand)
        ranking_note = None
        if not layer.order_kept:
            scores = _both(layer.scores, base, cand)
            pair, ranking_note = (scores, None) if scores else (pair, f"the ops between the router and the "
                                  f"top-k may change the order ({layer.scheme}) and the scores the "
                                  "top-k ranks were not captured in both runs")
        note = (
            "router logits not captured in both runs" if pair is None or router is None
            else f"router logits {list(pair[0].shape)}: no [tokens, experts] rows" if len(pair[0].shape) < 2
            else "k not found in the graph" if not isinstance(k, int) or k < 1
            else f"k = {k} leaves no expert unchosen" if pair[0].shape[-1] <= k
            else ranking_note
        )
        if note is not None or pair is None:
            results.append(layer_routing(layer, None, router, "", note))
            continue
        assert isinstance(k, int)
        tokens = len(_flat(pair[0].shape))
        chosen = _both(layer.selected, base, cand)
        if chosen is not None and chosen[0].shape[-1] != k:
            chosen = None
        if chosen is not None and len(_flat(chosen[0].shape[:-1] + (1,))) != tokens:
            chosen = None
        source = f"captured {layer.selected}" if chosen else "router logits' top-k"
        layout = token_layout(tokens, inputs, comparisons)
        try:
            compared = compare_layer(LayerData(pair[0], pair[1], chosen), k, layout)
        except ValueError as e:  # a capture that is no choice of experts: the layer is not judged, said so
            results.append(layer_routing(layer, None, router, source, str(e)))
            continue
        if compared.mismatch:
            note = (f"the baseline's captured choice is not its router logits' top-k at {compared.mismatch} "
                    f"token(s) ({layer.scheme} ranks by other scores): margins not judged")
            results.append(layer_routing(layer, None, router, source, note))
            continue
        judged = layer_routing(layer, compared, router, source, None)
        results.append(judged)
        inside = set(layer.routing)
        routed.update(c.name for c in comparisons if c.kind is TensorKind.NODE and _node(c.name) in inside)
        near = [(t, f.token) for t, f in compared.flips if f.near_tie]
        if not near or judged.regression:  # a regressing layer's flips explain nothing: it gates
            continue
        start = position.get(layer.op, -1) if node_order is not None else None
        _touch(touched, comparisons, near, tokens, layout, start, position)
    out = []
    for c in comparisons:
        if c.name in routed:
            out.append(replace(c, verdict=TensorVerdict.ROUTED))
        elif c.name in touched:
            hit = touched[c.name]
            out.append(replace(remeasure(c, frozenset(hit)), routed_rows=tuple(sorted(set(hit.values())))))
        else:
            out.append(c)
    return tuple(results), out


def _touch(
    touched: dict[str, dict[int, tuple[int, ...]]], comparisons: Sequence[TensorComparison],
    near: Sequence[tuple[int, tuple[int, ...]]], tokens: int, layout: tuple[int, ...] | None,
    start: int | None, position: Mapping[str, int],
) -> None:
    """Add to ``touched`` the rows of the ``near`` tokens (flat index, shown index) in every comparison
    after the MoE op at ``start``."""
    for c in comparisons:
        rows = c.stats.rows if c.stats is not None else None
        if rows is None or not _downstream(c, start, position):
            continue
        for t, token in near:
            for r in token_rows(rows.index_shape, tokens, [t], layout):
                touched.setdefault(c.name, {})[r] = token


def _flat(shape: tuple[int, ...]) -> range:
    n = 1
    for d in shape[:-1]:
        n *= d
    return range(n)


def _downstream(c: TensorComparison, start: int | None, position: Mapping[str, int]) -> bool:
    """``c`` is computed after the MoE op at ``start`` (the op's own output included); outputs always are.
    Without a graph order (``start`` is None) only outputs are known to be."""
    if c.kind is TensorKind.OUTPUT:
        return True
    if start is None or start < 0:
        return False
    node = c.name if c.name in position else _node(c.name)
    return position.get(node, -1) >= start
