"""Routing flips told apart from drift: each MoE layer's experts per token, compared between the runs.

A harmless kernel change moves a router's logits by an ulp; a token whose k-th and (k+1)-th experts were a
near tie then changes experts, and its rows downstream move a lot while every other row is within tolerance.
For every MoE layer of the baseline's final graph (:func:`ad_diff.core.moe.moe_layers`) whose router logits
both runs captured:

1. each run's experts per token: the captured choice (the top-k indices fed to the MoE op) where both runs
   captured it, else the top-k of the router logits (the choice, whenever the ops between the logits and the
   top-k keep each row's order: casts, softmax over the experts, sigmoid);
2. the tokens whose *set* of experts changed, each with its **margin**: the gap the change had to cross in the
   baseline's logits (:func:`flip_margin`);
3. the logits' **noise**: the RMS over tokens of how far the gap between any two experts moved between the
   runs (the spread of ``candidate - baseline`` over the token's experts);
4. **the margin rule**, here only (:func:`near_tie_limit`): a flip is a *near tie* when its margin is at most
   ``NEAR_TIE`` (6) times the noise, or one rounding step of the logits' dtype at the k-th score, whichever
   is larger. Noise moves every gap by about the noise; a gap six times larger than the typical movement is
   not crossed by rounding (for Gaussian noise, 6 standard deviations; bf16 rounding is bounded), while a
   broken router or routing kernel changes experts at gaps far above it (measured: docs/rules.md, ADT014).

Near-tie flips explain the rows of their tokens downstream of the layer (left out of those tensors'
judgement; :func:`excluded_rows`); clear flips, or router logits beyond tolerance, are a routing regression.
Work is bounded by the captures' size: tokens are read in blocks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ad_diff.core.moe import MoeRouting
from ad_diff.kinds.tensors.model import LayerRouting, RoutingFlip, TensorComparison, TensorKind, TensorRecord
from ad_diff.kinds.tensors.reader import ChunkReader

NEAR_TIE = 6.0
"""A flip whose margin is at most this many times the router logits' noise is a near tie (the margin rule)."""
MANTISSA = {"BF16": 8, "F16": 11, "F32": 24, "F64": 53, "F8_E4M3": 4, "F8_E5M2": 3}
"""Significand bits per float dtype: one rounding step at ``x`` is ``2**(exponent(x) - bits)``."""
MAX_LISTED = 50
"""Flips kept per layer for reports and JSON (all of them count)."""
BLOCK = 4096
"""Tokens read at once."""


def near_tie_limit(noise: float, resolution: float) -> float:
    """The largest margin the runs' noise explains: ``NEAR_TIE * noise``, never below one rounding step
    (``resolution``) of the scores (a tie at the logits' precision is a tie, whoever breaks it)."""
    return max(NEAR_TIE * noise, resolution)


def step(dtype: str, x: np.ndarray) -> np.ndarray:
    """One rounding step (ulp) of ``dtype`` at each ``|x|`` (0 for integer dtypes)."""
    bits = MANTISSA.get(dtype)
    if bits is None:
        return np.zeros_like(x, dtype=np.float64)
    _, e = np.frexp(np.abs(x).astype(np.float64))
    out: np.ndarray = np.ldexp(1.0, e - bits).astype(np.float64)
    return out


def top_sets(scores: np.ndarray, k: int) -> np.ndarray:
    """Each row's ``k`` highest columns, sorted (ties to the lower column, as a stable sort ranks them)."""
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.sort(order, axis=1)


