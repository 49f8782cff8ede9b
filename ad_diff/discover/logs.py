"""Finding a run's AutoDeploy log: one file, or one file per rank, however the run was captured.

In order (docs/run-folder.md):

1. the files given on the command line (compare's ``--baseline-log`` / ``--candidate-log``, repeatable: one
   per rank; snapshot's ``--log``);
2. the ``*.log`` at the top of the run folder (compressed too: ``ad.log.gz``); several: ``ad.log`` or
   ``run.log``, else an error listing them;
3. a per-rank layout below the folder: torchrun ``--log-dir``
   (``<run_id>_*/attempt_<k>/<rank>/std{out,err}.log``, the last attempt) or mpirun ``--output-filename``
   (``<job>/rank.<n>/std{out,err}``);
4. the top-level text file (``*.out``, ``*.txt``, ``*.err``, no extension; compressed too) whose first
   :data:`HEAD_BYTES` hold AutoDeploy transform lines; several: the one named like ``ad.log``, else an error.

Nothing is parsed here beyond that sniff. A candidate that may not be read (a link that leaves the run
folder, a FIFO, socket or device, a broken link: :func:`ad_diff.core.safepath.refusal`) is never opened and
never silently dropped: one that would be used, any file or linked folder of the per-rank layout, and any
text file that would have to be sniffed is an :class:`InputError` naming it; a refused ``*.log`` that is not
used is named in the sentence saying which log was (a dropped ``ad.log`` must not become another log or "no
log found", a dropped rank must not make a run look smaller).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ad_diff.core import lazy, safepath
from ad_diff.core.model import RunId
from ad_diff.discover.capture import COMPRESSED_SUFFIXES, open_text
from ad_diff.errors import InputError

HEAD_BYTES = 256 << 10
"""How much of a text file is read to decide whether it is an AutoDeploy log."""
_TEXT_SUFFIXES = (".out", ".txt", ".err", "")
_PREFERRED = ("ad", "run")
_AD_HINT = lazy.pattern(
    rb"stage=[a-z_][a-z0-9_]*, transform=\w|AUTO-DEPLOY\] \[[A-Z]+\](?: \[RANK \d+\])? \[SUMMARY\]"
)
_SKIP_DIRS = frozenset({"graphs", "tensors", "config", ".git"})
_MAX_DEPTH = 5
_MAX_ENTRIES = 20_000
_TORCHRUN = lazy.pattern(r"^attempt_(\d+)$")
_MPI_RANK = lazy.pattern(r"^rank\.(\d+)$")
_STREAMS = {"stdout.log": "stdout", "stderr.log": "stderr", "stdout": "stdout", "stderr": "stderr"}


@dataclass(frozen=True, slots=True)
class LogFile:
    """One file of a run's log."""

    path: Path
    rank: int | None = None
    """The rank the file belongs to when its layout says so (lines without a rank tag get it)."""
    stream: str = ""
    """``stdout`` or ``stderr`` when the layout splits them (tracebacks go to stderr)."""
    root: Path | None = field(default=None, compare=False)
    """The run folder the file is opened beneath (``None``: a file named on the command line, contained in
    the folder it resolves to)."""


def _name_it(option: str | None) -> str:
    """How to say which log to read: with the command's option that names a run's log file (compare's
    ``--baseline-log``, snapshot's ``--log``), else, for a command without one (batch, history, candidates),
    by leaving one log in the folder. The option comes from the caller as written: it must exist."""
    if option is None:
        return "keep one log in the run folder (or name the one to compare ad.log)"
    return f"pass {option} FILE to name the log to read"


def _stem(name: str) -> str:
    """``ad.log.gz`` -> ``ad.log``: the name without a compression suffix."""
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_log(p: Path) -> bool:
    return _stem(p.name).endswith(".log")


def _is_text(p: Path) -> bool:
    return Path(_stem(p.name)).suffix in _TEXT_SUFFIXES


