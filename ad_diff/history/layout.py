"""Where a history's runs are and in which order they ran.

``ROOT/`` holds one run folder or snapshot file per run (``flat``), optionally with a ``<model>/`` level
above them (``model-run``: ``ROOT/<model>/<run>/``), or one ``batch`` root per run (``run-model``:
``ROOT/<run>/<model>/`` or ``ROOT/<run>/<model>.yaml``, as ``ad-diff batch`` reads them). ``auto`` picks
``flat`` when ROOT's entries are runs themselves, else ``model-run``; ``run-model`` is never guessed (the
two nested layouts look alike), it is asked for with ``--layout``.

Symbolic links are skipped (a ``latest -> run-42`` link would count a run twice, and a link may lead out
of ROOT); hidden entries too. Nothing is parsed here.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path

from ad_diff.errors import InputError, UsageError
from ad_diff.history.model import FOLDER, SNAPSHOT, Leaf, LeafMeta

LAYOUTS = ("auto", "flat", "model-run", "run-model")
ORDERS = ("auto", "name", "started", "mtime")
_YAML = (".yaml", ".yml")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting ``run-9`` before ``run-10`` (digit runs compare as numbers)."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name) if p)


def is_run_folder(p: Path) -> bool:
    """A folder holding an AD log (``*.log``) or a ``run.json`` at its top is one run of one model."""
    try:
        with os.scandir(p) as it:
            # no link followed: a linked log still marks a run, whose reader then refuses it by name
            return any((e.name.endswith(".log") or e.name == "run.json")
                       and not e.is_dir(follow_symlinks=False) for e in it)
    except OSError:
        return False


def _entries(folder: Path, notes: list[str]) -> list[tuple[Path, bool]]:
    """``(path, is a file)`` of the sub-folders and YAML files of ``folder`` in name order, without hidden
    entries and links."""
    try:
        with os.scandir(folder) as it:
            children = sorted(it, key=lambda e: natural_key(e.name))
    except OSError as e:
        raise InputError(folder, f"cannot be listed ({e.strerror or e})") from e
    out = []
    for entry in children:
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            notes.append(
                f"skipped symbolic link {folder / entry.name} (runs are read from real folders and files)"
            )
        elif entry.is_dir():
            out.append((folder / entry.name, False))
        elif entry.name.endswith(_YAML):
            if entry.is_file(follow_symlinks=False):
                out.append((folder / entry.name, True))
            else:  # a FIFO or device named like a snapshot: never opened, never dropped without a word
                notes.append(f"skipped {folder / entry.name} (not a regular file: a FIFO, socket or device)")
    return out


def _leaf(run: str, model: str, p: Path, is_file: bool, root: Path) -> Leaf:
    return Leaf(run, model, p, SNAPSHOT if is_file else FOLDER, root)


def _name(p: Path, is_file: bool) -> str:
    return p.stem if is_file else p.name


def find_leaves(root: Path, layout: str = "auto") -> tuple[str, list[Leaf], list[str]]:
    """``(layout used, leaves, notes)`` of history folder ``root``; :class:`InputError` when unusable."""
    if layout not in LAYOUTS:
        raise UsageError(f"--layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if not root.exists():
        raise InputError(root, "history folder does not exist")
    if not root.is_dir():
        raise InputError(
            root, "is not a folder; expected a folder holding one run folder or snapshot file per run"
        )
    with os.scandir(root) as listing:
        logs = [e for e in listing if e.name.endswith(".log") and not e.is_dir(follow_symlinks=False)]
    if logs:
        raise InputError(
            root,
            "holds a *.log at its top: it looks like a single run folder; `ad-diff history` "
            "needs the folder that holds the runs (e.g. nightly/ with nightly/2024-05-01/ad.log)",
        )
    notes: list[str] = []
    top = _entries(root, notes)
    if not top:
        raise InputError(
            root,
            "holds no run folder or snapshot file; expected one per run, e.g. ROOT/run-001/ad.log, "
            "ROOT/run-001.yaml or ROOT/<model>/run-001/",
        )
    if layout == "auto":
        layout = "flat" if any(f or is_run_folder(p) for p, f in top) else "model-run"
    leaves: list[Leaf] = []
    if layout == "flat":
        leaves = [_leaf(_name(p, f), "", p, f, root) for p, f in top]
    else:
        for outer, outer_file in top:
            if outer_file:
                notes.append(f"ignored {outer}: layout {layout} expects folders at the top of {root}")
                continue
            for inner, f in _entries(outer, notes):
                run, model = (
                    (_name(inner, f), outer.name) if layout == "model-run" else (outer.name, _name(inner, f))
                )
                leaves.append(_leaf(run, model, inner, f, root))
    seen: dict[tuple[str, str], Path] = {}
    for lf in leaves:
        other = seen.setdefault((lf.run, lf.model), lf.path)
        if other != lf.path:
            raise InputError(
                lf.path,
                f"and {other} are both run {lf.run!r}"
                + (f" of model {lf.model!r}" if lf.model else "")
                + "; keep one of them (a run folder or its snapshot file)",
            )
    if not leaves:
        raise InputError(
            root, f"holds no run in layout {layout} (expected ROOT/<model>/<run>/ or ROOT/<run>/<model>/)"
        )
    return layout, leaves, notes


def when(started: str | None) -> datetime | None:
    """``run.json`` ``started`` as an aware datetime (UTC when it names no zone); ``None`` if unreadable."""
    if not started:
        return None
    try:
        t = datetime.fromisoformat(started)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def order_runs(leaves: list[Leaf], metas: list[LeafMeta], order: str) -> tuple[list[str], str, str]:
    """Run names in history order, the order used and a sentence on why.

    ``auto``: by ``run.json`` ``started`` when every run has one, else by name. A run's time is the
    earliest of its leaves'. Ties are broken by name.
    """
    if order not in ORDERS:
        raise UsageError(f"--order must be one of {', '.join(ORDERS)}, not {order!r}")
    names = sorted({lf.run for lf in leaves}, key=natural_key)
    started: dict[str, datetime] = {}
    mtime: dict[str, int] = {}
    for lf, m in zip(leaves, metas, strict=False):
        t = when(m.started)
        if t is not None and (lf.run not in started or t < started[lf.run]):
            started[lf.run] = t
        if m.mtime_ns and (lf.run not in mtime or m.mtime_ns < mtime[lf.run]):
            mtime[lf.run] = m.mtime_ns
    lacking = [n for n in names if n not in started]
    if order == "auto":
        if not lacking:
            order = "started"
        else:
            note = "runs ordered by name"
            if len(lacking) < len(names):
                note += (
                    f" ({len(lacking)} of {len(names)} runs have no run.json `started`, first: "
                    f"{lacking[0]}; pass --order started to be told which)"
                )
            return names, "name", note
    if order == "name":
        return names, order, "runs ordered by name (--order name)"
    if order == "started":
        if lacking:
            raise UsageError(
                f"--order started: {len(lacking)} run(s) have no readable run.json "
                f"`started` (written by `ad-diff record`): {', '.join(lacking[:5])}",
            )
        ordered = sorted(names, key=lambda n: (started[n], natural_key(n)))
        return ordered, order, "runs ordered by run.json `started`"
    ordered = sorted(names, key=lambda n: (mtime.get(n, 0), natural_key(n)))
    return ordered, order, "runs ordered by modification time of their log or snapshot file (--order mtime)"
