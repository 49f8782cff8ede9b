"""A log as people really save it: the same lines through a CI system, a launcher, a compressor or a per-rank
layout (what docs/run-folder.md lists as supported). Each form takes ``(rank, line)`` pairs, the rank of the
process that printed each line, and returns the file(s) to write.

Used by the scenario generator (``Side.capture``) and by the tests, which apply every form to committed
scenario logs (``from_text``) and check that ad-diff reads them exactly as the plain log.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

Pairs = Sequence[tuple[int, str]]
_RANK = re.compile(r" \[RANK (\d+)\]")
_T0 = datetime(2026, 4, 24, 10, 0, 3)


def from_text(text: str) -> list[tuple[int, str]]:
    """Pairs of a plain log: a line's rank is its ``[RANK n]`` tag, else 0 (the fixtures' other ranks print
    only AD lines)."""
    out = []
    for line in text.splitlines():
        m = _RANK.search(line)
        out.append((int(m.group(1)) if m else 0, line))
    return out


def without_rank_tags(pairs: Pairs) -> list[tuple[int, str]]:
    """The same lines with ``[RANK n]`` removed: only a launcher's tag can then tell the ranks apart."""
    return [(r, _RANK.sub("", line, count=1)) for r, line in pairs]


def _stamp(i: int, fmt: str) -> str:
    t = _T0 + timedelta(milliseconds=37 * i)
    if fmt == "github":
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}0Z "
    if fmt == "rfc3339nano":
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}123Z "
    if fmt == "jenkins":
        return "[" + t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z] "
    return t.strftime("%H:%M:%S") + "  "  # Timestamper's system clock format


def _stream(line: str) -> str:
    """Where a line went: the standalone AD logger and tracebacks write to stderr, the rest to stdout."""
    to_stderr = line.startswith(("[AUTO-DEPLOY]", "Traceback", "  ", "Exception ignored"))
    return "stderr" if to_stderr else "stdout"


def _timestamped(fmt: str) -> Callable[[Pairs], list[tuple[int, str]]]:
    return lambda pairs: [(r, _stamp(i, fmt) + line) for i, (r, line) in enumerate(pairs)]


def github(pairs: Pairs) -> list[tuple[int, str]]:
    """A GitHub Actions raw job log: a 7-digit fraction timestamp on every line, the step in a group."""
    body = [(0, "##[group]Run python examples/auto_deploy/build_and_run_ad.py --model org/tiny-llama-3l"),
            (0, "python examples/auto_deploy/build_and_run_ad.py --model org/tiny-llama-3l"),
            (0, "shell: /usr/bin/bash -e {0}"), (0, "##[endgroup]"), *pairs]
    return _timestamped("github")(body)


def gitlab(pairs: Pairs) -> list[tuple[int, str]]:
    """A GitLab job trace: ANSI colours and section markers around the script step."""
    head = [(0, "\x1b[0KRunning with gitlab-runner 17.0.0 (44feccdf)\x1b[0;m"),
            (0, "\x1b[0Ksection_start:1713952803:step_script\r\x1b[0K\x1b[0;33mExecuting \"step_script\" "
                "stage of the job script\x1b[0;m"),
            (0, "\x1b[32;1m$ python examples/auto_deploy/build_and_run_ad.py --model org/tiny-llama-3l"
                "\x1b[0;m")]
    tail = [(0, "\x1b[0Ksection_end:1713952911:step_script\r\x1b[0K"),
            (0, "\x1b[32;1mJob succeeded\x1b[0;m")]
    return [*head, *pairs, *tail]


def mpirun(pairs: Pairs) -> list[tuple[int, str]]:
    """``mpirun --tag-output``: ``[jobid,rank]<stream>:`` before every line a rank printed."""
    return [(r, f"[1,{r}]<{_stream(line)}>:{line}") for r, line in pairs]


def srun(pairs: Pairs) -> list[tuple[int, str]]:
    """``srun --label``: the task number before every line."""
    return [(r, f"{r}: {line}") for r, line in pairs]


def torchrun(pairs: Pairs) -> list[tuple[int, str]]:
    """``torchrun --tee 3``: ``[<role><local_rank>]:`` before every line."""
    return [(r, f"[default{r}]:{line}") for r, line in pairs]


def mixed(pairs: Pairs) -> list[tuple[int, str]]:
    """A GitHub Actions log of an mpirun job: timestamps on every line, mpirun tags on the ranks' lines, and
    mpirun's own untagged warnings in between."""
    tagged = mpirun(pairs)
    noise = [(0, "--------------------------------------------------------------------------"),
             (0, "WARNING: There was an error initializing an OpenFabrics device."),
             (0, "--------------------------------------------------------------------------")]
    mid = len(tagged) // 3
    return github([*tagged[:mid], *noise, *tagged[mid:]])


#: Every line-prefix form: name -> transform of the pairs.
FORMS: dict[str, Callable[[Pairs], list[tuple[int, str]]]] = {
    "github": github,
    "kubectl": _timestamped("rfc3339nano"),
    "jenkins": _timestamped("jenkins"),
    "jenkins_clock": _timestamped("clock"),
    "gitlab": gitlab,
    "mpirun": mpirun,
    "srun": srun,
    "torchrun": torchrun,
    "github_mpirun": lambda pairs: github(mpirun(pairs)),
    "kubectl_srun": lambda pairs: _timestamped("rfc3339nano")(srun(pairs)),
    "mixed": mixed,
}
#: Forms that tag each line with its rank (the others need ``[RANK n]`` to tell ranks apart).
RANK_TAGGING = frozenset({"mpirun", "srun", "torchrun", "github_mpirun", "kubectl_srun", "mixed"})

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": lambda b: gzip.compress(b, mtime=0),
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
}


def text_of(pairs: Pairs) -> str:
    """The file text of ``pairs``."""
    return "".join(line + "\n" for _, line in pairs)


def per_rank(pairs: Pairs, layout: str) -> dict[str, str]:
    """One file per rank and stream, as ``torchrun --log-dir`` (``--redirects 3``) or ``mpirun
    --output-filename`` write them: ``{relative path: text}``."""
    files: dict[str, list[str]] = {}
    for r, line in pairs:
        stream = _stream(line)
        if layout == "torchrun":
            rel = f"logs/none_x1y2z3/attempt_0/{r}/{stream}.log"
        elif layout == "mpirun":
            rel = f"mpi-out/1/rank.{r}/{stream}"
        else:
            raise ValueError(f"unknown layout {layout!r}")
        files.setdefault(rel, []).append(line)
    return {rel: "".join(x + "\n" for x in lines) for rel, lines in sorted(files.items())}
