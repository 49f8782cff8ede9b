"""Chunked tensor statistics: numbers only, no verdicts.

Both tensors (and an optional reference) are streamed in aligned chunks of whole rows; each chunk is
upcast (float32, float64 for float64 inputs) on the chosen device and folded into running sums kept on that
device, so the GPU never waits for a host sync until the end and peak memory is a few chunks, not the
tensors. The next chunk is read from disk on a worker thread while the current one is computed.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ad_diff.kinds.tensors.model import ErrorHistogram, ReferenceStats, TensorRecord, TensorStats
from ad_diff.kinds.tensors.parse import ChunkReader

CPU_CHUNK = 1 << 20
"""Elements per chunk on CPU (1 Mi: temporaries stay cache-sized; larger chunks measured slower)."""
GPU_CHUNK = 1 << 24
"""Elements per chunk on GPU (16 Mi: few kernel launches per byte)."""
HIST_LO, HIST_HI, HIST_BINS = -12.0, 8.0, 400


@dataclass(frozen=True, slots=True)
class MeasureOptions:
    """Knobs of one measurement (not of the verdict)."""

    atol: float
    rtol: float
    device: str = "cpu"
    chunk: int = 0
    """Elements per chunk; 0 picks ``CPU_CHUNK`` or ``GPU_CHUNK`` by device."""
    topk: int = 0
    """0: no top-k agreement; otherwise ``k`` for the top-k overlap per row of the last dimension."""
    histogram: bool = False
    samples: int = 0
    """Points kept for scatter plots (evenly strided)."""


def measure(
    baseline: TensorRecord, candidate: TensorRecord, opts: MeasureOptions, reference: TensorRecord | None = None
) -> TensorStats:
    """Statistics of ``candidate`` against ``baseline`` (and both against ``reference``, when given).

    Shapes must have the same number of elements; callers report shape mismatches before calling.
    """
    import torch

    numel = baseline.numel
    if candidate.numel != numel or (reference is not None and reference.numel != numel):
        raise ValueError("measure() needs tensors with the same number of elements")
    row = baseline.shape[-1] if (opts.topk and baseline.shape and baseline.shape[-1] > 1) else 0
    dev = torch.device(opts.device)
    chunk = opts.chunk if opts.chunk > 0 else (GPU_CHUNK if dev.type == "cuda" else CPU_CHUNK)
    if row:
        chunk = max(chunk // row, 1) * row
    pin = dev.type == "cuda"
    wide = torch.float64 if "F64" in (baseline.dtype, candidate.dtype) else torch.float32
    acc = _Acc(dev, row, opts, numel)
    readers = [ChunkReader(r) for r in (baseline, candidate, reference) if r is not None]
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:

            def load(start: int) -> list[Any]:
                n = min(chunk, numel - start)
                return [r.read(start, n, pin=pin) for r in readers]

            pending = pool.submit(load, 0) if numel else None
            start = 0
            while pending is not None:
                parts = pending.result()
                nxt = start + chunk
                pending = pool.submit(load, nxt) if nxt < numel else None
                tens = [p.to(dev, non_blocking=True).to(wide) for p in parts]
                acc.add(tens[0], tens[1], tens[2] if reference is not None else None, start)
                start = nxt
    finally:
        for r in readers:
            r.close()
    return acc.result(baseline, candidate, reference)


class _Acc:
    """Running sums on the device; one ``.item()`` sync per statistic at the end."""

    def __init__(self, dev: Any, row: int, opts: MeasureOptions, numel: int) -> None:
        import torch

        self.t = torch
        self.opts, self.row, self.numel = opts, row, numel
        z64 = lambda: torch.zeros((), dtype=torch.float64, device=dev)  # noqa: E731
        zi = lambda: torch.zeros((), dtype=torch.int64, device=dev)  # noqa: E731
        self.s = {k: z64() for k in ("abs", "sq", "rel", "dot", "bb", "cc", "rb", "rc", "top1", "topk", "t1b", "t1c")}
        self.n = {k: zi() for k in ("cmp", "out", "nanb", "nanc", "infb", "infc", "rows", "rcmp")}
        self.max_abs = torch.full((), -1.0, dtype=torch.float64, device=dev)
        self.max_rel = z64()
        self.idx = zi()
        self.hist_abs = torch.zeros(HIST_BINS, dtype=torch.float64, device=dev) if opts.histogram else None
        self.hist_rel = torch.zeros(HIST_BINS, dtype=torch.float64, device=dev) if opts.histogram else None
        self.stride = max(1, numel // opts.samples) if opts.samples else 0
        self.sb: list[Any] = []
        self.sc: list[Any] = []

    def add(self, b: Any, c: Any, r: Any, offset: int) -> None:
        """Fold one chunk in. Fast path when everything is finite (one host sync per chunk to know)."""
        t = self.t
        d = (c - b).abs_()
        sd = d.sum(dtype=t.float64)
        # NaN/Inf anywhere in b or c makes d's sum non-finite (inf - inf is NaN), so one check suffices.
        if not bool(sd.isfinite()):
            self._add_nonfinite(b, c, r, offset)
            return
        self.n["cmp"] += d.numel()
        self._common(b, c, b, c, d, sd, r, offset, None)

    def _add_nonfinite(self, b: Any, c: Any, r: Any, offset: int) -> None:
        t, n = self.t, self.n
        nanb, nanc = b.isnan(), c.isnan()
        fb, fc = b.isfinite(), c.isfinite()
        n["nanb"] += nanb.sum()
        n["nanc"] += nanc.sum()
        n["infb"] += (~fb & ~nanb).sum()
        n["infc"] += (~fc & ~nanc).sum()
        both = fb & fc
        # Non-finite values count as a mismatch unless both runs hold the same one (NaN == NaN here).
        odd = ~both & ~((b == c) | (nanb & nanc))
        bz, cz = t.where(both, b, 0), t.where(both, c, 0)
        d = (cz - bz).abs_()
        n["cmp"] += both.sum()
        self._common(b, c, bz, cz, d, d.sum(dtype=t.float64), r, offset, odd.sum())

    def _common(self, b: Any, c: Any, bz: Any, cz: Any, d: Any, sd: Any, r: Any, offset: int, odd: Any) -> None:
        """Statistics over the finite pairs ``bz``/``cz`` (zeros where not finite) and ``d = |cz - bz|``."""
        t, s, n = self.t, self.s, self.n
        mag = bz.abs()
        out = (d > mag.mul(self.opts.rtol).add_(self.opts.atol)).sum()
        n["out"] += out if odd is None else out + odd
        s["abs"] += sd
        s["sq"] += t.dot(d, d).double()
        s["dot"] += t.dot(bz, cz).double()
        s["bb"] += t.dot(bz, bz).double()
        s["cc"] += t.dot(cz, cz).double()
        rel = t.nan_to_num_(d / mag, nan=0.0, posinf=math.inf)  # 0/0 -> 0; x/0 -> inf (a change where the baseline is 0)
        s["rel"] += rel.sum(dtype=t.float64)
        m, i = d.max(0)
        better = m.double() > self.max_abs
        self.max_abs = t.where(better, m.double(), self.max_abs)
        self.idx = t.where(better, i + offset, self.idx)
        self.max_rel = t.maximum(self.max_rel, rel.max().double())
        if self.hist_abs is not None and self.hist_rel is not None:
            lo, hi = HIST_LO, HIST_HI
            self.hist_abs += t.histc(d.clamp_min(1e-30).log10().clamp(lo, hi - 1e-6).float(), HIST_BINS, lo, hi).double()
            lr = rel.clamp(1e-30, 1e30).log10().clamp(lo, hi - 1e-6).float()
            self.hist_rel += t.histc(lr, HIST_BINS, lo, hi).double()
        if self.stride:
            first = (-offset) % self.stride
            self.sb.append(b[first :: self.stride].float().cpu())
            self.sc.append(c[first :: self.stride].float().cpu())
        if self.row:
            k = min(self.opts.topk, self.row)
            B, C = b.view(-1, self.row), c.view(-1, self.row)
            ab, ac = B.argmax(-1), C.argmax(-1)
            n["rows"] += B.shape[0]
            s["top1"] += (ab == ac).sum(dtype=t.float64)
            ib, ic = B.topk(k, -1).indices, C.topk(k, -1).indices
            s["topk"] += (ib.unsqueeze(-1) == ic.unsqueeze(-2)).any(-1).sum(dtype=t.float64) / k
            if r is not None:
                ar = r.view(-1, self.row).argmax(-1)
                s["t1b"] += (ab == ar).sum(dtype=t.float64)
                s["t1c"] += (ac == ar).sum(dtype=t.float64)
        if r is not None:
            both = bz.isfinite() if odd is None else (b.isfinite() & c.isfinite())
            ok = both & r.isfinite()
            rz = t.where(ok, r, 0)
            n["rcmp"] += ok.sum()
            s["rb"] += ((t.where(ok, b, 0) - rz) ** 2).sum(dtype=t.float64)
            s["rc"] += ((t.where(ok, c, 0) - rz) ** 2).sum(dtype=t.float64)

    def result(self, base: TensorRecord, cand: TensorRecord, reference: TensorRecord | None) -> TensorStats:
        s = {k: float(v.item()) for k, v in self.s.items()}
        n = {k: int(v.item()) for k, v in self.n.items()}
        cmp_ = n["cmp"]
        rmse = math.sqrt(s["sq"] / cmp_) if cmp_ else 0.0
        rms_b = math.sqrt(s["bb"] / cmp_) if cmp_ else 0.0
        denom = math.sqrt(s["bb"] * s["cc"])
        cosine = s["dot"] / denom if denom else (1.0 if s["bb"] == s["cc"] else 0.0)
        worst: tuple[int, ...] | None = None
        wb = wc = None
        max_abs = float(self.max_abs.item())
        if cmp_ and max_abs >= 0:
            flat = int(self.idx.item())
            worst = _unravel(flat, base.shape)
            wb, wc = _value_at(base, flat), _value_at(cand, flat)
        ref = None
        if reference is not None:
            rb = math.sqrt(s["rb"] / n["rcmp"]) if n["rcmp"] else 0.0
            rc = math.sqrt(s["rc"] / n["rcmp"]) if n["rcmp"] else 0.0
            ratio = rc / rb if rb else (1.0 if rc == 0 else math.inf)
            rows = n["rows"]
            ref = ReferenceStats(
                reference.dtype, rb, rc, ratio,
                s["t1b"] / rows if rows else None, s["t1c"] / rows if rows else None,
            )  # fmt: skip
        hist = None
        if self.hist_abs is not None and self.hist_rel is not None:
            hist = ErrorHistogram(
                HIST_LO, HIST_HI,
                tuple(int(x) for x in self.hist_abs.tolist()), tuple(int(x) for x in self.hist_rel.tolist()),
            )  # fmt: skip
        samples = None
        if self.sb:
            samples = (tuple(self.t.cat(self.sb).tolist()), tuple(self.t.cat(self.sc).tolist()))
        rows = n["rows"]
        return TensorStats(
            numel=self.numel,
            compared=cmp_,
            max_abs=max(max_abs, 0.0),
            mean_abs=s["abs"] / cmp_ if cmp_ else 0.0,
            max_rel=float(self.max_rel.item()),
            mean_rel=s["rel"] / cmp_ if cmp_ else 0.0,
            rmse=rmse,
            nrmse=rmse / rms_b if rms_b else (0.0 if rmse == 0 else math.inf),
            cosine=cosine,
            outside=n["out"],
            atol=self.opts.atol,
            rtol=self.opts.rtol,
            nan_baseline=n["nanb"],
            nan_candidate=n["nanc"],
            inf_baseline=n["infb"],
            inf_candidate=n["infc"],
            worst_index=worst,
            worst_baseline=wb,
            worst_candidate=wc,
            top1=s["top1"] / rows if rows else None,
            topk=s["topk"] / rows if rows else None,
            k=min(self.opts.topk, self.row) if rows else None,
            reference=ref,
            histogram=hist,
            samples=samples,
        )


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for dim in reversed(shape):
        out.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return tuple(reversed(out))


def _value_at(rec: TensorRecord, flat: int) -> float:
    r = ChunkReader(rec)
    try:
        return float(r.read(flat, 1)[0].float().item())
    finally:
        r.close()
