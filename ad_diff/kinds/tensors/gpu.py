"""Tensor statistics with torch on a CUDA device (``--tensor-device cuda``); torch is imported only here.

The same single pass as :mod:`~ad_diff.kinds.tensors.measure`, span by span (whole rows, or fixed pieces of a
long row). Raw chunks are read straight into pinned host buffers (two per input, so reading the next chunk
overlaps the device's work on this one), copied to the device and decoded there (bf16, fp16, fp32, fp64 and
complex by dtype views, fp8 through the CPU pass's 256-entry table; integers and bool are decoded on the
host). Per-row sums and the extremes stay on the device; the host waits for it once, at the end.

Agreement with the CPU pass (docs/recording-tensors.md): elementwise work (the difference, ``|b|``, the
tolerance test, argmax, top-k) runs in the CPU pass's dtype, so counts, maxima, their index and the argmax
figures are the CPU's; sums are float64 sums of float64 products, which round less than the CPU's float32
blocks, so sums, RMSE and cosine agree to the CPU's rounding (relative 1e-6; cosine 1e-11 absolute). Every
chunk goes through the NaN/Inf-masked fold (no host sync to decide). Where float32 overflows (values beyond
~1.8e19, whose squares overflow) the CPU recomputes that chunk in float64 and this pass does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ad_diff.core import lazy
from ad_diff.core.lazy import available, install_hint
from ad_diff.errors import UsageError
from ad_diff.kinds.tensors.model import TensorRecord, TensorStats
from ad_diff.kinds.tensors.reader import RAW, ChunkReader, compute_dtype, fp8_table, lanes
from ad_diff.kinds.tensors.rows import Layout
from ad_diff.kinds.tensors.stats import HIST_BINS, HIST_HI, HIST_LO, MeasureOptions, Pass

if TYPE_CHECKING:
    import torch
else:
    torch = lazy.module("torch")

GPU_CHUNK = 1 << 23
"""Reals per chunk on the device (8 Mi: few kernel launches per byte, 16 MiB of bf16 per pinned buffer)."""
_VIEWS = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "C64": "float32", "F64": "float64"}
"""Dtypes decoded on the device by a view of the raw bytes (fp8 goes through its table)."""
DEVICES = ("cpu", "cuda", "auto")


def resolve_device(asked: str) -> tuple[str, str | None]:
    """The device tensor statistics run on for ``--tensor-device asked``, and a note when ``auto`` fell back.

    ``cuda`` that cannot be had is a :class:`UsageError` (exit 2): a run that asked for the GPU is never
    quietly computed elsewhere. Only ``cuda`` and ``auto`` import torch.
    """
    if asked == "cpu":
        return "cpu", None
    if asked not in DEVICES:
        raise UsageError(f"tensor device must be one of {', '.join(DEVICES)}, not {asked!r}")
    why = _cuda_missing()
    if why is None:
        return "cuda", None
    if asked == "auto":
        return "cpu", f"tensor device auto: {why}; statistics computed on the CPU"
    raise UsageError(
        f"tensor device cuda (--tensor-device or tensor_device in the config) cannot be used: {why}. "
        "Use --tensor-device cpu or auto."
    )


def _cuda_missing() -> str | None:
    """Why torch cannot compute on a CUDA device here (``None``: it can)."""
    if not available("torch"):
        return f"torch is not installed ({install_hint('torch')}, with a CUDA build of torch)"

    if torch.version.cuda is None:
        return f"torch {torch.__version__} is a CPU-only build"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no CUDA device"
    return None


def device_note(device: str) -> str | None:
    """Which device computed the statistics, for the report (``None`` on the CPU)."""
    if device == "cpu":
        return None

    return (
        f"tensor statistics computed on {torch.cuda.get_device_name()} with torch {torch.__version__} "
        "(float64 sums; agrees with the CPU pass to its rounding, see docs/recording-tensors.md)"
    )


def measure_torch(
    baseline: TensorRecord,
    candidate: TensorRecord,
    opts: MeasureOptions,
    layout: Layout,
    reference: TensorRecord | None = None,
) -> TensorStats:
    """:func:`~ad_diff.kinds.tensors.measure.measure` on ``torch.device(opts.device)`` (``cpu`` works too)."""
    dev = torch.device(opts.device)
    ln = lanes(baseline.dtype)
    fdt = torch.float64 if compute_dtype(baseline.dtype, candidate.dtype) is np.float64 else torch.float32
    chunk = opts.chunk or GPU_CHUNK
    acc = _TorchPass(torch, dev, fdt, opts, layout, baseline.numel * ln, reference is not None)
    feeds: list[_Feed] = []
    try:
        for rec in (baseline, candidate, reference):
            if rec is not None:
                feeds.append(_Feed(torch, dev, rec, layout.buffer(chunk), fdt))
        for start, count, r0, k, width in layout.spans(chunk):
            acc.add([f.load(start // ln, count // ln) for f in feeds], start, r0, k, width)
        acc.finish()
    finally:
        for f in feeds:
            f.close()
    return acc.result(baseline, reference)


class _Feed:
    """One record's chunks on the device: read into pinned host buffers (alternating), copied, decoded."""

    def __init__(self, torch: Any, dev: Any, record: TensorRecord, reals: int, fdt: Any) -> None:
        self.torch, self.dev, self.record, self.fdt = torch, dev, record, fdt
        self.reader = ChunkReader(record)
        self.on_device = record.dtype in _VIEWS or record.dtype.startswith("F8")
        host = np.dtype(RAW[record.dtype]) if self.on_device else np.dtype(str(fdt).removeprefix("torch."))
        pin = dev.type == "cuda"
        self.bufs = [torch.empty(reals * host.itemsize, dtype=torch.uint8, pin_memory=pin) for _ in range(2)]
        self.views = [b.numpy().view(host) for b in self.bufs]
        self.events: list[Any] = [None, None]
        self.slot = 0
        self.table = None
        if record.dtype.startswith("F8"):
            table = fp8_table(record.dtype, np.dtype(str(fdt).removeprefix("torch.")).str)
            self.table = torch.from_numpy(table).to(dev)

    def load(self, start: int, count: int) -> Any:
        """Elements ``start .. start+count`` as a flat tensor of the compute dtype on the device."""
        t, j = self.torch, self.slot
        self.slot ^= 1
        if self.events[j] is not None:
            self.events[j].synchronize()  # the copy out of this buffer has finished
        host = self.views[j][: count * lanes(self.record.dtype)]
        if self.on_device:
            self.reader.raw(start, count, out=host)
        else:
            self.reader.read(start, count, host)
        raw = self.bufs[j][: host.nbytes].to(self.dev, non_blocking=True)
        if self.dev.type == "cuda":
            self.events[j] = t.cuda.Event()
            self.events[j].record()
        else:
            raw = raw.clone()  # on the CPU ``to`` returns the buffer itself, which the next load overwrites
        if self.table is not None:
            return self.table[raw.long()]
        if not self.on_device:
            return raw.view(self.fdt)
        return raw.view(getattr(t, _VIEWS[self.record.dtype])).to(self.fdt)

    def close(self) -> None:
        """Close the file."""
        self.reader.close()


