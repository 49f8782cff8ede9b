"""Read a recorded tensor's elements chunk by chunk as numpy arrays, without torch for safetensors.

safetensors data is read chunk by chunk with ``readinto`` into one reused buffer of the storage type (no
memory map: no page faults, no pages to release, and resident memory stays at a few chunks whatever the
tensor's size), then decoded into the caller's float buffer: bf16 is taken as uint16 and shifted into the
high half of a float32 (exact), fp8 goes through a 256-entry table, fp16 widens to float32, everything
else (fp32, fp64, integers, bool) to float64. Complex tensors (``C64``) come back as interleaved
(real, imag) float64 pairs, so both parts are compared. :meth:`ChunkReader.raw` hands out the undecoded
chunk (the CUDA path decodes on the device).

``.pt`` records are read from the tensor :mod:`ad_diff.kinds.tensors.pt` loaded (torch, imported lazily).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np

from ad_diff.core import safepath
from ad_diff.errors import InputError
from ad_diff.kinds.tensors.header import ITEMSIZE
from ad_diff.kinds.tensors.model import FileFormat, TensorRecord

RAW: dict[str, Any] = {
    "BOOL": np.uint8, "U8": np.uint8, "I8": np.int8, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8,
    "I16": np.int16, "U16": np.uint16, "F16": np.float16, "BF16": np.uint16,
    "I32": np.int32, "U32": np.uint32, "F32": np.float32,
    "I64": np.int64, "U64": np.uint64, "F64": np.float64, "C64": np.float32,
}  # fmt: skip
"""numpy storage type of each safetensors dtype (bf16 as uint16, fp8 as uint8, complex as float32 pairs)."""
NARROW = frozenset({"BF16", "F16", "F8_E4M3", "F8_E5M2"})
"""Dtypes computed in float32: products of two of their values are exact in float32."""


def compute_dtype(*dtypes: str) -> Any:
    """float32 when every dtype is narrow (products stay exact), else float64."""
    return np.float32 if all(d in NARROW for d in dtypes) else np.float64


def lanes(dtype: str) -> int:
    """Reals per element: 2 for complex (real and imaginary part are compared as two elements), else 1."""
    return 2 if dtype == "C64" else 1


class ChunkReader:
    """Elements ``[start, start+count)`` of one record, decoded into a caller-provided float buffer."""

    def __init__(self, record: TensorRecord) -> None:
        self.record = record
        self._file: Any = None
        self._flat: np.ndarray | None = None
        self._bits: Any = None
        self._buf: Any = None
        if record.select is not None:
            return  # the kept rows are read once, on first use (_selected)
        if record.fmt is FileFormat.SAFETENSORS:
            if record.numel == 0:
                return
            try:
                root = safepath.given_root(record.path) if record.root is None else record.root
                self._file = safepath.open_file(record.path, root, "a safetensors file", buffering=0)
            except OSError as e:
                raise InputError(record.path, f"cannot be read ({e.strerror or e})") from e
        else:
            from ad_diff.kinds.tensors.pt import flat_numpy  # lazy: the .pt reader (torch) only for .pt files

            self._flat = flat_numpy(record)

    def read(self, start: int, count: int, out: np.ndarray) -> np.ndarray:
        """Decode elements ``start .. start+count`` into ``out[:count * lanes]`` (float32 or float64)."""
        dtype = self.record.dtype
        n = count * lanes(dtype)
        raw = self.raw(start, count)
        dst = out[:n]
        if dtype == "BF16":
            wide = dst.dtype != np.float32  # compared with a wider dtype: decode to float32 first
            if wide and (self._bits is None or self._bits.size < n):
                self._bits = np.empty(n, dtype=np.uint32)
            bits = self._bits[:n] if wide else dst.view(np.uint32)
            np.copyto(bits, raw)
            bits <<= 16
            if wide:
                np.copyto(dst, bits.view(np.float32))
        elif dtype in ("F8_E4M3", "F8_E5M2"):
            np.take(fp8_table(dtype, dst.dtype.str), raw, out=dst)
        else:
            np.copyto(dst, raw, casting="unsafe")
        return dst

    def raw(self, start: int, count: int, out: np.ndarray | None = None) -> np.ndarray:
        """Elements ``start .. start+count`` undecoded (bf16 as uint16, fp8 as uint8, complex as float32
        pairs), in ``out`` (of the storage type ``RAW[dtype]``) when given, else in this reader's buffer
        (valid until the next call) or a view of the loaded ``.pt`` tensor."""
        rec = self.record
        ln = lanes(rec.dtype)
        n = count * ln
        if rec.select is not None and self._flat is None:
            self._flat = self._selected()
        if self._flat is not None:
            part = self._flat[start * ln : start * ln + n]
            if out is None:
                return part
            np.copyto(out[:n], part)
            return out[:n]
        assert rec.data_offset is not None, "safetensors records carry their offset"
        if out is None:
            if self._buf is None or self._buf.size < n:
                self._buf = np.empty(n, dtype=RAW[rec.dtype])
            out = self._buf
        return self._read_at(rec.data_offset + start * ITEMSIZE[rec.dtype], out[:n])

    def _read_at(self, offset: int, out: np.ndarray) -> np.ndarray:
        """Fill ``out`` from byte ``offset`` of the file (an InputError when the file ends first)."""
        rec = self.record
        want = out.nbytes
        got = 0
        if self._file is not None and want:
            view = out.data.cast("B")
            try:
                self._file.seek(offset)
                while got < want:
                    k = self._file.readinto(view[got:])
                    if not k:
                        break
                    got += k
            except OSError as e:
                raise InputError(rec.path, f"cannot be read ({e.strerror or e})") from e
        if got < want:
            raise InputError(rec.path, f"truncated while reading tensor '{rec.name}'")
        return out

    def _selected(self) -> np.ndarray:
        """The kept position of dim -2, read row by row (bounded by what is kept, not by what is stored)."""
        rec = self.record
        assert rec.select is not None, "only for selected records"
        seq, keep = rec.select
        ln = lanes(rec.dtype)
        width = rec.shape[-1] * ln
        full = replace(rec, shape=(*rec.shape[:-2], seq, rec.shape[-1]), select=None)
        src = ChunkReader(full)
        try:
            per = rec.shape[-1]  # elements of one position
            if src._flat is not None:
                return np.ascontiguousarray(src._flat.reshape(-1, seq, width)[:, keep, :]).reshape(-1)
            kept = np.empty(rec.numel * ln, dtype=RAW[rec.dtype])
            for i, row in enumerate(kept.reshape(-1, width) if width else ()):
                np.copyto(row, src.raw((i * seq + keep) * per, per))
            return kept
        finally:
            src.close()

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None


@cache
def fp8_table(dtype: str, result: str) -> np.ndarray:
    """The value of every fp8 code: E4M3 (``fn``: bias 7, no Inf, NaN at S.1111.111) or E5M2 (IEEE-like)."""
    exp_bits, man_bits = (4, 3) if dtype == "F8_E4M3" else (5, 2)
    bias = (1 << (exp_bits - 1)) - 1
    out = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        top = (1 << exp_bits) - 1
        if dtype == "F8_E4M3" and e == top and m == (1 << man_bits) - 1:
            out[code] = np.nan
        elif dtype == "F8_E5M2" and e == top:
            out[code] = sign * np.inf if m == 0 else np.nan
        elif e == 0:
            out[code] = sign * m * 2.0 ** (1 - bias - man_bits)
        else:
            out[code] = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
    return out.astype(np.dtype(result))
