"""Tensor statistics in one chunked pass over both runs (and the reference): numbers only, no verdicts.

Every tensor is viewed as rows (all dims but the last: a token, or a token and a head; see
:func:`row_layout`). Each chunk holds whole rows; per row it yields sums of squares of the baseline, the
candidate and their difference (plus the errors against the reference), the absolute difference and the
count beyond the elementwise tolerance. The whole-tensor figures are exact (``math.fsum``) sums of these
per-row sums, so the result does not depend on the chunk size, on thread count (numpy's loops run on one
thread; the BLAS dots sum at most ``DOT_BLOCK`` products, which OpenBLAS never splits across threads) or on
the machine's load: the JSON is byte-identical however it was run.

Precision: narrow inputs (bf16, fp16, fp8) are computed in float32, where a product of two of their values is
exact; each row, or each block of at most ``DOT_BLOCK`` of a longer one, is summed in float32 by one BLAS dot
(numpy's ``vecdot``, many partial sums: relative error ~1e-7) and blocks and rows are combined in float64.
Wider inputs are computed in float64. ``1 - cos`` comes from ``|b-c|^2`` and ``(|b|-|c|)^2`` rather than
from ``1 - dot/(|b||c|)``, so it keeps its digits when the cosine is 0.99999. A chunk holding NaN/Inf (or
overflowing float32) is recomputed in float64 with masks. Row figures are summarised in
:class:`~ad_diff.kinds.tensors.model.RowStats` by :mod:`~ad_diff.kinds.tensors.rows`. The same pass on a
CUDA device (``--tensor-device cuda``) is :mod:`~ad_diff.kinds.tensors.gpu`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np

from ad_diff.kinds.tensors.gpu import measure_torch
from ad_diff.kinds.tensors.model import TensorRecord, TensorStats
from ad_diff.kinds.tensors.reader import ChunkReader, compute_dtype, lanes
from ad_diff.kinds.tensors.rows import Layout, row_layout
from ad_diff.kinds.tensors.stats import HIST_BINS, HIST_HI, HIST_LO, Pass
from ad_diff.kinds.tensors.stats import MeasureOptions as MeasureOptions  # re-exported: measure(..., opts)

CPU_CHUNK = 1 << 18
"""Reals per chunk (256 Ki: the working buffers stay in the L2 cache; larger chunks measured slower)."""
DOT_BLOCK = 8192
"""Most products one BLAS dot sums (float32 for narrow inputs) before blocks are added in float64: below
OpenBLAS's threading threshold (10,000), so the thread count never changes a sum."""
_VECDOT = getattr(np, "vecdot", None)
SCALED_TOP = 480
"""Values are scaled below ``2**480`` once float64 sums of their squares overflow (see ``_Acc.rescale``)."""


