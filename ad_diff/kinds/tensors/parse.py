"""Discover and open recorded tensors (``tensors/*.safetensors`` and ``*.pt``) lazily.

Layout of a run's ``tensors/`` folder (written by :mod:`ad_diff.recording`; hand-made folders work too):

* ``*.safetensors`` / ``*.pt`` / ``*.pth``: output tensors, keyed by output name (``logits``);
* files whose name starts with ``nodes``: per-node captures, keyed by graph node name;
* files whose name starts with ``inputs``: the inputs (prompt ids) the outputs were produced from;
* ``reference/``: higher-precision reference outputs, keyed like the outputs.

Only headers are read here. Data is streamed later in chunks by :class:`ChunkReader` (safetensors: plain
``readinto`` at the recorded offsets, so memory stays at a few chunks whatever the tensor size; ``.pt``:
``torch.load(mmap=True, weights_only=True)``). ``torch`` is imported inside functions only, so
``ad-diff --help`` never pays for it. A ``.pt`` is never unpickled beyond what ``weights_only`` allows.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ad_diff.errors import InputError
from ad_diff.core.model import RunId
from ad_diff.kinds.tensors.model import FileFormat, TensorKind, TensorRecord, Unreadable

#: safetensors dtype name -> bytes per element.
ITEMSIZE: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip
_TORCH_NAMES: dict[str, str] = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
    "I16": "int16", "U16": "uint16", "F16": "float16", "BF16": "bfloat16",
    "I32": "int32", "U32": "uint32", "F32": "float32", "I64": "int64", "U64": "uint64", "F64": "float64",
}  # fmt: skip
_MAX_HEADER = 100 * 1024 * 1024
SUFFIXES = (".safetensors", ".pt", ".pth")


@dataclass(frozen=True, slots=True)
class RunTensors:
    """The tensors one run recorded, by kind and name, plus files that could not be read."""

    outputs: dict[str, TensorRecord]
    """Output and per-node records (``record.kind`` tells them apart)."""
    references: dict[str, TensorRecord]
    inputs: dict[str, TensorRecord]
    unreadable: tuple[Unreadable, ...]


def torch_dtype(name: str) -> Any:
    """The ``torch.dtype`` for a safetensors dtype name."""
    import torch

    return getattr(torch, _TORCH_NAMES[name])


def dtype_name(dtype: Any) -> str:
    """The safetensors dtype name for a ``torch.dtype``."""
    short = str(dtype).removeprefix("torch.")
    for k, v in _TORCH_NAMES.items():
        if v == short:
            return k
    return short.upper()


def discover(folder: Path, run: RunId) -> RunTensors:
    """Index every tensor file under ``folder`` (a run's ``tensors/``); bad files become ``Unreadable``."""
    outputs: dict[str, TensorRecord] = {}
    references: dict[str, TensorRecord] = {}
    inputs: dict[str, TensorRecord] = {}
    bad: list[Unreadable] = []
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SUFFIXES)
    ref_dir = folder / "reference"
    if ref_dir.is_dir():
        files += sorted(p for p in ref_dir.iterdir() if p.is_file() and p.suffix in SUFFIXES)
    for path in files:
        if path.parent == ref_dir:
            kind, target = TensorKind.REFERENCE, references
        elif path.name.startswith("inputs"):
            kind, target = TensorKind.INPUT, inputs
        else:
            kind, target = (TensorKind.NODE if path.name.startswith("nodes") else TensorKind.OUTPUT), outputs
        try:
            records = read_index(path, kind)
        except InputError as e:
            bad.append(Unreadable(run=run, path=path, message=e.detail))
            continue
        for rec in records:
            if rec.name in target:
                bad.append(Unreadable(run, path, f"tensor '{rec.name}' is also in {target[rec.name].path.name}"))
                continue
            target[rec.name] = rec
    return RunTensors(outputs, references, inputs, tuple(bad))


def read_index(path: Path, kind: TensorKind = TensorKind.OUTPUT) -> list[TensorRecord]:
    """Records (name, dtype, shape, offset) of one file, without reading tensor data."""
    if path.suffix == ".safetensors":
        return _safetensors_index(path, kind)
    return [
        TensorRecord(name=n, path=path, fmt=FileFormat.PT, dtype=dtype_name(t.dtype), shape=tuple(t.shape), kind=kind)
        for n, t in sorted(load_pt(path).items())
    ]


