"""Discover what a run folder holds (paths only; nothing is parsed here).

Run folder contract (docs/run-folder.md)::

    RUN/
      *.log          the AutoDeploy log (stdout+stderr); exactly one, or name it with --baseline-log/--candidate-log
      graphs/        what AD wrote into AD_DUMP_GRAPHS_DIR (NNN_<stage>_<transform>.txt)
      tensors/       optional recorded tensors (*.safetensors, *.pt)
      config/        optional AD config (default.yaml + overlays, or a merged config); or *.yaml at top level
      run.json       optional, written by `ad-diff record`
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core.model import RunId
from ad_diff.errors import InputError


@dataclass(frozen=True, slots=True)
class RunArtifacts:
    """What discovery found in one run folder (paths only; nothing parsed yet)."""

    run_id: RunId
    root: Path
    log: Path | None
    graphs: Path | None
    tensors: Path | None
    configs: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()
    """Human sentences about what was found or missing."""


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
    return sorted(names, key=lambda n: (dump_counter(n) or 0, n))


_PREFERRED_LOGS = ("ad.log", "run.log")


def _find_log(root: Path, override: Path | None) -> tuple[Path, str]:
    if override is not None:
        if not override.is_file():
            raise InputError(override, "log given on the command line does not exist or is not a file")
        return override, f"log {override} (given on the command line)"
    logs = sorted(p for p in root.glob("*.log") if p.is_file())
    if not logs:
        raise InputError(
            root,
            "no *.log file at the top of the run folder; expected the AutoDeploy log "
            "(e.g. `... 2>&1 | tee RUN/ad.log`), or pass --baseline-log/--candidate-log",
        )
    if len(logs) == 1:
        return logs[0], f"log {logs[0].name}"
    for name in _PREFERRED_LOGS:
        for p in logs:
            if p.name == name:
                others = ", ".join(x.name for x in logs if x != p)
                return p, f"log {p.name} (also present, not used: {others})"
    raise InputError(
        root,
        f"several *.log files ({', '.join(p.name for p in logs)}) and none is named ad.log; "
        "pass --baseline-log/--candidate-log to pick one",
    )


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


def discover(root: Path, run_id: RunId, log_override: Path | None = None) -> RunArtifacts:
    """Locate the artifacts of one run folder; raise :class:`InputError` when the folder is unusable."""
    if not root.exists():
        raise InputError(root, f"{run_id} run folder does not exist")
    if not root.is_dir():
        if root.suffix == ".log" and root.is_file():
            raise InputError(root, f"is a log file; expected the {run_id} run *folder* holding it")
        raise InputError(root, f"is not a folder; expected the {run_id} run folder")
    notes: list[str] = []
    log, log_note = _find_log(root, log_override)
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
    configs.extend(sorted(p for p in root.glob("*.y*ml") if p.is_file()))
    return RunArtifacts(run_id, root, log, graphs, tensors, tuple(configs), tuple(notes))