def measure(
    baseline: TensorRecord,
    candidate: TensorRecord,
    opts: MeasureOptions,
    reference: TensorRecord | None = None,
) -> TensorStats:
    """Statistics of ``candidate`` against ``baseline`` (and both against ``reference``, when given).

    Shapes must have the same number of elements; callers report shape mismatches before calling.
    """
    numel = baseline.numel
    if candidate.numel != numel or (reference is not None and reference.numel != numel):
        raise ValueError("measure() needs tensors with the same number of elements")
    ln = lanes(baseline.dtype)
    if lanes(candidate.dtype) != ln or (reference is not None and lanes(reference.dtype) != ln):
        raise ValueError("measure() needs both runs complex or both real")
    layout = row_layout(baseline.shape, ln)
    if opts.exclude and not layout.judged:
        opts = replace(opts, exclude=frozenset())  # rows only exist where rows are judged
    if opts.device != "cpu" and not opts.exclude:
        return measure_torch(baseline, candidate, opts, layout, reference)
    acc = _Acc(
        opts, layout, numel * ln, compute_dtype(baseline.dtype, candidate.dtype), reference is not None
    )
    readers = [ChunkReader(r) for r in (baseline, candidate, reference) if r is not None]
    try:
        # NaN/Inf (inf - inf) and float32 overflow are found from the sums and handled, not warned about
        with np.errstate(invalid="ignore", over="ignore"):
            for start, count, r0, k, width in _kept(layout.spans(opts.chunk or CPU_CHUNK), opts.exclude):
                pairs = zip(readers, acc.bufs, strict=True)
                arrays = [rd.read(start // ln, count // ln, buf) for rd, buf in pairs]
                acc.add(arrays, start, r0, k, width)
    finally:
        for rd in readers:
            rd.close()
    return acc.result(baseline, reference)


def _kept(spans: Iterator[tuple[int, int, int, int, int]], exclude: frozenset[int]
          ) -> Iterator[tuple[int, int, int, int, int]]:
    """``spans`` without the rows in ``exclude``: a span of whole rows is cut around them, a piece of an
    excluded row is dropped (the rows left keep their sums: figures do not depend on where the cut falls)."""
    if not exclude:
        yield from spans
        return
    for start, _count, r0, k, width in spans:
        run = None
        for r in range(r0, r0 + k):
            if r in exclude:
                if run is not None:
                    yield start + (run - r0) * width, (r - run) * width, run, r - run, width
                    run = None
            elif run is None:
                run = r
        if run is not None:
            yield start + (run - r0) * width, (r0 + k - run) * width, run, r0 + k - run, width


class _Acc(Pass):
    """The numpy pass; see the module docstring."""

    def __init__(self, opts: MeasureOptions, layout: Layout, numel: int, dtype: Any, ref: bool) -> None:
        super().__init__(opts, layout, numel, ref)
        self.dtype = dtype
        n = layout.buffer(opts.chunk or CPU_CHUNK)
        self.bufs = [np.empty(n, dtype=dtype) for _ in range(3 if ref else 2)]
        self.t = np.empty(n, dtype=dtype)
        self.d = np.empty(n, dtype=dtype)
        self.m = np.empty(n, dtype=np.bool_)

    def add(self, arrays: list[np.ndarray], start: int, r0: int, k: int, width: int) -> None:
        """Fold one span (``k`` rows of ``width`` reals from row ``r0``, or a piece of one long row)."""
        b, c = arrays[0], arrays[1]
        r = arrays[2] if len(arrays) > 2 else None
        n = b.size
        if self.stride:  # before folding: the logits figures overwrite b and c
            first = (-start) % self.stride
            self.samples[0].append(b[first :: self.stride].astype(np.float64))
            self.samples[1].append(c[first :: self.stride].astype(np.float64))
        folded = self._fold(b, c, r, start, r0, k, width)
        if not folded:
            self._fold_masked(b, c, r, start, r0, k, width)
        else:
            self.compared += n
            if r is not None:
                self.ref_compared += n

    def _fold(self, b: np.ndarray, c: np.ndarray, r: np.ndarray | None, start: int, r0: int, k: int,
              width: int, odd: np.ndarray | None = None, force: bool = False) -> bool:  # fmt: skip
        """Fold finite values (``odd``: extra mismatches of a masked span); False, storing nothing, when a sum
        is not finite (NaN/Inf in the span, or float32 overflow) unless ``force``."""
        o, n = self.opts, b.size
        t, d = self._scratch(n, b.dtype)
        shape = (k, width)
        # positional ``out`` throughout: keyword parsing costs ~1 us a call, tens of calls a chunk
        np.subtract(c, b, d)
        if self.exp:  # the sums are kept scaled (see rescale): square scaled copies, exactly scaled
            unit = b.dtype.type(2.0**-self.exp)
            bs, cs, rs = b * unit, c * unit, None if r is None else r * unit
            ds = cs - bs
        else:
            bs, cs, rs, ds = b, c, r, d
        sq = [_squares(ds, shape, t), _squares(bs, shape, t), _squares(cs, shape, t)]
        if rs is not None:
            sq.append(_squares(rs, shape, t))
            sq.append(_squares(np.subtract(bs, rs, t), shape, t))
            sq.append(_squares(np.subtract(cs, rs, t), shape, t))
        if not force and not math.isfinite(float(np.sum(sq))):  # one call: the rows' sums are (k,) arrays
            return False
        ad = _row_sums(np.abs(ds), shape) if self.exp else None
        np.abs(d, d)
        if ad is None:
            ad = _row_sums(d, shape)
        i = int(d.argmax())
        if d[i] > self.max_abs:
            self.max_abs, self.worst = float(d[i]), (start + i, float(b[i]), float(c[i]))
        logits = self.sums.logits and width == self.layout.width
        mag = np.abs(b, t if logits else b)  # in place unless the logits figures still need b
        if o.relative:
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.divide(d, mag)
            rel[np.isnan(rel)] = 0.0  # 0/0: no change where the baseline is 0; x/0 stays inf
            self.sums.add(r0, k, rl=_row_sums(rel, shape))
            self.max_rel = max(self.max_rel, float(rel.max()))
        if self.hist is not None:
            self._histogram(d, mag)
        np.multiply(mag, o.rtol, mag)  # |b| * rtol + atol in the compute dtype, two roundings
        np.add(mag, o.atol, mag)
        m = np.greater(d, mag, self.m[:n])
        if odd is not None:
            m |= odd
        s, rows = self.sums, slice(r0, r0 + k)
        s.dd[rows] += sq[0]
        s.bb[rows] += sq[1]
        s.cc[rows] += sq[2]
        s.ad[rows] += ad
        s.out[rows] += _count_rows(m.reshape(shape))
        if r is not None:
            s.add(r0, k, rr=sq[3], eb=sq[4], ec=sq[5])
        if logits:
            s.add_logits(
                r0, b.reshape(shape), c.reshape(shape), None if r is None else r.reshape(shape), o.topk
            )
        return True

    def _scratch(self, n: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        if self.t.dtype != dtype:
            return np.empty(n, dtype), np.empty(n, dtype)
        return self.t[:n], self.d[:n]

    def _fold_masked(self, b: np.ndarray, c: np.ndarray, r: np.ndarray | None, start: int, r0: int, k: int,
                     width: int) -> None:  # fmt: skip
        """A span with NaN/Inf: statistics over the elements finite in both runs (and in the reference, for
        the reference figures). Same dtype as the fast path, so rows without NaN/Inf get the same sums
        whatever
        the chunking; float64 only when float32 overflows."""
        nanb, nanc = np.isnan(b), np.isnan(c)
        fb, fc = np.isfinite(b), np.isfinite(c)
        both = fb & fc
        for i, v in enumerate((nanb.sum(), nanc.sum(), (~fb & ~nanb).sum(), (~fc & ~nanc).sum())):
            self.nonfinite[i] += int(v)
        # A non-finite value is a mismatch unless both runs hold the same one (NaN == NaN here).
        odd = ~both & ~((b == c) | (nanb & nanc))
        ok = both if r is None else both & np.isfinite(r)
        zero = b.dtype.type(0)
        # Reference sums use elements finite everywhere; the others those finite in both runs.
        bz, cz = np.where(both, b, zero), np.where(both, c, zero)
        rz = None if r is None else np.where(ok, r, zero)
        if r is not None and not ok.all():
            bz, cz = np.where(ok, bz, zero), np.where(ok, cz, zero)  # rare: a non-finite reference value
        if not self._fold(bz, cz, rz, start, r0, k, width, odd):
            wide = [None if x is None else x.astype(np.float64) for x in (bz, cz, rz)]
            if not self._fold(wide[0], wide[1], wide[2], start, r0, k, width, odd):  # type: ignore[arg-type]
                self.rescale(max((float(np.abs(x).max()) for x in wide if x is not None and x.size),
                                 default=0.0))
                self._fold(wide[0], wide[1], wide[2], start, r0, k, width, odd, force=True)  # type: ignore[arg-type]
        self.compared += int(both.sum())
        if r is not None:
            self.ref_compared += int(ok.sum())

    def rescale(self, top: float) -> None:
        """Finite values up to ``top`` overflowed float64 sums: keep every sum scaled by ``2**-exp`` with
        ``exp`` such that the scaled values stay below ``2**SCALED_TOP`` (their squares, summed over up to
        ``2**60`` elements, then stay finite). The sums so far are scaled by the same power of two (exact;
        only sums below ``2**-900`` lose digits), so the result does not depend on where this happened."""
        need = max(0, math.frexp(top)[1] - SCALED_TOP) if math.isfinite(top) else 0
        if need <= self.exp:
            return
        shift = need - self.exp
        s = self.sums
        for name in ("bb", "cc", "dd", "rr", "eb", "ec"):
            v = getattr(s, name)
            if v is not None:
                v *= 2.0 ** (-2 * shift)
        s.ad *= 2.0**-shift
        self.exp = need

    def _histogram(self, d: np.ndarray, mag: np.ndarray) -> None:
        assert self.hist is not None, "only called when histograms are collected"
        with np.errstate(divide="ignore", invalid="ignore"):
            for h, x in zip(self.hist, (d, np.nan_to_num(d / mag, nan=0.0, posinf=1e30)), strict=True):
                logs = np.log10(np.clip(x.astype(np.float64), 1e-30, 1e30))
                h += np.histogram(np.clip(logs, HIST_LO, HIST_HI - 1e-6), HIST_BINS, (HIST_LO, HIST_HI))[0]


def _squares(x: np.ndarray, shape: tuple[int, int], scratch: np.ndarray) -> np.ndarray:
    """Per-row sums of squares of ``x`` viewed as ``shape``; ``scratch`` may be ``x`` itself.

    Blocks of at most ``DOT_BLOCK`` products are summed by one BLAS dot each (numpy >= 2's ``vecdot``; a
    dot that short never runs on several threads), and the blocks of a longer row are added in float64.
    Without such a block (or with numpy 1) the squares go to ``scratch`` and are summed per row (einsum).
    """
    k, width = shape
    block = _block(width)
    if block and _VECDOT is not None:
        if block == width:
            whole: np.ndarray = _VECDOT(x.reshape(shape), x.reshape(shape))
            return whole
        blocks = x.reshape(k, width // block, block)
        summed: np.ndarray = _VECDOT(blocks, blocks).sum(axis=1, dtype=np.float64)
        return summed
    t = np.multiply(x, x, scratch[: x.size])
    out: np.ndarray = np.einsum("ij->i", t.reshape(shape))
    return out


def _row_sums(x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Per-row sums of ``x`` viewed as ``shape`` (dots with a row of ones, as in :func:`_squares`)."""
    k, width = shape
    block = _block(width)
    if block and _VECDOT is not None:
        ones = _ones(block, x.dtype)
        if block == width:
            whole: np.ndarray = _VECDOT(x.reshape(shape), ones)
            return whole
        summed: np.ndarray = _VECDOT(x.reshape(k, width // block, block), ones).sum(axis=1, dtype=np.float64)
        return summed
    out: np.ndarray = np.einsum("ij->i", x.reshape(shape))
    return out


@cache
def _ones(n: int, dtype: Any) -> np.ndarray:
    ones = np.ones(n, dtype)
    ones.flags.writeable = False
    return ones


def _block(width: int) -> int:
    """The widest block of at most ``DOT_BLOCK`` that tiles a row of ``width`` (0: none of at least 256).
    Spans are at most ``rows.PIECE`` wide, so this tries at most a thousand splits."""
    if width <= DOT_BLOCK:
        return width
    for parts in range(-(-width // DOT_BLOCK), width // 256 + 1):
        if width % parts == 0:
            return width // parts
    return 0


def _count_rows(m: np.ndarray) -> np.ndarray:
    """True values per row of a boolean (k, width) array."""
    k, width = m.shape
    if width % 1024 == 0 and m.flags.c_contiguous:
        # Bytes are 0/1: summing 128 uint64 words keeps every byte lane <= 128, so no carry crosses lanes.
        words = m.view(np.uint64).reshape(k, width // 1024, 128).sum(axis=2, dtype=np.uint64)
        lanes: np.ndarray = words.view(np.uint8).reshape(k, -1).sum(axis=1, dtype=np.int64)
        return lanes
    counts: np.ndarray = m.view(np.uint8).sum(axis=1, dtype=np.int64)
    return counts
