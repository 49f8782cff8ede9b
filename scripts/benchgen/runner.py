"""Measuring one command in its own process, checking that an ad-diff run reports what was injected, and
generating workloads once (for ``scripts/bench.py``).

Each command is started by a fresh launcher (``python -S``, importing nothing but ``os``/``sys``/``time``)
that takes the wall time around ``posix_spawn`` + ``os.wait4`` and reports the child's CPU time and peak RSS
from ``wait4``'s rusage. Why a launcher: Linux carries the high-water RSS of the process that forks over to
the exec'ed child (``exec_mmap`` keeps the old mm's peak), so a command spawned straight from this script
would report this script's RSS (~40 MiB) as its own. The launcher's ~8 MiB is the floor of every figure;
``python -c pass`` (~11 MiB) is above it. ``ru_maxrss`` is the largest single process: the memory of
parallel workers is not summed. Nothing from an earlier command counts (one launcher per run).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parents[1]
GENERATORS = tuple(
    SCRIPTS / f
    for f in (
        *(
            f"benchgen/{m}.py"
            for m in ("keys", "llama", "llama_graph", "llama_rewrites", "safetensors_np", "textfx")
        ),
        *(f"fixturegen/{m}.py" for m in ("events", "large", "log_writer", "noise")),
    )
)
"""The sources a generated workload depends on: a change to any of them regenerates it."""


@dataclass
class Cmd:
    """One measured command and its runs."""

    name: str
    argv: list[str]
    expect_rc: int
    lost_at: str | None = None
    """For an ad-diff pair: the transform its report must name as a gated match loss."""
    tensors: bool = False
    """For an ad-diff pair: its report must hold a tensors section (the runs recorded logits)."""
    pythonpath: str = ""
    """A folder put before the checkout on ``PYTHONPATH`` for this command ("" for none)."""
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    rcs: list[int] = field(default_factory=list)
    invalid: str = ""
    """Why the figures do not measure what they should ("" when they do)."""

    def med(self, what: str) -> float:
        """Median of ``wall``, ``cpu`` or ``rss_kb``."""
        return float(statistics.median(getattr(self, what)))


_LAUNCH = """
import os, sys, time
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
files = [(os.POSIX_SPAWN_OPEN, fd, path, flags, 0o644) for fd, path in ((1, sys.argv[1]), (2, sys.argv[2]))]
t = time.perf_counter()
pid = os.posix_spawnp(sys.argv[3], sys.argv[3:], os.environ, file_actions=files)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t
sys.stdout.write(f"{wall} {ru.ru_utime + ru.ru_stime} {ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run_once(
    argv: list[str], env: dict[str, str], keep: Path | None = None, cwd: Path | None = None
) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, peak RSS (KiB) and exit code of one run of ``argv`` (see the module doc);
    its stdout and stderr go to ``keep`` and ``keep.err`` when given, else to /dev/null. ``cwd``: where it
    runs; ``python -m`` puts that folder first on ``sys.path``, so it must hold no ``ad_diff`` of its own
    for ``PYTHONPATH`` to choose the code measured."""
    out, err = (str(keep), f"{keep}.err") if keep is not None else (os.devnull, os.devnull)
    res = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCH, out, err, *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=True,
    ).stdout.split()
    return float(res[0]), float(res[1]), int(res[2]), int(res[3])


def check_report(cmd: Cmd, rc: int, out: Path) -> str:
    """Why the run of ad-diff ``cmd`` that exited ``rc`` and wrote ``out`` (JSON; ``out.err``) does not report
    the injected loss, or "" when it does: exit 1 with a gated match_loss finding at ``cmd.lost_at`` (and a
    tensors section when ``cmd.tensors``)."""
    if rc != 1:
        tail = Path(f"{out}.err").read_text(errors="replace").strip()[-300:]
        return f"exit {rc}, expected 1 (the injected loss gates): {tail}"
    try:
        report = json.loads(out.read_text())
    except ValueError:
        return "its output is not JSON"
    if not any(
        f.get("category") == "match_loss" and f.get("transform") == cmd.lost_at and f.get("gated")
        for f in report.get("findings", [])
    ):
        return f"no gated match_loss finding at {cmd.lost_at}"
    if cmd.tensors and "tensors" not in report.get("sections", {}):
        return "no tensors section: the recorded logits were not compared"
    return ""


def warm(paths: list[Path]) -> int:
    """Read every file under ``paths`` once, so every command reads from the page cache; returns bytes."""
    n = 0
    for root in paths:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                n += len(p.read_bytes())
    return n


def _stamp() -> str:
    h = hashlib.sha256()
    for p in GENERATORS:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def workload(root: Path, name: str, params: dict[str, Any], make: Callable[[Path], dict[str, Any]]) -> dict:
    """Generate ``root/name`` with ``make`` unless a stamp shows it was generated with the same params and
    generator source; returns the generator's info (plus the sizes read from the folders)."""
    d = root / name
    stamp = d / "bench.json"
    key = {"params": params, "generators": _stamp()}
    if stamp.is_file():
        saved = json.loads(stamp.read_text())
        if saved.get("key") == key:
            return dict(saved["info"])
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    t = time.perf_counter()
    info = make(d)
    info["generated_s"] = round(time.perf_counter() - t, 2)
    base, cand = d / "baseline", d / "candidate"
    gb, gc = base / "graphs", cand / "graphs"
    info["dumps_per_run"] = sum(1 for _ in gb.iterdir()) if gb.is_dir() else 0
    info["mb_per_run"] = sum(p.stat().st_size for p in gb.iterdir()) / 1e6 if gb.is_dir() else 0.0
    info["largest_pair_bytes"] = largest_pair_bytes(gb, gc) if gb.is_dir() else 0
    info["tensor_bytes"] = (
        sum(p.stat().st_size for p in (base / "tensors").glob("*")) if (base / "tensors").is_dir() else 0
    )
    stamp.write_text(json.dumps({"key": key, "info": info}, default=str))
    return info


