"""Discover what a run folder holds (paths only; nothing is parsed here).

Run folder contract (docs/run-folder.md)::

    RUN/
      ad.log         the AutoDeploy log (stdout+stderr), however captured: any *.log, compressed or not, a
                     Slurm *.out, a CI job log, one file per rank (torchrun/mpirun layouts); see logs.py
      graphs/        what AD wrote into AD_DUMP_GRAPHS_DIR (NNN_<stage>_<transform>.txt)
      tensors/       optional recorded tensors (*.safetensors, *.pt)
      config/        optional AD config (default.yaml + overlays, or a merged config); or *.yaml at top level
      run.json       optional, written by `ad-diff record`

How a log file is *read* as captured (decompression, CI and launcher line prefixes) is :mod:`.capture`.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core.model import RunId
from ad_diff.discover.logs import LogFile, find_logs
from ad_diff.errors import InputError


@dataclass(frozen=True, slots=True)
class RunArtifacts:
    """What discovery found in one run folder (paths only; nothing parsed yet)."""

    run_id: RunId
    root: Path
    log: Path | None
    """The log file (the first one when the run has one file per rank; all are in :attr:`logs`)."""
    graphs: Path | None
    tensors: Path | None
    configs: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()
    """Human sentences about what was found or missing."""
    logs: tuple[LogFile, ...] = ()
    """Every file of the log, with the rank each belongs to when its layout says so."""


DUMP_NAME = re.compile(r"^(\d+)_.+\.txt$")
"""The one definition of a graph dump file name: AD's ``f"{counter:03d}_{stage}_{transform}.txt"``."""


def dump_counter(name: str) -> int | None:
    """The counter of a dump file name (``NNN_`` prefix), ``None`` if ``name`` is not a dump file name."""
    m = DUMP_NAME.match(name)
    return int(m.group(1)) if m else None


def dump_entries(graphs: Path) -> list[str]:
    """Names in ``graphs`` that are dump file names, in pipeline order (numeric counter, then name).

    Names only (no ``stat``): callers that open the files check each entry. Lexicographic order would break
    after 999 files, so the counter sorts numerically.
    """
    names = [e.name for e in os.scandir(graphs) if DUMP_NAME.match(e.name)]
    return sorted(names, key=dump_order)


def dump_order(name: str) -> tuple[int, str]:
    """The sort key of a dump file name in pipeline order: its counter (numerically: lexicographic order
    breaks after 999 files), then the name."""
    return dump_counter(name) or 0, name


def _optional_dir(root: Path, name: str, notes: list[str], what: str) -> Path | None:
    p = root / name
    if p.is_symlink() and not p.exists():
        raise InputError(p, f"is a broken symbolic link; expected the {what} folder")
    if not p.exists():
        notes.append(f"no {name}/ ({what})")
        return None
    if not p.is_dir():
        raise InputError(p, f"is a file; expected the {what} folder")
    return p


def discover(root: Path, run_id: RunId, log_override: Path | tuple[Path, ...] | None = None) -> RunArtifacts:
    """Locate the artifacts of one run folder; raise :class:`InputError` when the folder is unusable.

    ``log_override``: the log file(s) given on the command line (one per rank when several).
    """
    if not root.exists():
        raise InputError(root, f"{run_id} run folder does not exist")
    if not root.is_dir():
        if ".log" in root.suffixes:
            raise InputError(root, f"is a log file; expected the {run_id} run *folder* holding it")
        raise InputError(root, f"is not a folder; expected the {run_id} run folder")
    notes: list[str] = []
    given = (log_override,) if isinstance(log_override, Path) else tuple(log_override or ())
    logs, log_note = find_logs(root, run_id, given)
    notes.append(log_note)
    graphs = _optional_dir(root, "graphs", notes, "graph dumps")
    if graphs is not None:
        n = len(dump_entries(graphs))
        notes.append(f"graphs/ with {n} dump file(s)")
    tensors = _optional_dir(root, "tensors", notes, "recorded tensors")
    configs: list[Path] = []
    cfg_dir = root / "config"
    if cfg_dir.is_dir():
        configs.append(cfg_dir)
    # a top-level YAML file that is not a folder (a link is not followed: the config reader refuses one
    # that leaves the run folder, by name)
    configs.extend(sorted(root / e.name for e in os.scandir(root)
                          if fnmatch.fnmatchcase(e.name, "*.y*ml") and not e.name.startswith(".")
                          and not e.is_dir(follow_symlinks=False)))
    return RunArtifacts(run_id, root, logs[0].path, graphs, tensors, tuple(configs), tuple(notes), logs)


__all__ = ["DUMP_NAME", "LogFile", "RunArtifacts", "discover", "dump_counter", "dump_entries", "dump_order"]
