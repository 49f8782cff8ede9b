"""Discover the recorded tensors of a run (``tensors/*.safetensors`` and ``*.pt``); headers only.

Layout of a run's ``tensors/`` folder (written by :mod:`ad_diff.recording`; hand-made folders work too):

* ``*.safetensors`` / ``*.pt`` / ``*.pth``: output tensors, keyed by output name (``logits``);
* files whose name starts with ``nodes``: per-node captures, keyed by graph node name;
* files whose name starts with ``inputs``: the inputs (prompt ids) the outputs were produced from;
* ``reference/``: higher-precision reference outputs, keyed like the outputs.

Containment: a file named like a tensor file that is a link leaving the run folder (the folder holding
``tensors/``; ``tensors/`` or ``reference/`` linked elsewhere counts too), a FIFO, a broken link or a folder
is refused unread and reported like any unreadable file (:func:`ad_diff.core.safepath.refusal`).

safetensors headers are read by :mod:`~ad_diff.kinds.tensors.header` (no torch); data is streamed later by
:class:`~ad_diff.kinds.tensors.reader.ChunkReader`. Only ``.pt`` files import torch
(:mod:`~ad_diff.kinds.tensors.pt`), after a pickle pre-scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ad_diff.core import limits, safepath
from ad_diff.core.lazy import require
from ad_diff.core.model import RunId
from ad_diff.errors import InputError
from ad_diff.kinds.tensors import ranks
from ad_diff.kinds.tensors.header import ITEMSIZE, read_header
from ad_diff.kinds.tensors.model import FileFormat, TensorKind, TensorRecord, Unreadable

SUFFIXES = (".safetensors", ".pt", ".pth")
_TORCH_NAMES: dict[str, str] = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
    "I16": "int16", "U16": "uint16", "F16": "float16", "BF16": "bfloat16", "I32": "int32", "U32": "uint32",
    "F32": "float32", "I64": "int64", "U64": "uint64", "F64": "float64", "C64": "complex64",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class RunTensors:
    """The tensors one run recorded, by kind and name, plus files that could not be read."""

    outputs: dict[str, TensorRecord]
    """Output and per-node records (``record.kind`` tells them apart)."""
    references: dict[str, TensorRecord]
    inputs: dict[str, TensorRecord]
    unreadable: tuple[Unreadable, ...]


def dtype_name(dtype: Any) -> str:
    """The safetensors dtype name for a ``torch.dtype`` (``torch.bfloat16`` -> ``BF16``)."""
    short = str(dtype).removeprefix("torch.")
    for k, v in _TORCH_NAMES.items():
        if v == short:
            return k
    return short.upper()


def _listing(folder: Path, root: Path, bad: list[Unreadable], run: RunId) -> tuple[list[Path], list[str]]:
    """Tensor files directly in ``folder``, sorted, and every name in it; entries named like a tensor file
    that may not be read go to ``bad`` with the reason."""
    files: list[Path] = []
    try:  # listed through a descriptor opened beneath the run folder: one linked out is not listed
        names = safepath.list_names(folder, root, "a folder of recorded tensors")
    except InputError as e:
        bad.append(Unreadable(run, folder, e.detail))
        return files, []
    for p in (folder / n for n in names):
        if p.suffix not in SUFFIXES:
            continue
        why = safepath.refusal(p, root)
        if why is None:
            files.append(p)
        else:
            bad.append(Unreadable(run, p, f"{why}; expected a tensor file"))
    return files, names


def _rank_folders(folder: Path, names: list[str], bad: list[Unreadable], run: RunId
                  ) -> list[tuple[Path, int]]:
    """The per-rank folders among ``names`` (``folder``'s listing: ``rank<r>/``, :mod:`.ranks`), by rank;
    one that is a link out of the run folder is refused like a file when it is listed."""
    out = []
    for n in names:
        m = ranks.RANK_FOLDER.fullmatch(n)
        if m is None:
            continue
        sub = folder / n
        if sub.is_symlink() or sub.is_dir():  # a link is listed through the opener, which refuses it
            out.append((sub, int(m[1])))
        else:
            bad.append(Unreadable(run, sub, "is not a folder; expected a folder of one rank's tensors"))
    return sorted(out, key=lambda x: x[1])


def discover(folder: Path, run: RunId, root: Path | None = None) -> RunTensors:
    """Index every tensor file under ``folder`` (a run's ``tensors/``; ``root``, the run folder, defaults to
    the folder holding it); bad files become ``Unreadable``."""
    outputs: dict[str, TensorRecord] = {}
    references: dict[str, TensorRecord] = {}
    inputs: dict[str, TensorRecord] = {}
    bad: list[Unreadable] = []
    total = 0
    root = folder.parent if root is None else root
    files, names = _listing(folder, root, bad, run)
    ref_dir = folder / "reference"
    if ref_dir.is_dir():
        files += _listing(ref_dir, root, bad, run)[0]
    rank_of: dict[Path, int] = {}
    for sub, rank in _rank_folders(folder, names, bad, run):
        listed = _listing(sub, root, bad, run)[0]
        rank_of.update(dict.fromkeys(listed, rank))
        files += listed
    for path in files:
        if path.parent == ref_dir:
            kind, target = TensorKind.REFERENCE, references
        elif path.name.startswith("inputs"):
            kind, target = TensorKind.INPUT, inputs
        else:
            kind, target = (TensorKind.NODE if path.name.startswith("nodes") else TensorKind.OUTPUT), outputs
        over = limits.count_cap(folder, "tensors over its files", limits.TENSORS_PER_RUN, "TENSORS_PER_RUN")
        if total > limits.TENSORS_PER_RUN:  # past the cap: the rest of the files are reported, never read
            bad.append(Unreadable(run, path, over.detail))
            continue
        try:
            records = read_index(path, kind, root)
        except InputError as e:
            bad.append(Unreadable(run=run, path=path, message=e.detail))
            continue
        total += len(records)
        if total > limits.TENSORS_PER_RUN:  # this file and the ones after it are reported, not compared
            bad.append(Unreadable(run, path, over.detail))
            continue
        of_rank = rank_of.get(path)
        for rec in records:
            k = rec.name if of_rank is None else ranks.key(rec.name, of_rank)
            if k in target:
                bad.append(Unreadable(run, path, f"tensor '{rec.name}' is also in {target[k].path.name}"))
                continue
            target[k] = rec
    return RunTensors(outputs, references, inputs, tuple(bad))


def read_index(path: Path, kind: TensorKind = TensorKind.OUTPUT,
               root: Path | None = None) -> list[TensorRecord]:
    """Records (name, dtype, shape, offset) of one file, without reading tensor data (``root``: the run
    folder it is opened beneath; ``None``: the folder it resolves into)."""
    if path.suffix == ".safetensors":
        _, entries = read_header(path, root)
        return [
            TensorRecord(name, path, FileFormat.SAFETENSORS, dtype, shape, begin, kind, root=root)
            for name, (dtype, shape, begin, _end) in sorted(entries.items())
        ]
    require("torch", f"reading {path.name} (a .pt file; .safetensors files need no torch)")
    from ad_diff.kinds.tensors.pt import load_pt  # lazy: the .pt reader (torch) only for .pt files

    records = []
    for name, t in load_pt(path, root).items():
        dtype = dtype_name(t.dtype)
        if dtype not in ITEMSIZE:
            raise InputError(path, f"tensor '{name}': unsupported dtype {t.dtype}")
        records.append(TensorRecord(name, path, FileFormat.PT, dtype, tuple(t.shape), None, kind, root=root))
    return records