class _TorchPass(Pass):
    """Per-row sums and extremes as device tensors; :meth:`finish` brings them to the host once."""

    def __init__(
        self, torch: Any, dev: Any, fdt: Any, opts: MeasureOptions, layout: Layout, numel: int, ref: bool
    ) -> None:
        super().__init__(opts, layout, numel, ref)
        t = self.t = torch
        self.dev, self.fdt = dev, fdt

        def z(dtype: Any = t.float64, n: int = layout.count) -> Any:
            return t.zeros(n, dtype=dtype, device=dev)

        names = ["bb", "cc", "dd", "ad", "rl"] + (["rr", "eb", "ec"] if ref else [])
        self.rows: dict[str, Any] = {n: z() for n in names}
        self.rows["out"] = z(t.int64)
        if self.sums.logits:
            ints = ["t1", "ab", "ac"] + (["t1b", "t1c", "ar"] if ref else [])
            self.rows |= {n: z(t.int64) for n in ints}
            self.rows["tk"] = z()
        self.best = t.full((), -1.0, dtype=t.float64, device=dev)
        self.best_at = z(t.int64, 1)[0]
        self.best_bc = z(t.float64, 2)
        self.rel_max = z(t.float64, 1)[0]
        self.counts = z(t.int64, 6)  # nan b, nan c, inf b, inf c, compared, compared with the reference
        self.dev_hist = z(t.int64, 2 * HIST_BINS).view(2, HIST_BINS) if opts.histogram else None
        self.edges = t.from_numpy(np.linspace(HIST_LO, HIST_HI, HIST_BINS + 1)).to(dev)
        self.dev_samples: tuple[list[Any], list[Any]] = ([], [])

    def add(self, arrays: list[Any], start: int, r0: int, k: int, width: int) -> None:
        """Fold one span: the CPU pass's masked fold, every time (elements finite in both runs count)."""
        t = self.t
        b, c = arrays[0], arrays[1]
        r = arrays[2] if len(arrays) > 2 else None
        if self.stride:
            first = (-start) % self.stride
            for keep, x in zip(self.dev_samples, (b, c), strict=True):
                keep.append(x[first :: self.stride].to(t.float64, copy=True))
        nanb, nanc, fb, fc = b.isnan(), c.isnan(), b.isfinite(), c.isfinite()
        both = fb & fc
        odd = ~both & ~((b == c) | (nanb & nanc))  # as on the CPU: the same NaN in both runs is no mismatch
        ok = both if r is None else both & r.isfinite()
        counts = (nanb.sum(), nanc.sum(), (~fb & ~nanb).sum(), (~fc & ~nanc).sum(), both.sum(), ok.sum())
        self.counts += t.stack(counts)
        bz, cz = t.where(ok, b, 0), t.where(ok, c, 0)
        rz = None if r is None else t.where(ok, r, 0)
        self._fold(bz, cz, rz, odd, start, r0, k, width)

    def _fold(self, b: Any, c: Any, r: Any, odd: Any, start: int, r0: int, k: int, width: int) -> None:
        t, o, rows, shape = self.t, self.opts, self.rows, (k, width)
        span = slice(r0, r0 + k)
        d = c - b
        for name, x in (("dd", d), ("bb", b), ("cc", c)):
            rows[name][span] += _squares(x, shape)
        if r is not None:
            for name, x in (("rr", r), ("eb", b - r), ("ec", c - r)):
                rows[name][span] += _squares(x, shape)
        d = d.abs_()
        rows["ad"][span] += d.view(shape).sum(1, dtype=t.float64)
        i = d.argmax()  # ``take``, not ``d[i]``: indexing by a 0-dim tensor would wait for the device
        v = t.take(d, i).to(t.float64)
        better = v > self.best  # strict, as on the CPU: the first position of the largest difference
        self.best = t.where(better, v, self.best)
        self.best_at = t.where(better, i + start, self.best_at)
        self.best_bc = t.where(better, t.stack((t.take(b, i), t.take(c, i))).to(t.float64), self.best_bc)
        mag = b.abs()
        if o.relative:
            rel = d / mag
            rel = t.where(rel.isnan(), 0, rel)  # 0/0: no change where the baseline is 0; x/0 stays inf
            rows["rl"][span] += rel.view(shape).sum(1, dtype=t.float64)
            self.rel_max = t.maximum(self.rel_max, rel.max().to(t.float64))
        if self.dev_hist is not None:
            self._histogram(d, mag)
        limit = mag.mul_(o.rtol).add_(o.atol)  # two roundings, like the CPU pass (no fused multiply-add)
        rows["out"][span] += ((d > limit) | odd).view(shape).sum(1)
        if self.sums.logits and width == self.layout.width:
            self._logits(b.view(shape), c.view(shape), None if r is None else r.view(shape), span)

    def _logits(self, b: Any, c: Any, r: Any, span: slice) -> None:
        """Argmax and top-k overlap per row by k masked argmax passes (the CPU pass's tie order)."""
        t, rows = self.t, self.rows
        k = min(self.opts.topk, b.shape[1])
        tops = []
        for x in (b, c):  # scratch by now: masked in place
            picks = []
            for _ in range(k):
                i = x.argmax(dim=1)
                picks.append(i)
                x.scatter_(1, i[:, None], float("-inf"))
            tops.append(t.stack(picks, dim=1))
        ab, ac = tops[0][:, 0], tops[1][:, 0]
        rows["ab"][span], rows["ac"][span] = ab, ac
        rows["t1"][span] = (ab == ac).to(t.int64)
        overlap = (tops[0][:, :, None] == tops[1][:, None, :]).any(dim=2).sum(dim=1)
        rows["tk"][span] = overlap.to(t.float64) / k
        if r is not None:
            ar = r.argmax(dim=1)
            rows["ar"][span] = ar
            rows["t1b"][span], rows["t1c"][span] = (ab == ar).to(t.int64), (ac == ar).to(t.int64)

    def _histogram(self, d: Any, mag: Any) -> None:
        """numpy's histogram of ``log10`` of the absolute and relative errors, bin for bin (its edge test)."""
        t = self.t
        assert self.dev_hist is not None, "only called when histograms are collected"
        rel = t.nan_to_num(d / mag, nan=0.0, posinf=1e30)
        for h, x in zip(self.dev_hist, (d, rel), strict=True):
            logs = t.log10(x.to(t.float64).clamp(1e-30, 1e30)).clamp(HIST_LO, HIST_HI - 1e-6)
            idx = ((logs - HIST_LO) / (HIST_HI - HIST_LO) * HIST_BINS).to(t.int64).clamp(0, HIST_BINS - 1)
            idx -= (logs < self.edges[idx]).to(t.int64)
            idx += ((logs >= self.edges[idx + 1]) & (idx != HIST_BINS - 1)).to(t.int64)
            h.scatter_add_(0, idx, t.ones_like(idx))  # not bincount, which waits for the device (its size)

    def finish(self) -> None:
        """Bring the device's sums and extremes to the host (the only wait for the device)."""
        for name, v in self.rows.items():
            setattr(self.sums, name, v.cpu().numpy())
        counts = self.counts.tolist()
        self.nonfinite, self.compared = counts[:4], counts[4]
        self.ref_compared = counts[5] if "rr" in self.rows else 0
        self.max_abs, self.max_rel = float(self.best), float(self.rel_max)
        wb, wc = self.best_bc.tolist()
        self.worst = (int(self.best_at), wb, wc)
        if self.dev_hist is not None:
            self.hist = (self.dev_hist[0].cpu().numpy(), self.dev_hist[1].cpu().numpy())
        if self.dev_samples[0]:
            sb, sc = (self.t.cat(s).cpu().numpy() for s in self.dev_samples)
            self.samples = ([sb], [sc])


def _squares(x: Any, shape: tuple[int, int]) -> Any:
    """Per-row sums of squares in float64 (products of float64 values: no overflow, little rounding)."""
    x = x.view(shape).double()
    return (x * x).sum(1)
