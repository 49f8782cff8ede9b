"""Shared test helpers: fixture paths and a CLI runner that reports exit code, stdout and stderr."""

from __future__ import annotations

import os

# The JSON goldens hold full-precision floats, and numpy's OpenBLAS picks its kernel by CPU at import: an
# AVX-512 kernel sums in another order than the AVX2 one and moves the last digit. Pinning one kernel family
# (before numpy is imported, here and in every CLI subprocess, which inherits the environment) makes the
# goldens the same on every x86 machine; a user's run is unaffected.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import compileall  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@dataclass
class CliResult:
    """Outcome of one CLI invocation."""

    code: int
    out: str
    err: str


def run_cli(*args: str | os.PathLike[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> CliResult:
    """Run ``python -m ad_diff`` in a subprocess (the real entry point, exit codes included)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full_env.pop("AD_DIFF_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "ad_diff", *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    """The ``run_cli`` helper as a fixture."""
    return run_cli


def pytest_configure(config: pytest.Config) -> None:
    """Compile ad_diff's modules once, before any worker starts.

    Hundreds of tests run the real CLI in a subprocess; where PYTHONDONTWRITEBYTECODE is set (as on CI
    machines), each of them would compile the whole package again (about a third of a small run's time).
    ``compileall`` writes the bytecode regardless, and Python checks it against the source's mtime.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        compileall.compile_dir(ROOT / "ad_diff", quiet=1)


def make_run(root: Path, log_text: str, name: str = "ad.log") -> Path:
    """Create a run folder holding one log."""
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(log_text)
    return root


def v3(stage: str, transform: str, result: str, rank: int | None = 0) -> str:
    """One V3/L3 summary line, e.g. ``v3('pattern_matcher', 'match_rope_pattern', 'matches=4')``."""
    r = f" [RANK {rank}]" if rank is not None else ""
    tail = "" if result == "disabled" else " | time: 0.100s (pre=0.000s, apply=0.100s, post=0.000s)"
    return f"[AUTO-DEPLOY] [INFO]{r} [stage={stage}, transform={transform}] [SUMMARY] {result}{tail}\n"


@pytest.fixture(scope="session")
def moe4_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The benchmark generator's MoE decoder at 4 layers, every AD transform (90), 200 nodes a dump: the
    "4-layer model" of the size and layout tests (generated once per session)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from fixturegen.large import make_large_pair

    out = tmp_path_factory.mktemp("moe4")
    make_large_pair(out, layers=4, transforms=90, nodes_per_dump=200)
    return out / "baseline", out / "candidate"