def flip_margin(scores: np.ndarray, before: np.ndarray, after: np.ndarray, k: int) -> float:
    """The gap a change from experts ``before`` to ``after`` crossed in one token's baseline ``scores``: how
    far below the k-th score the lowest expert taken in sat, or how far above the (k+1)-th the highest
    expert dropped sat, whichever is larger (0 at an exact tie)."""
    ranked = np.sort(scores)[::-1]
    kth, next_ = ranked[k - 1], ranked[k] if len(ranked) > k else -np.inf
    added = [int(e) for e in after if e not in before]
    dropped = [int(e) for e in before if e not in after]
    gaps = [0.0]
    if added:
        gaps.append(float(kth - min(scores[e] for e in added)))
    if dropped and math.isfinite(next_):
        gaps.append(float(max(scores[e] for e in dropped) - next_))
    return max(gaps)


@dataclass
class LayerData:
    """One layer's captures: router logits in both runs and, where captured in both, each run's choice."""

    base: TensorRecord
    cand: TensorRecord
    chosen: tuple[TensorRecord, TensorRecord] | None = None


@dataclass
class Compared:
    """What :func:`compare_layer` finds: every flip (token flat index, flip), and the noise."""

    flips: list[tuple[int, RoutingFlip]] = field(default_factory=list)
    noise: float = 0.0
    tokens: int = 0
    mismatch: int = 0
    """Baseline tokens whose captured choice is not its logits' top-k beyond a tie (the ranking is not the
    logits': margins cannot be judged)."""


def _blocks(rec: TensorRecord, rows: int, width: int) -> Iterator[np.ndarray]:
    reader = ChunkReader(rec)
    buf = np.empty(min(rows, BLOCK) * width, np.float64)
    try:
        for r0 in range(0, rows, BLOCK):
            n = min(BLOCK, rows - r0)
            yield reader.read(r0 * width, n * width, buf).reshape(n, width).copy()
    finally:
        reader.close()


def compare_layer(data: LayerData, k: int, layout: tuple[int, ...] | None = None) -> Compared:
    """Flips, margins and noise of one layer (see the module doc); ``layout``: the token grid (``[batch,
    position]``) flat token indices are shown in, when it holds them all."""
    shape = data.base.shape
    width = shape[-1]
    tokens = math.prod(shape[:-1])
    out = Compared(tokens=tokens)
    sq = 0.0
    raw: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, float]] = []
    res: np.ndarray
    chosen = data.chosen
    streams = [_blocks(data.base, tokens, width), _blocks(data.cand, tokens, width)]
    if chosen is not None:
        streams += [_blocks(chosen[0], tokens, k), _blocks(chosen[1], tokens, k)]
    t0 = 0
    for parts in zip(*streams, strict=True):
        b, c = parts[0], parts[1]
        d = c - b
        spread = d.max(axis=1) - d.min(axis=1)
        sq += math.fsum((spread * spread).tolist())
        top_b = top_sets(b, k)
        if chosen is not None:
            for sel in parts[2:]:
                if not np.all((sel >= 0) & (sel < width) & (sel == np.floor(sel))):
                    raise ValueError(f"the captured choice holds values that are no expert of 0..{width - 1}")
            sel_b = np.sort(parts[2].astype(np.int64), axis=1)
            sel_c = np.sort(parts[3].astype(np.int64), axis=1)
            ranked = np.sort(b, axis=1)[:, ::-1]
            res = step(data.base.dtype, ranked[:, k - 1])
            for i in np.nonzero((sel_b != top_b).any(axis=1))[0]:
                if flip_margin(b[i], top_b[i], sel_b[i], k) > res[i]:
                    out.mismatch += 1
        else:
            sel_b, sel_c = top_b, top_sets(c, k)
        ranked = np.sort(b, axis=1)[:, ::-1]
        res = step(data.base.dtype, ranked[:, k - 1])
        for i in np.nonzero((sel_b != sel_c).any(axis=1))[0]:
            raw.append((t0 + int(i), sel_b[i], sel_c[i], b[i], float(res[i])))
        t0 += len(b)
    out.noise = math.sqrt(sq / tokens) if tokens else 0.0
    for t, before, after, scores, resolution in raw:
        margin = flip_margin(scores, before, after, k)
        index = tuple(int(x) for x in np.unravel_index(t, layout)) if layout else (t,)
        flip = RoutingFlip(index, tuple(int(e) for e in before), tuple(int(e) for e in after), margin,
                           near_tie_limit(out.noise, resolution))
        out.flips.append((t, flip))
    return out


