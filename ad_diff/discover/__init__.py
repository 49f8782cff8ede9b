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
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core import lazy
from ad_diff.core.model import BASELINE, CANDIDATE, RunId
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


DUMP_NAME = lazy.pattern(r"^(\d+)_.+\.txt$")
TENSOR_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")
"""File name endings of recorded tensors under ``tensors/`` (the tensor kind reads them)."""
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


def is_snapshot(path: Path) -> bool:
    """Whether ``path`` names a snapshot file (``ad-diff snapshot``) rather than a run folder."""
    return path.suffix in (".yaml", ".yml") and path.is_file()  # not a run path: the argument itself


def _is_log_file(path: Path) -> bool:
    return ".log" in path.suffixes and path.is_file()  # not a run path: the argument itself


def root_problem(root: Path, run_id: RunId, log_option: str | None = None) -> str | None:
    """Why ``root`` cannot be the ``run_id`` run folder (the message after the path), ``None`` when it is a
    folder. ``log_option``: the command's option that names the run's log file, suggested for a log file."""
    if root.is_dir():
        return None
    if not root.exists():
        return f"{run_id} run folder does not exist"
    if is_snapshot(root):
        return (f"is a snapshot file (`ad-diff snapshot`), not the {run_id} run folder; a snapshot stands "
                "only for the baseline, given first: ad-diff SNAPSHOT.yaml CANDIDATE_RUN")
    if _is_log_file(root):
        named = f", or keep a folder per run and name this file with {log_option} FILE" if log_option else ""
        holding = "holding it (the log, graphs/, tensors/)"
        return f"is a log file; expected the {run_id} run folder {holding}{named}"
    return f"is not a folder; expected the {run_id} run folder"


def check_runs(baseline: Path, candidate: Path, log_options: tuple[str | None, str | None] = (None, None)
               ) -> None:
    """Raise one :class:`InputError` naming every path of a comparison that is no usable run (a snapshot
    baseline is one), so that a user fixes both at once; two log files get the way to compare logs."""
    base = None if is_snapshot(baseline) else root_problem(baseline, BASELINE, log_options[0])
    cand = root_problem(candidate, CANDIDATE, log_options[1])
    if base and cand and _is_log_file(baseline) and _is_log_file(candidate) and all(log_options):
        raise InputError(baseline, f"and {candidate} are log files; ad-diff compares run folders: give each "
                                   f"run's folder, or a folder per run (empty ones do) with the logs named: "
                                   f"ad-diff runs/base runs/cand {log_options[0]} {baseline} "
                                   f"{log_options[1]} {candidate}")
    if base and cand:
        raise InputError(baseline, f"{base}; and {candidate}: {cand}")
    if base or cand:
        raise InputError(baseline if base else candidate, base or cand or "")


def discover(root: Path, run_id: RunId, log_override: Path | tuple[Path, ...] | None = None,
             log_option: str | None = None) -> RunArtifacts:
    """Locate the artifacts of one run folder; raise :class:`InputError` when the folder is unusable.

    ``log_override``: the log file(s) given on the command line (one per rank when several);
    ``log_option``: the calling command's option that gives them, which errors about the log suggest.
    """
    problem = root_problem(root, run_id, log_option)
    if problem is not None:
        raise InputError(root, problem)
    notes: list[str] = []
    given = (log_override,) if isinstance(log_override, Path) else tuple(log_override or ())
    logs, log_note = find_logs(root, run_id, given, log_option)
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


__all__ = ["DUMP_NAME", "TENSOR_SUFFIXES", "LogFile", "RunArtifacts", "check_runs", "discover",
           "dump_counter", "dump_entries", "dump_order", "is_snapshot", "root_problem"]
