"""The tensor kind's facts for the accounting pass (:class:`ad_diff.core.facts.Facts`): every recorded tensor
and reference entry under ``tensors/`` (``file:name``), by dtype, shape and content.

What the tensor kind compared is not read again: it stands as the kind's verdict (the same value in both
runs when it judged them identical, so a difference within tolerance is one that
``tensor-within-tolerance`` absorbs and one beyond is covered by its finding). Other safetensors entries are
hashed from their bytes (XXH3-128, 1 MiB at a time); other tensor files (``.pt``) are hashed whole. Links and
files that are not regular files are never opened (ADT008 reports them).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import xxhash

from ad_diff.core import safepath
from ad_diff.core.facts import Difference, Evidence, Facts, Item
from ad_diff.discover import TENSOR_SUFFIXES
from ad_diff.errors import InputError
from ad_diff.kinds.tensors import ranks
from ad_diff.kinds.tensors.header import read_header
from ad_diff.kinds.tensors.model import TensorAnalysis, TensorVerdict

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context

CHUNK = 1 << 20
"""Bytes read at a time when hashing."""


def _hash_range(f: Any, begin: int, end: int) -> str:
    h = xxhash.xxh3_128()
    f.seek(begin)
    left = end - begin
    while left > 0:
        chunk = f.read(min(CHUNK, left))
        if not chunk:
            break
        h.update(chunk)
        left -= len(chunk)
    return h.hexdigest()


def _open(path: Path, what: str) -> BinaryIO:
    """``path`` opened beneath its own folder with no link followed (:func:`ad_diff.core.safepath.open_file`):
    the kinds vetted the listing; a file swapped for a link since is refused, not read."""
    return safepath.open_file(path, path.parent, what)


def _hash_file(path: Path) -> str:
    with _open(path, "a tensor file") as f:
        return _hash_range(f, 0, path.stat().st_size)


def _regular_files(folder: Path) -> Iterator[tuple[str, Path]]:
    """``(relative path, path)`` of the regular files under ``folder``, sorted; links (to files or folders)
    and FIFOs, sockets or devices are never opened (the tensor kind reports them: ADT008)."""
    for dirpath, dirnames, filenames in os.walk(folder):  # os.walk does not follow linked folders
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            yield p.relative_to(folder).as_posix(), p


def tensors(folder: Path | None, judged: dict[str, dict[str, str]]) -> dict[str, str]:
    """``{relative file:tensor name: dtype shape content}`` of every recorded tensor under ``tensors/``
    (references included, under ``reference/``).

    ``judged`` (file -> name -> value) holds what the tensor kind already compared: those entries take its
    value and are not read again. Other safetensors entries are hashed from their bytes (BLAKE2, 1 MiB at a
    time); other tensor files (``.pt``) are hashed whole."""
    out: dict[str, str] = {}
    if folder is None or not folder.is_dir():
        return out
    for rel, path in _regular_files(folder):
        if path.suffix not in TENSOR_SUFFIXES:
            continue
        if not stat.S_ISREG(path.lstat().st_mode):
            out[rel] = "not a regular file"
            continue
        seen = judged.get(rel, {})
        out.update({f"{rel}:{name}": value for name, value in seen.items()})
        try:
            if path.suffix != ".safetensors":
                if not seen:
                    out[rel] = f"file {_hash_file(path)}"
                continue
            _start, entries = read_header(path)
            with _open(path, "a safetensors file") as f:
                for name, (dtype, shape, begin, end) in sorted(entries.items()):
                    if name not in seen:
                        out[f"{rel}:{name}"] = f"{dtype} {list(shape)} {_hash_range(f, begin, end)}"
        except (InputError, OSError):
            out[rel] = "unreadable"  # the tensor kind reports it (ADT008)
    return out


def _judged(a: TensorAnalysis, ctx: Context, ev: Evidence
            ) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """Per run, ``file -> name -> value`` of every tensor the tensor kind compared: the same value in both
    runs when it judged them identical, else the verdict on the candidate's side."""
    out: tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]] = ({}, {})
    for cmp in a.comparisons:
        same = cmp.verdict is TensorVerdict.IDENTICAL
        for i, (rec, root) in enumerate(((cmp.baseline, ctx.baseline.tensors),
                                         (cmp.candidate, ctx.candidate.tensors))):
            if root is None:
                continue
            try:
                rel = rec.path.relative_to(root).as_posix()
            except ValueError:
                continue
            said = "recorded" if same or i == 0 else cmp.verdict.value
            out[i].setdefault(rel, {})[rec.name] = f"{rec.dtype} {list(rec.shape)} {said}"
            if cmp.passed:
                rank = ranks.split(cmp.name)[1]  # the rank it was compared as (an unsharded side: each)
                ev.tensors_within.add(_of_rank(_normal(f"{rel}:{rec.name}"), rank))
    return out


def _normal(key: str) -> str:
    """A fact's key with its rank folder written as the rank (``rank1/outputs.safetensors:logits`` ->
    ``outputs.safetensors:logits@rank1``): where a run stored a rank's tensors is layout; which rank's
    tensor it is, is the fact (:mod:`.ranks`)."""
    head, sep, rest = key.partition("/")
    m = ranks.RANK_FOLDER.fullmatch(head) if sep else None
    return ranks.key(rest, int(m[1])) if m else key


def _of_rank(key: str, rank: int | None) -> str:
    return key if rank is None or ranks.split(key)[1] is not None else ranks.key(key, rank)


def facts(a: TensorAnalysis, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
    """Both runs' recorded tensors; fills the tensor part of ``ev``."""
    out = Facts()
    ev.user_reference = ctx.settings.reference_dir is not None
    jb, jc = _judged(a, ctx, ev)
    b, c = tensors(ctx.baseline.tensors, jb), tensors(ctx.candidate.tensors, jc)
    # each rank's tensors meet the other run's as the kind paired them: unsharded against each rank
    b, c, _ = ranks.spread({_normal(k): v for k, v in b.items()}, {_normal(k): v for k, v in c.items()})

    def make(key: str, bv: Any, cv: Any) -> Difference:
        name = key.rpartition(":")[2] if ":" in key else None
        return Difference(Item.TENSOR, f"tensor {key}", bv, cv, tensor=name, key=key)

    out.compare(Item.TENSOR, b, c, make)
    return out


__all__ = ["facts", "tensors"]
