"""Finding a run's AutoDeploy log: one file, or one file per rank, however the run was captured.

In order (docs/run-folder.md):

1. the files given with ``--baseline-log`` / ``--candidate-log`` (repeatable: one per rank);
2. the ``*.log`` at the top of the run folder (compressed too: ``ad.log.gz``); several: ``ad.log`` or
   ``run.log``, else an error listing them;
3. a per-rank layout below the folder: torchrun ``--log-dir``
   (``<run_id>_*/attempt_<k>/<rank>/std{out,err}.log``, the last attempt) or mpirun ``--output-filename``
   (``<job>/rank.<n>/std{out,err}``);
4. the top-level text file (``*.out``, ``*.txt``, ``*.err``, no extension; compressed too) whose first
   :data:`HEAD_BYTES` hold AutoDeploy transform lines; several: the one named like ``ad.log``, else an error.

Nothing is parsed here beyond that sniff; files reached through a link that leaves the run folder are not
used.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core.model import RunId
from ad_diff.discover.capture import COMPRESSED_SUFFIXES, open_text
from ad_diff.errors import InputError

HEAD_BYTES = 256 << 10
"""How much of a text file is read to decide whether it is an AutoDeploy log."""
_TEXT_SUFFIXES = (".out", ".txt", ".err", "")
_PREFERRED = ("ad", "run")
_AD_HINT = re.compile(
    rb"stage=[a-z_][a-z0-9_]*, transform=\w|AUTO-DEPLOY\] \[[A-Z]+\](?: \[RANK \d+\])? \[SUMMARY\]"
)
_SKIP_DIRS = frozenset({"graphs", "tensors", "config", ".git"})
_MAX_DEPTH = 5
_MAX_ENTRIES = 20_000
_TORCHRUN = re.compile(r"^attempt_(\d+)$")
_MPI_RANK = re.compile(r"^rank\.(\d+)$")
_STREAMS = {"stdout.log": "stdout", "stderr.log": "stderr", "stdout": "stdout", "stderr": "stderr"}


@dataclass(frozen=True, slots=True)
class LogFile:
    """One file of a run's log."""

    path: Path
    rank: int | None = None
    """The rank the file belongs to when its layout says so (lines without a rank tag get it)."""
    stream: str = ""
    """``stdout`` or ``stderr`` when the layout splits them (tracebacks go to stderr)."""


def _option(run_id: RunId) -> str:
    return f"--{run_id}-log"


def _stem(name: str) -> str:
    """``ad.log.gz`` -> ``ad.log``: the name without a compression suffix."""
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _inside(root: Path, p: Path) -> bool:
    """Whether ``p`` (maybe a link) stays inside ``root``."""
    try:
        p.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def _top_files(root: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as e:
        raise InputError(root, f"cannot be listed ({e.strerror or e})") from e
    out = []
    for entry in entries:
        p = Path(entry.path)
        try:
            if entry.is_file() and _inside(root, p):
                out.append(p)
        except OSError:
            continue
    return out


def _pick(files: list[Path], root: Path, run_id: RunId, what: str) -> tuple[Path, str]:
    if len(files) == 1:
        return files[0], ""
    for stem in _PREFERRED:
        for p in files:
            if _stem(p.name).split(".")[0] == stem:
                others = ", ".join(x.name for x in files if x != p)
                return p, f" (also present, not used: {others})"
    raise InputError(root, f"several {what} ({', '.join(p.name for p in files)}) and none is named ad.log; "
                           f"pass {_option(run_id)} FILE to pick one (repeat it for one file per rank)")


def _holds_ad_lines(p: Path) -> bool:
    try:
        with open_text(p, "a text file") as (f, _):
            head = f.read(HEAD_BYTES)
    except InputError:
        return False
    return _AD_HINT.search(head) is not None


def _walk(root: Path) -> list[tuple[Path, tuple[str, ...]]]:
    """Files below ``root`` (not in graphs/, tensors/, config/), each with its folder parts; bounded."""
    out: list[tuple[Path, tuple[str, ...]]] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):  # never follows links to folders
        rel = Path(dirpath).relative_to(root).parts
        if len(rel) >= _MAX_DEPTH:
            dirnames[:] = []
        else:  # graphs/, tensors/, config/ at the top hold no log (and graphs/ may hold thousands of files)
            dirnames[:] = sorted(d for d in dirnames if rel or d not in _SKIP_DIRS)
        for name in sorted(filenames):
            seen += 1
            if seen > _MAX_ENTRIES:
                return out
            if name in _STREAMS and rel:
                out.append((Path(dirpath, name), rel))
    return out