def largest_pair_bytes(base: Path, cand: Path) -> int:
    """Byte size of the largest baseline+candidate dump pair (same file name in both runs)."""
    return max(
        p.stat().st_size + (cand / p.name).stat().st_size for p in base.iterdir() if (cand / p.name).exists()
    )


def log_only(root: Path, src: Path) -> dict[str, Any]:
    """``root/{baseline,candidate}/ad.log`` copied from the pair at ``src``."""
    for side in ("baseline", "candidate"):
        (root / side).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / side / "ad.log", root / side / "ad.log")
    return {"from": str(src)}


def big_log(root: Path, src: Path, repeat: int = 200, seed: int = 0, distinct: bool = False
            ) -> dict[str, Any]:
    """``root/{baseline,candidate}/ad.log``: the logs of the pair at ``src`` with each line about a transform
    (``[stage=..., transform=...]``) followed by ``repeat`` more of its kind whose decimal figures are drawn
    afresh (a debug-level log: timings and figures differ from run to run, so every such line passes every
    normaliser of the accounting). The pipeline, its counts and the injected loss are the source's.

    Most of those lines hold no decimal figure and so repeat verbatim (926 distinct lines of 43,326 at 80
    layers); ``distinct`` ends each added line with its own number (`` #k``), so that no two lines of a run
    are alike: the case where nothing of the accounting's work is shared between lines."""
    import random
    import re

    rnd = random.Random(seed)
    figure = re.compile(r"\d+\.\d+")
    lines = 0
    for side in ("baseline", "candidate"):
        (root / side).mkdir(parents=True, exist_ok=True)
        out: list[str] = []
        for line in (src / side / "ad.log").read_text().splitlines():
            out.append(line)
            if "transform=" in line and "[SUMMARY]" not in line:
                added = [figure.sub(lambda m: f"{rnd.random() * 10:.3f}", line) for _ in range(repeat)]
                if distinct:
                    added = [f"{a} #{len(out) + k}" for k, a in enumerate(added)]
                out.extend(added)
        (root / side / "ad.log").write_text("\n".join(out) + "\n")
        lines = max(lines, len(out))
    return {"from": str(src), "lines": lines}


@dataclass
class Target:
    """One row of the target table."""

    what: str
    value: float | None
    limit: float | None
    """``None`` for a row shown for comparison only (an ``--extra-path`` variant)."""
    unit: str
    note: str = ""
    invalid: str = ""

    @property
    def status(self) -> str:
        """``met``, ``NOT MET``, ``INVALID``, ``not available`` or ``compare`` (no limit)."""
        if self.invalid:
            return "INVALID"
        if self.value is None:
            return "not available"
        if self.limit is None:
            return "compare"
        return "met" if self.value <= self.limit else "NOT MET"
