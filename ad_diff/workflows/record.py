"""Record a run folder: run the user's AD command with graph dumps on, tee its output into ``RUN/ad.log``.

``record(run_dir, command, stdout, stderr)`` runs ``command`` with ``AD_DUMP_GRAPHS_DIR=RUN/graphs``,
copies the child's stdout and stderr live to the given sinks and into ``RUN/ad.log`` (the log lives
outside ``graphs/`` because AD deletes that folder at its first write), forwards SIGINT/SIGTERM to the
child, and writes ``RUN/run.json``. A failing command still leaves a usable folder with its status.
Nothing is written outside ``RUN/``: every file is written through the one writer
(:mod:`ad_diff.core.outfile`), so a ``RUN/ad.log``, ``RUN/run.json`` or ``RUN/graphs`` planted as a link to
a file elsewhere is refused, never written through (a hard link loses its name here, never its content).
``run.json`` holds the command line and the ``AD_*`` environment with credentials redacted (a token given
as ``--hf-token VALUE`` or in ``AD_HF_TOKEN`` is ``[redacted]``).
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

from ad_diff import __version__
from ad_diff.core import outfile, safepath
from ad_diff.core.redactwalk import redact_argv, redact_tree
from ad_diff.discover import DUMP_NAME
from ad_diff.errors import AdDiffError, UsageError

LOG_NAME = "ad.log"
RUN_JSON = "run.json"
GRAPHS = "graphs"
_OWN_FILES = (LOG_NAME, RUN_JSON)
EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126


def _git(cwd: Path) -> dict[str, Any] | None:
    """Commit and dirtiness of the git working tree around ``cwd`` (``None`` outside git)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {
        "commit": commit.stdout.strip(),
        "dirty": bool(dirty.stdout.strip()) if dirty.returncode == 0 else None,
    }


def _version(dist: str) -> str | None:
    # metadata, not import: importing torch takes seconds and the child may use another interpreter anyway
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _pump(src: BinaryIO, sink: BinaryIO, log: BinaryIO, lock: threading.Lock) -> None:
    """Copy one child stream to ``sink`` as bytes arrive and to the log one whole line at a time.

    stdout and stderr share the log: writing raw chunks would let a stderr line land in the middle of a
    stdout line (a chunk can end anywhere), corrupting exactly the result lines ad-diff parses later.
    A trailing partial line (a progress bar's ``\r`` updates, or the last line without a newline) is
    written when the stream ends.
    """
    fd = src.fileno()
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            if pending:
                with lock:
                    log.write(pending)
                    log.flush()
            break
        pending += chunk
        cut = pending.rfind(b"\n") + 1
        if cut:
            with lock:
                log.write(pending[:cut])
                log.flush()
            pending = pending[cut:]
        try:
            sink.write(chunk)
            sink.flush()
        except (OSError, ValueError):  # a closed terminal/pipe must not stop the log from being written
            pass


def prepare(run_dir: Path, force: bool) -> None:
    """Create ``run_dir``; refuse to overwrite an earlier recording unless ``force``, and refuse any of its
    own names planted as a link (even with ``force``: an earlier recording never makes one)."""
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{run_dir}: is a file; expected the run folder to record into")
    existing = [n for n in (*_OWN_FILES, GRAPHS) if safepath.present(run_dir / n)]
    for n in existing:
        if (run_dir / n).is_symlink():
            raise UsageError(f"{run_dir / n}: is a symbolic link; record writes {n} itself and never "
                             "through a link (remove it, or record into a new folder)")
    if existing and not force:
        raise UsageError(
            f"{run_dir}: already holds {', '.join(existing)} from an earlier run; "
            "pass --force to replace them, or record into a new folder"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    # Old dumps would mix with the new ones if the command fails before AD's own first-write cleanup.
    outfile.remove_tree(run_dir / GRAPHS)


def record(
    run_dir: Path,
    command: list[str],
    stdout: BinaryIO,
    stderr: BinaryIO,
    force: bool = False,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``command``, recording into ``run_dir``; return the run.json content (``exit_code`` inside).

    ``exit_code`` is the child's exit status, ``128 + N`` when it was killed by signal N, 127 when the
    command was not found and 126 when it could not be executed.
    """
    if not command:
        raise UsageError("no command to record; usage: ad-diff record RUN/ -- python build_and_run_ad.py ...")
    prepare(run_dir, force)
    child_env = dict(os.environ if env is None else env)
    child_env["AD_DUMP_GRAPHS_DIR"] = str((run_dir / GRAPHS).resolve())
    child_env.setdefault("PYTHONUNBUFFERED", "1")  # so a Python child's output reaches the log live
    started = datetime.now(timezone.utc)
    t0 = time.monotonic()
    info: dict[str, Any] = {
        "schema_version": 1,
        "tool": f"ad-diff {__version__}",
        "command": redact_argv(command),
        "cwd": str(Path.cwd()),
        "started": started.isoformat(timespec="seconds"),
        "git": _git(Path.cwd()),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "torch": _version("torch"),
        "tensorrt_llm": _version("tensorrt_llm"),
        "env": {k: child_env[k] for k in sorted(child_env) if k.startswith("AD_")},
        "log": LOG_NAME,
        "graphs": GRAPHS,
    }
    forwarded: list[str] = []
    with outfile.create(run_dir / LOG_NAME) as log:
        try:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env)
        except FileNotFoundError:
            code, status = EXIT_NOT_FOUND, f"not started: command not found: {command[0]}"
        except PermissionError:
            code, status = EXIT_NOT_EXECUTABLE, f"not started: permission denied: {command[0]}"
        else:
            code, status = _supervise(child, stdout, stderr, log, forwarded)
    info.update(
        ended=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        duration_s=round(time.monotonic() - t0, 3),
        exit_code=code,
        status=status,
        signals_forwarded=forwarded,
        dump_files=_dump_files(run_dir),
    )
    info, _ = redact_tree(info)  # the AD_* environment may hold a token (AD_HF_TOKEN=...)
    outfile.write_file(run_dir / RUN_JSON, (json.dumps(info, indent=2, sort_keys=True) + "\n").encode())
    return info


def _dump_files(run_dir: Path) -> int:
    """How many dumps the command wrote into ``RUN/graphs`` (listed beneath ``RUN``: a link there is not
    followed, and then counts none)."""
    try:
        names = safepath.list_names(run_dir / GRAPHS, run_dir, "the graph dumps folder")
    except AdDiffError:
        return 0
    return sum(1 for n in names if DUMP_NAME.match(n))


def _supervise(
    child: subprocess.Popen[bytes], stdout: BinaryIO, stderr: BinaryIO, log: BinaryIO, forwarded: list[str]
) -> tuple[int, str]:
    lock = threading.Lock()
    assert child.stdout is not None
    assert child.stderr is not None
    pumps = [
        threading.Thread(target=_pump, args=(child.stdout, stdout, log, lock), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, stderr, log, lock), daemon=True),
    ]
    for t in pumps:
        t.start()

    def forward(signum: int, _frame: object) -> None:
        # Ctrl-C on a terminal reaches the child too (same process group); a CI runner's SIGTERM may not.
        forwarded.append(signal.Signals(signum).name)
        if child.poll() is None:
            child.send_signal(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, forward)
    try:
        rc = child.wait()
        for t in pumps:
            t.join()
        child.stdout.close()
        child.stderr.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if rc < 0:
        name = signal.Signals(-rc).name
        return 128 - rc, f"killed by {name}"
    return rc, "succeeded" if rc == 0 else f"failed with exit code {rc}"