def _layout(root: Path, run_id: RunId) -> tuple[tuple[LogFile, ...], str] | None:
    """Per-rank log files of a torchrun ``--log-dir`` or mpirun ``--output-filename`` layout, if any."""
    torch: dict[tuple[str, ...], dict[int, list[LogFile]]] = {}  # run folder -> attempt -> files
    mpi: dict[tuple[str, ...], list[LogFile]] = {}  # job folder -> files
    for path, rel in _walk(root):
        if not _inside(root, path):
            continue
        stream = _STREAMS[path.name]
        torchrun = path.name.endswith(".log") and len(rel) >= 2 and rel[-1].isdigit()
        if torchrun and (m := _TORCHRUN.match(rel[-2])):
            torch.setdefault(rel[:-2], {}).setdefault(int(m.group(1)), []).append(
                LogFile(path, int(rel[-1]), stream))
        elif not path.name.endswith(".log") and (m := _MPI_RANK.match(rel[-1])):
            mpi.setdefault(rel[:-1], []).append(LogFile(path, int(m.group(1)), stream))
    found: list[tuple[str, tuple[LogFile, ...], str]] = []
    for run, attempts in torch.items():
        last = max(attempts)
        note = f" (attempt {last}; earlier attempts not used)" if len(attempts) > 1 else ""
        found.append(("/".join(run) or ".", tuple(attempts[last]), f"torchrun --log-dir layout{note}"))
    for job, files in mpi.items():
        found.append(("/".join(job) or ".", tuple(files), "mpirun --output-filename layout"))
    if not found:
        return None
    if len(found) > 1:
        raise InputError(root, f"several per-rank log layouts ({', '.join(f[0] + '/' for f in found)}); pass "
                               f"{_option(run_id)} once per file of the run to compare")
    where, layout, what = found[0]
    ordered = tuple(sorted(layout, key=lambda f: (f.rank or 0, f.stream != "stdout", f.path.name)))
    ranks = sorted({f.rank for f in ordered if f.rank is not None})
    return ordered, f"logs: {len(ordered)} file(s) of ranks {', '.join(map(str, ranks))} in {where}/ ({what})"


def _given(paths: tuple[Path, ...]) -> tuple[tuple[LogFile, ...], str]:
    out = []
    for p in paths:
        if not p.is_file():
            raise InputError(p, "log given on the command line does not exist or is not a file")
        rank = None
        parts = p.parts
        if len(parts) >= 3 and parts[-2].isdigit() and _TORCHRUN.match(parts[-3]) and p.name in _STREAMS:
            rank = int(parts[-2])
        elif len(parts) >= 2 and (m := _MPI_RANK.match(parts[-2])) and p.name in _STREAMS:
            rank = int(m.group(1))
        out.append(LogFile(p, rank, _STREAMS.get(p.name, "")))
    if len(out) == 1:
        return tuple(out), f"log {paths[0]} (given on the command line)"
    return tuple(out), f"logs {', '.join(map(str, paths))} (given on the command line)"


def find_logs(root: Path, run_id: RunId, given: tuple[Path, ...] = ()) -> tuple[tuple[LogFile, ...], str]:
    """The files of ``run_id``'s log and a sentence saying which were used (see the module docstring)."""
    if given:
        return _given(given)
    files = _top_files(root)
    logs = [p for p in files if _stem(p.name).endswith(".log")]
    if logs:
        p, also = _pick(logs, root, run_id, "*.log files")
        return (LogFile(p),), f"log {p.name}{also}"
    layout = _layout(root, run_id)
    if layout is not None:
        return layout
    texts = [p for p in files if Path(_stem(p.name)).suffix in _TEXT_SUFFIXES]
    found = [p for p in texts[:200] if _holds_ad_lines(p)]
    if found:
        p, also = _pick(found, root, run_id, "text files with AutoDeploy transform lines")
        return (LogFile(p),), f"log {p.name} (no *.log; this file holds AutoDeploy transform lines){also}"
    looked = ""
    if texts:
        looked = f" (looked at {', '.join(p.name for p in texts[:8])}{', ...' if len(texts) > 8 else ''})"
    raise InputError(
        root,
        "no *.log file at the top of the run folder, no per-rank log layout (torchrun --log-dir, mpirun "
        f"--output-filename) and no text file whose first {HEAD_BYTES >> 10} KiB hold AutoDeploy transform "
        f"lines{looked}; expected the AutoDeploy log (e.g. `... 2>&1 | tee RUN/ad.log`), or pass "
        f"{_option(run_id)}",
    )