def _top_files(root: Path) -> tuple[list[Path], dict[Path, str]]:
    """The entries at the top of ``root`` that are not folders: those that may be read, and the refused
    ones with why (see the module docstring)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as e:
        raise InputError(root, f"cannot be listed ({e.strerror or e})") from e
    out: list[Path] = []
    refused: dict[Path, str] = {}
    for entry in entries:
        p = Path(entry.path)
        try:
            if entry.is_dir():  # follows links: a folder is no log (a looping link raises or says False)
                continue
        except OSError:
            pass
        why = safepath.refusal(p, root)
        if why is None:
            out.append(p)
        else:
            refused[p] = why
    return out, refused


def _refuse(paths: list[Path], refused: dict[Path, str], what: str) -> InputError:
    """The error for the first refused path (the others named after it)."""
    more = ", ".join(p.name for p in paths[1:4]) + (", ..." if len(paths) > 4 else "")
    also = f" (also refused: {more})" if more else ""
    return InputError(paths[0], f"{refused[paths[0]]}; expected {what}{also}")


def _pick(files: list[Path], root: Path, option: str | None, what: str) -> tuple[Path, str]:
    if len(files) == 1:
        return files[0], ""
    for stem in _PREFERRED:
        for p in files:
            if _stem(p.name).split(".")[0] == stem:
                others = ", ".join(x.name for x in files if x != p)
                return p, f" (also present, not used: {others})"
    raise InputError(root, f"several {what} ({', '.join(p.name for p in files)}) and none is named ad.log; "
                           f"{_name_it(option)}")


def _holds_ad_lines(p: Path, root: Path) -> bool:
    try:
        with open_text(p, "a text file", root) as (f, _, _):
            head = f.read(HEAD_BYTES)
    except InputError:
        return False
    return _AD_HINT.search(head) is not None


def _rank_dir(name: str, rel: tuple[str, ...]) -> bool:
    """Whether a folder ``name`` in folder ``rel`` is part of a per-rank layout (a torchrun rank folder is
    its number, inside ``attempt_<k>``)."""
    if name.isdigit():
        return bool(rel) and _TORCHRUN.match(rel[-1]) is not None
    return _TORCHRUN.match(name) is not None or _MPI_RANK.match(name) is not None


@dataclass
class _Walk:
    """What :func:`_walk` saw below the run folder."""

    files: list[tuple[Path, tuple[str, ...]]]
    """Files named like a per-rank log (``stdout``, ``stderr.log``...), each with its folder parts."""
    linked: list[Path]
    """Links named like a layout folder (``attempt_0``, ``rank.1``, ``3``): never followed."""
    truncated: bool = False
    """The listing stopped at :data:`_MAX_ENTRIES`."""


def _walk(root: Path) -> _Walk:
    """Files below ``root`` (not in graphs/, tensors/, config/), each with its folder parts; bounded."""
    out = _Walk([], [])
    seen = 0
    # fwalk: each folder listed through a descriptor, never through a link (one swapped in mid-walk too)
    for dirpath, dirnames, filenames, _ in os.fwalk(root):
        rel = Path(dirpath).relative_to(root).parts
        # a rank folder that is a link is not walked into: name it rather than lose the rank
        out.linked += [p for p in (Path(dirpath, n) for n in sorted(dirnames + filenames)
                                   if _rank_dir(n, rel)) if p.is_symlink()]
        if len(rel) >= _MAX_DEPTH:
            dirnames[:] = []
        else:  # graphs/, tensors/, config/ at the top hold no log (and graphs/ may hold thousands of files)
            dirnames[:] = sorted(d for d in dirnames if rel or d not in _SKIP_DIRS)
        for name in sorted(filenames):
            seen += 1
            if seen > _MAX_ENTRIES:
                out.truncated = True
                return out
            if name in _STREAMS and rel:
                out.files.append((Path(dirpath, name), rel))
    return out


def _linked_folder(path: Path, root: Path) -> str:
    """Why a layout folder that is a link is refused."""
    if not path.exists():
        return "is a symbolic link that loops or points nowhere"
    if not safepath.is_inside(path, root):
        return (f"is a symbolic link to a folder outside the run folder {root}; refusing to read it (copy "
                "the folder into the run folder instead of linking it)")
    return "is a symbolic link to a folder; per-rank log folders are not followed through links (copy it)"


def _layout(root: Path, option: str | None) -> tuple[tuple[LogFile, ...], str] | None:
    """Per-rank log files of a torchrun ``--log-dir`` or mpirun ``--output-filename`` layout, if any."""
    torch: dict[tuple[str, ...], dict[int, list[LogFile]]] = {}  # run folder -> attempt -> files
    mpi: dict[tuple[str, ...], list[LogFile]] = {}  # job folder -> files
    walk = _walk(root)
    if walk.linked:
        path = walk.linked[0]
        raise InputError(path, f"{_linked_folder(path, root)}; expected a folder of per-rank logs")
    for path, rel in walk.files:
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
        raise InputError(root, f"several per-rank log layouts ({', '.join(f[0] + '/' for f in found)}); "
                               f"{_name_it(option)}")
    where, layout, what = found[0]
    if walk.truncated:  # ranks listed after the cut would be missing without a word
        raise InputError(root, f"holds more than {_MAX_ENTRIES:,} files outside graphs/, tensors/ and "
                               f"config/, so the per-rank log layout in {where}/ may be incomplete; "
                               f"{_name_it(option)}")
    for f in layout:  # every file of the layout is read: a refused one must not drop its rank
        why = safepath.refusal(f.path, root)
        if why is not None:
            raise InputError(f.path, f"{why}; expected the {f.stream} log of rank {f.rank} ({what})")
    ordered = tuple(sorted(layout, key=lambda f: (f.rank or 0, f.stream != "stdout", f.path.name)))
    ranks = sorted({f.rank for f in ordered if f.rank is not None})
    return ordered, f"logs: {len(ordered)} file(s) of ranks {', '.join(map(str, ranks))} in {where}/ ({what})"


def _given(paths: tuple[Path, ...]) -> tuple[tuple[LogFile, ...], str]:
    out = []
    for p in paths:
        why = safepath.refusal(p, safepath.given_root(p)) if safepath.present(p) else "does not exist"
        if why is not None:
            raise InputError(p, f"log given on the command line {why}; expected a log file")
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


def find_logs(root: Path, run_id: RunId, given: tuple[Path, ...] = (),
              option: str | None = None) -> tuple[tuple[LogFile, ...], str]:
    """The files of ``run_id``'s log and a sentence saying which were used (see the module docstring).
    ``option``: the calling command's option that names this run's log file, which errors suggest."""
    if given:
        return _given(given)
    logs, note = _find(root, option)
    return tuple(replace(f, root=root) for f in logs), note


def _find(root: Path, option: str | None) -> tuple[tuple[LogFile, ...], str]:
    files, refused = _top_files(root)
    logs = sorted([p for p in [*files, *refused] if _is_log(p)])
    if logs:
        p, also = _pick(logs, root, option, "*.log files")
        if p in refused:  # the log to compare is linked out or special: never another one in its place
            raise _refuse([p], refused, "the AutoDeploy log")
        also += "".join(f"; not read: {x.name} {refused[x].split(';')[0]}" for x in logs if x in refused)
        return (LogFile(p),), f"log {p.name}{also}"
    layout = _layout(root, option)
    if layout is not None:
        return layout
    texts = [p for p in files if _is_text(p)]
    unread = [p for p in refused if _is_text(p)]
    if unread:  # any of them may be the log: its content cannot be looked at, so nothing is guessed
        raise _refuse(unread, refused, "a text file (the run has no *.log, so every text file at its top "
                                       "may be the AutoDeploy log)")
    found = [p for p in texts[:200] if _holds_ad_lines(p, root)]
    if found:
        p, also = _pick(found, root, option, "text files with AutoDeploy transform lines")
        return (LogFile(p),), f"log {p.name} (no *.log; this file holds AutoDeploy transform lines){also}"
    looked = ""
    if texts:
        looked = f" (looked at {', '.join(p.name for p in texts[:8])}{', ...' if len(texts) > 8 else ''})"
    raise InputError(
        root,
        "no *.log file at the top of the run folder, no per-rank log layout (torchrun --log-dir, mpirun "
        f"--output-filename) and no text file whose first {HEAD_BYTES >> 10} KiB hold AutoDeploy transform "
        f"lines{looked}; expected the AutoDeploy log (e.g. `... 2>&1 | tee RUN/ad.log`)"
        + (f", or pass {option} FILE" if option else ""),
    )