def _safetensors_index(path: Path, kind: TensorKind) -> list[TensorRecord]:
    try:
        size = path.stat().st_size
        f = path.open("rb")
    except OSError as e:
        raise InputError(path, f"cannot be read ({e.strerror or e}); expected a safetensors file") from e
    with f:
        head = f.read(8)
        if len(head) < 8:
            raise InputError(path, "not a safetensors file: shorter than its 8-byte header length")
        (n,) = struct.unpack("<Q", head)
        if n > min(_MAX_HEADER, size - 8):
            raise InputError(path, f"not a safetensors file: header length {n} exceeds the file ({size} bytes)")
        raw = f.read(n)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(path, f"not a safetensors file: header is not JSON ({e})") from e
    if not isinstance(header, dict):
        raise InputError(path, "not a safetensors file: header is not a JSON object")
    base = 8 + n
    records = []
    for name, info in sorted(header.items()):
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], tuple(int(d) for d in info["shape"]), info["data_offsets"]
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(path, f"tensor '{name}': header entry lacks dtype/shape/data_offsets") from e
        if dtype not in ITEMSIZE:
            raise InputError(path, f"tensor '{name}': unsupported dtype {dtype!r}")
        if end - begin != math.prod(shape) * ITEMSIZE[dtype] or begin < 0:
            raise InputError(path, f"tensor '{name}': data_offsets {begin}..{end} do not fit {dtype}{list(shape)}")
        if base + end > size:
            raise InputError(path, f"truncated: tensor '{name}' ends at byte {base + end}, file has {size}")
        records.append(TensorRecord(name, path, FileFormat.SAFETENSORS, dtype, shape, base + begin, kind))
    return records


_PT_CACHE: dict[Path, dict[str, Any]] = {}


def load_pt(path: Path) -> dict[str, Any]:
    """Load a ``.pt`` holding a tensor or a (nested) dict of tensors, memory-mapped, ``weights_only=True``.

    A pickle that needs anything beyond tensors and containers (i.e. one that could run code) is refused
    with an :class:`InputError`; nothing in it is executed.
    """
    if path in _PT_CACHE:
        return _PT_CACHE[path]
    import pickle

    import torch

    try:
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as e:
            if "mmap" not in str(e) and "zip" not in str(e):
                raise
            # Legacy (non-zip) torch.save format cannot be memory-mapped; load it plainly, still weights_only.
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        unsafe = re.search(r"GLOBAL (\S+)", str(e))
        if unsafe is None:
            raise InputError(path, f"not a readable torch.save file ({_first_line(e).split('. ')[0]})") from e
        raise InputError(
            path,
            f"refused to load: this pickle calls {unsafe.group(1)}, i.e. it could run code, and ad-diff only "
            "loads .pt files with weights_only=True (plain tensors and containers). Nothing in it was "
            "executed. Record tensors with ad_diff.recording (safetensors) instead.",
        ) from e
    except Exception as e:  # noqa: BLE001 - any failure of torch's reader on garbage is an input error
        raise InputError(path, f"not a readable torch.save file ({type(e).__name__}: {_first_line(e)})") from e
    flat: dict[str, Any] = {}
    _flatten(obj, path.stem if isinstance(obj, torch.Tensor) else "", flat, path)
    _PT_CACHE[path] = flat
    return flat


def _first_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


def _flatten(obj: Any, prefix: str, out: dict[str, Any], path: Path) -> None:
    import torch

    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out, path)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _flatten(v, f"{prefix}.{i}" if prefix else str(i), out, path)
    elif obj is not None:
        raise InputError(path, f"expected a tensor or a dict of tensors, found {type(obj).__name__} at '{prefix}'")


class ChunkReader:
    """Reads a record's elements ``[start, start+count)`` as a flat CPU tensor, one chunk at a time."""

    def __init__(self, record: TensorRecord) -> None:
        self.record = record
        self._file: Any = None
        self._flat: Any = None
        if record.fmt is FileFormat.SAFETENSORS:
            self._file = record.path.open("rb")  # noqa: SIM115 - closed in close()
        else:
            t = load_pt(record.path)[record.name]
            # reshape(-1) is a view for contiguous (the usual) tensors; others are copied once.
            self._flat = t.reshape(-1)

    def read(self, start: int, count: int, pin: bool = False) -> Any:
        """Elements ``start .. start+count`` (flat), in the record's dtype."""
        import torch

        if self._flat is not None:
            return self._flat[start : start + count]
        size = ITEMSIZE[self.record.dtype]
        buf = torch.empty(count * size, dtype=torch.uint8, pin_memory=pin)
        assert self.record.data_offset is not None
        self._file.seek(self.record.data_offset + start * size)
        got = self._file.readinto(buf.numpy())
        if got != count * size:
            raise InputError(self.record.path, f"truncated while reading tensor '{self.record.name}'")
        return buf.view(torch_dtype(self.record.dtype))

    def close(self) -> None:
        """Release the file handle."""
        if self._file is not None:
            self._file.close()
            self._file = None
