"""Render every report of every bundled fixture into one folder, for byte-identity checks across a refactor.

    python scripts/report_snapshot.py OUT_DIR          # then: diff -r OLD_DIR OUT_DIR

Each scenario under fixtures/scenarios (with its manifest arguments) is compared once, writing the
terminal report (stdout, no colour, 100 columns), markdown, JSON, JUnit and HTML reports plus the exit
code and stderr; `batch` runs over the scenario folders; `candidates` runs over each candidates fixture in
its three formats; `history` runs over the history tests' series (as snapshots and as run folders). Paths
inside the outputs are relative to the repository, so two checkouts at different places give the same
bytes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the history series is built by the tests' own generator
BATCH_MODELS = ("partial_loss", "multi_rank", "crash_midway", "fusion_one_layer", "dump_d1")


def _run(args: list[str], out: Path, stem: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "NO_COLOR": "1", "TZ": "UTC"}
    env.pop("GITHUB_ACTIONS", None)
    env.pop("CI", None)
    proc = subprocess.run([sys.executable, "-m", "ad_diff", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    (out / f"{stem}.stdout").write_text(proc.stdout)
    (out / f"{stem}.stderr").write_text(proc.stderr)
    (out / f"{stem}.rc").write_text(f"{proc.returncode}\n")


def _jobs(out: Path) -> list[tuple[list[str], Path, str]]:
    jobs: list[tuple[list[str], Path, str]] = []
    scen_root = ROOT / "fixtures/scenarios"
    manifest = yaml.safe_load((scen_root / "manifest.yaml").read_text())["scenarios"]
    for scen in sorted(p for p in scen_root.iterdir() if (p / "baseline").is_dir()):
        rel = scen.relative_to(ROOT)
        dest = out / "compare" / scen.name
        dest.mkdir(parents=True)
        extra = [a.replace("{scenario}", str(rel)) for a in (manifest.get(scen.name) or {}).get("args") or ()]
        d = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
        jobs.append(([f"{rel}/baseline", f"{rel}/candidate", *extra, "--no-color", "-f", "terminal",
                      "--markdown", f"{d}/report.md", "--json", f"{d}/report.json",
                      "--junit", f"{d}/report.xml", "--html", f"{d}/report.html"], dest, "terminal"))
        for fmt in ("markdown", "json"):
            jobs.append(([f"{rel}/baseline", f"{rel}/candidate", *extra, "-f", fmt], dest, f"stdout-{fmt}"))
    cand_root = ROOT / "fixtures/candidates"
    for case in sorted(p for p in cand_root.iterdir() if p.is_dir() and p.name != "trtllm_src"):
        dest = out / "candidates" / case.name
        dest.mkdir(parents=True)
        for fmt in ("terminal", "markdown", "json"):
            jobs.append((["candidates", str(case.relative_to(ROOT)), "-f", fmt], dest, fmt))
    # batch: a baseline root and a candidate root holding a few scenarios' runs, copied (links are refused).
    dest = out / "batch"
    for side in ("baseline", "candidate"):
        for name in BATCH_MODELS:
            shutil.copytree(scen_root / name / side, dest / "roots" / side / name)
    for fmt in ("terminal", "markdown", "json"):
        jobs.append((["batch", str(dest / "roots/baseline"), str(dest / "roots/candidate"), "-f", fmt,
                      "--no-color"], dest, fmt))
    # history: the series the history tests build (a collapse, a recovery, a flaky transform), as snapshots
    # and as run folders.
    from tests.unit.history.scenario import scenario

    for kind in ("snapshot", "folder"):
        dest = out / "history" / kind
        runs = scenario(dest / "runs", kind)
        for fmt in ("terminal", "markdown", "json"):
            jobs.append((["history", str(runs), "-f", fmt, "--no-color"], dest, fmt))
    return jobs


def main() -> int:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=False)
    jobs = _jobs(out)
    with ThreadPoolExecutor(max_workers=int(os.environ.get("SNAPSHOT_JOBS", "2"))) as pool:
        list(pool.map(lambda j: _run(*j), jobs))
    # Absolute paths of the checkout would make two worktrees differ; name them by a placeholder.
    for f in out.rglob("*"):
        if f.is_file():
            text = f.read_text(errors="surrogateescape")
            if str(ROOT) in text or str(out) in text:
                f.write_text(text.replace(str(out), "<OUT>").replace(str(ROOT), "<ROOT>"),
                             errors="surrogateescape")
    print(f"{len(jobs)} runs written under {out}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
