"""The run folder's own records for the accounting pass: ``run.json`` (written by ``ad-diff record``) and
every file no kind reads. The kinds inventory their own inputs (:class:`ad_diff.core.facts.Facts`)."""

from __future__ import annotations

import os
from pathlib import Path

from ad_diff.core import safepath
from ad_diff.core.facts import flatten
from ad_diff.discover import DUMP_NAME, TENSOR_SUFFIXES
from ad_diff.errors import InputError
from ad_diff.explain.accounting.noise import run_folder

RUN_JSON = "run.json"
RUN_JSON_LIMIT = 1 << 20
"""Bytes of ``run.json`` read at most (``ad-diff record`` writes about 2 KB)."""


def run_info(root: Path) -> dict[str, str]:
    """``run.json`` flattened (the run folder's own path in a value reads ``<run>``); empty if absent.

    Opened beneath the run folder (a link out of it, a FIFO: refused, never read) and parsed by the one
    bounded JSON reader (depth, digits, duplicate keys, :data:`RUN_JSON_LIMIT` bytes)."""
    path = root / RUN_JSON
    try:
        data = safepath.read_json(path, root, "the run.json ad-diff record writes", RUN_JSON_LIMIT)
    except InputError:
        return {RUN_JSON: "unreadable"} if safepath.present(path) else {}
    return {k: run_folder(v, root) for k, v in flatten(data)}


def files(root: Path, claimed: set[Path]) -> dict[str, str]:
    """``{relative path: size}`` of every file under ``root`` that no kind reads (``claimed`` are those read:
    logs, dumps, tensors, configs, run.json). Links are not followed."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p in claimed or p.is_symlink():
                continue
            rel = p.relative_to(root).as_posix()
            if rel.startswith("graphs/") and DUMP_NAME.match(name):
                continue
            if rel.startswith("tensors/") and p.suffix in TENSOR_SUFFIXES:
                continue
            if rel.startswith("config/") or (rel.count("/") == 0 and p.suffix in (".yaml", ".yml")):
                continue
            try:
                out[rel] = f"{p.stat().st_size} bytes"
            except OSError:
                out[rel] = "unreadable"
    return out


__all__ = ["RUN_JSON", "files", "run_info"]
