"""Rewrite golden files from the current code. Review every change in `git diff` before committing.

    python scripts/update_golden.py            # parser goldens + CLI scenario snapshots
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ad_diff.kinds.graph import parse as dump_parser  # noqa: E402
from ad_diff.kinds.log import parse as log_parser  # noqa: E402


def update_log_goldens() -> int:
    n = 0
    for path in sorted((ROOT / "fixtures/parsers/log").glob("*.log")):
        data = log_parser.as_dict(log_parser.parse(path))
        path.with_suffix(".json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        n += 1
    return n


def update_dump_goldens() -> int:
    """Write fixtures/parsers/dump/<case>.json from each <case>.txt (the dump parser's goldens)."""
    n = 0
    for path in sorted((ROOT / "fixtures/parsers/dump").glob("*.txt")):
        data = dump_parser.as_dict(dump_parser.parse(path))
        path.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        n += 1
    return n


def update_scenario_snapshots() -> int:
    """Write expected/report.md and expected/report.json for every scenario under fixtures/scenarios."""
    import os
    import subprocess

    import yaml

    n = 0
    scen_root = ROOT / "fixtures/scenarios"
    manifest = yaml.safe_load((scen_root / "manifest.yaml").read_text())["scenarios"]
    for scen in (
        sorted(p for p in scen_root.iterdir() if (p / "baseline").is_dir()) if scen_root.is_dir() else []
    ):
        exp = scen / "expected"
        exp.mkdir(exist_ok=True)
        rel = scen.relative_to(ROOT)
        extra = [a.replace("{scenario}", str(rel)) for a in (manifest.get(scen.name) or {}).get("args") or ()]
        args = [
            sys.executable,
            "-m",
            "ad_diff",
            f"{rel}/baseline",
            f"{rel}/candidate",
            *extra,
            "--markdown",
            f"{rel}/expected/report.md",
            "--json",
            f"{rel}/expected/report.json",
            "-f",
            "json",
        ]
        # The same BLAS kernel family as tests/conftest.py pins, so goldens written here match the tests.
        env = {"OPENBLAS_CORETYPE": "Haswell", **os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
        (exp / "exit_code").write_text(f"{proc.returncode}\n")
        n += 1
    return n


if __name__ == "__main__":
    print(f"log goldens: {update_log_goldens()}")  # noqa: T201
    print(f"dump goldens: {update_dump_goldens()}")  # noqa: T201
    print(f"scenario snapshots: {update_scenario_snapshots()}")  # noqa: T201
