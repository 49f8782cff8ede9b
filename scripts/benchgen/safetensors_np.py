"""Write safetensors files with numpy alone (no torch): bf16 is written as the upper half of float32
(round to nearest even), which is what ``safetensors.numpy`` cannot do, since numpy has no bfloat16.

Format: 8 bytes little-endian header length, a JSON header ``{name: {dtype, shape, data_offsets}}`` plus
optional ``__metadata__`` (strings), padded with spaces to a multiple of 8, then the tensors' bytes.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

_DTYPES = {
    np.dtype(np.float32): "F32",
    np.dtype(np.int64): "I64",
    np.dtype(np.int32): "I32",
    np.dtype(np.float16): "F16",
    np.dtype(np.uint8): "U8",
}


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """The bfloat16 bit patterns (``uint16``) nearest to ``x`` (rounded to nearest even; finite input)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """Float32 values of bfloat16 bit patterns."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def write(
    path: Path,
    tensors: dict[str, np.ndarray],
    *,
    bf16: frozenset[str] = frozenset(),
    metadata: dict[str, str] | None = None,
) -> None:
    """Write ``tensors`` (sorted by name) to ``path``; names in ``bf16`` are stored as BF16."""
    header: dict[str, object] = {}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        arr = tensors[name]
        if name in bf16:
            data, dtype = bf16_bits(arr).astype("<u2").tobytes(), "BF16"
        else:
            data, dtype = (
                np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes(),
                _DTYPES[arr.dtype],
            )
        header[name] = {
            "dtype": dtype,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = dict(metadata)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
