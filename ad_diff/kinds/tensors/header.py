"""The safetensors header, read without torch and without trusting a number written in it.

Layout: 8 bytes little-endian header length ``n``, ``n`` bytes of JSON, then the data. The JSON maps each
tensor name to ``{"dtype": str, "shape": [int, ...], "data_offsets": [begin, end]}`` (offsets relative to
the end of the header), plus an optional ``"__metadata__": {str: str}``.

Hostile-input rules: the header length is capped and checked against the file size before anything is
read; the JSON's nesting depth and its number of tensors (:data:`ad_diff.core.limits.TENSORS_PER_FILE`)
are checked before it is parsed; integers longer than 20 digits, floats,
``NaN``/``Infinity`` and duplicate keys are refused while parsing; every field's type is checked strictly
(lists of non-negative ints, not bools); offsets must lie inside the file, match dtype x shape exactly and
not overlap. Each violation is an :class:`~ad_diff.errors.InputError` naming the file and the tensor.
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path
from typing import Any

from ad_diff.core import jsonsafe, limits, safepath
from ad_diff.errors import InputError

#: safetensors dtype name -> bytes per element (the dtypes ad-diff can compare).
ITEMSIZE: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8, "C64": 8,
}  # fmt: skip
MAX_HEADER = 100 * 1024 * 1024
"""The safetensors library's own cap on the header length."""
MAX_DEPTH = 4
"""A valid header nests 3 levels (object > entry > shape list); anything deeper is not a header."""
MAX_INT_DIGITS = limits.INT_DIGITS
"""Enough for any 64-bit offset or dimension; longer integers are refused before ``int()`` sees them."""
MAX_DIMS = 64


def safe_name(name: str) -> str:
    """``name`` with lone surrogates (``"\\ud800"`` from a JSON escape) written as ``\\ud800``, so every
    report writer can encode it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return name


def read_header(path: Path,
                root: Path | None = None) -> tuple[int, dict[str, tuple[str, tuple[int, ...], int, int]]]:
    """``(data_start, {name: (dtype, shape, begin, end)})``: absolute offsets, checked against the file."""
    try:
        root = safepath.given_root(path) if root is None else root
        with safepath.open_file(path, root, "a safetensors file") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8:
                raise InputError(path, "not a safetensors file: shorter than its 8-byte header length")
            (n,) = struct.unpack("<Q", head)
            if n > min(MAX_HEADER, size - 8):
                raise InputError(
                    path,
                    f"not a safetensors file: header length {n} exceeds the file ({size} bytes)"
                    if n > size - 8
                    else f"header length {n} exceeds the {MAX_HEADER}-byte cap",
                )
            raw = f.read(n)
    except OSError as e:
        raise InputError(path, f"cannot be read ({e.strerror or e}); expected a safetensors file") from e
    header = _parse_json(path, raw)
    base = 8 + n
    entries: dict[str, tuple[str, tuple[int, ...], int, int]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            _check_metadata(path, info)
            continue
        key = safe_name(name)
        if key in entries:
            raise InputError(path, f"tensor '{key}' is listed twice")
        dtype, shape, begin, end = _check_entry(path, key, info)
        if base + end > size:
            raise InputError(path, f"truncated: tensor '{key}' ends at byte {base + end}, file has {size}")
        entries[key] = (dtype, shape, base + begin, base + end)
    spans = sorted((b, e, k) for k, (_, _, b, e) in entries.items() if e > b)
    for (_, e1, k1), (b2, _, k2) in zip(spans, spans[1:], strict=False):
        if b2 < e1:
            raise InputError(path, f"tensors '{k1}' and '{k2}' overlap in the file (data_offsets)")
    return base, entries


def _parse_json(path: Path, raw: bytes) -> dict[str, Any]:
    listed = raw.count(b'"data_offsets"')  # an upper bound of the entries, before any object is built
    if listed > limits.TENSORS_PER_FILE:
        raise limits.count_cap(path, "tensors", limits.TENSORS_PER_FILE, "TENSORS_PER_FILE")
    try:  # the one bounded JSON reader: depth measured first, integers, floats and duplicate keys refused
        header = jsonsafe.parse(raw, depth=MAX_DEPTH, digits=MAX_INT_DIGITS, floats=False)
    except jsonsafe.JsonProblem as e:
        if e.problem.startswith("JSON nested"):
            raise InputError(path, f"not a safetensors header: {e.problem}; a header nests 3") from None
        problem = e.problem[:200]
        if problem.startswith("is not UTF-8 ("):
            problem = problem.removeprefix("is not UTF-8 (").removesuffix(")")
            raise InputError(path, f"not a safetensors file: header is not UTF-8 JSON ({problem})") from None
        raise InputError(path, f"not a safetensors file: header is not valid JSON ({problem})") from None
    if not isinstance(header, dict):
        raise InputError(path, "not a safetensors file: header is not a JSON object")
    if len(header) > limits.TENSORS_PER_FILE + ("__metadata__" in header):  # keys spelt with escapes
        raise limits.count_cap(path, "tensors", limits.TENSORS_PER_FILE, "TENSORS_PER_FILE")
    return header


def _nonneg_ints(value: Any) -> bool:
    return isinstance(value, list) and all(type(v) is int and v >= 0 for v in value)


def _check_entry(path: Path, name: str, info: Any) -> tuple[str, tuple[int, ...], int, int]:
    what = "expected {dtype: str, shape: [int >= 0, ...], data_offsets: [begin, end]}"
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        raise InputError(path, f"tensor '{name}': header entry {what}")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(dtype, str):
        raise InputError(path, f"tensor '{name}': dtype must be a string, found {type(dtype).__name__}")
    if dtype not in ITEMSIZE:
        raise InputError(
            path, f"tensor '{name}': unsupported dtype {dtype[:40]!r}; expected one of {', '.join(ITEMSIZE)}"
        )
    if not _nonneg_ints(shape) or len(shape) > MAX_DIMS:
        raise InputError(
            path,
            f"tensor '{name}': shape must be a list of at most {MAX_DIMS} integers >= 0, "
            f"found {json.dumps(shape)[:80]}",
        )
    if not _nonneg_ints(offsets) or len(offsets) != 2 or offsets[0] > offsets[1]:
        raise InputError(
            path,
            f"tensor '{name}': data_offsets must be [begin, end] integers with "
            f"0 <= begin <= end, found {json.dumps(offsets)[:80]}",
        )
    begin, end = offsets
    if end - begin != math.prod(shape) * ITEMSIZE[dtype]:
        raise InputError(path, f"tensor '{name}': data_offsets {begin}..{end} do not fit {dtype}{shape}")
    return dtype, tuple(shape), begin, end


def _check_metadata(path: Path, info: Any) -> None:
    if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
        raise InputError(path, "__metadata__ must map strings to strings")