def layer_routing(layer: MoeRouting, compared: Compared | None, router: TensorComparison | None,
                  chosen_from: str, note: str | None) -> LayerRouting:
    """The :class:`LayerRouting` of ``layer`` (an :class:`ad_diff.core.moe.MoeRouting`)."""
    flips = [f for _, f in compared.flips] if compared else []
    listed = sorted(flips, key=lambda f: (f.near_tie, f.token))[:MAX_LISTED]
    passed = None if router is None else router.passed
    reason = "" if router is None or router.judgement is None else router.judgement.reason
    return LayerRouting(
        layer=layer.layer, op=layer.op, router=layer.router,
        k=layer.k, scheme=layer.scheme, tokens=compared.tokens if compared else 0,
        chosen_from=chosen_from, noise=compared.noise if compared else 0.0, flips=tuple(listed),
        near_ties=sum(f.near_tie for f in flips), clear=sum(not f.near_tie for f in flips),
        router_passed=passed, router_reason=reason, note=note,
    )  # fmt: skip


def token_layout(tokens: int, inputs: Mapping[str, TensorRecord], outputs: Sequence[TensorComparison]
                 ) -> tuple[int, ...] | None:
    """``[batch, position]`` holding ``tokens``: from the recorded inputs (``input_ids``) or an output's
    leading dims; ``None`` when none holds exactly that many tokens."""
    shapes: list[tuple[int, ...]] = [r.shape for r in inputs.values() if len(r.shape) == 2]
    shapes += [c.baseline.shape[:2] for c in outputs
               if c.kind is TensorKind.OUTPUT and len(c.baseline.shape) >= 3]
    for s in shapes:
        if math.prod(s) == tokens:
            return tuple(s)
    return None


def token_rows(index_shape: tuple[int, ...], tokens: int, flat: Sequence[int],
               layout: tuple[int, ...] | None = None) -> list[int]:
    """The rows (flat, of a row layout with ``index_shape``) of the tokens ``flat``: when the layout's
    leading dims hold exactly ``tokens`` tokens (``[T]``, ``[B, S]``, ``[B, S, heads]``), or, with the token
    grid ``layout`` ``[B, S]``, when it is ``[B, ..., S]`` (attention's ``[batch, heads, position]``: every
    head's row of the token). Else none: such a tensor is judged whole."""
    for p in range(1, len(index_shape) + 1):
        if math.prod(index_shape[:p]) == tokens:
            per = math.prod(index_shape[p:])
            return [t * per + j for t in flat for j in range(per)]
    if layout is None or len(layout) != 2 or len(index_shape) < 3 or index_shape[0] != layout[0]:
        return []
    axis = max((i for i, d in enumerate(index_shape) if i > 0 and d == layout[1]), default=None)
    if axis is None:
        return []
    out = []
    for t in flat:
        b, s = divmod(t, layout[1])
        grid = [range(d) for d in index_shape]
        grid[0], grid[axis] = range(b, b + 1), range(s, s + 1)
        out += [int(np.ravel_multi_index(ix, index_shape)) for ix in _product(grid)]
    return out


def _product(ranges: Sequence[range]) -> Iterator[tuple[int, ...]]:
    if not ranges:
        yield ()
        return
    for head in ranges[0]:
        for rest in _product(ranges[1:]):
            yield (head, *rest)


__all__ = ["MANTISSA", "MAX_LISTED", "NEAR_TIE", "Compared", "LayerData", "compare_layer", "flip_margin",
           "layer_routing", "near_tie_limit", "step", "token_layout", "token_rows", "top_sets"]
