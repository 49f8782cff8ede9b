"""Benchmark of ``ad-diff history`` on a year of nightly snapshots (issue 20: under 10 s and 1 GiB).

Usage: python scripts/bench_history.py [--runs 365] [--models 50] [--transforms 100] [--kind snapshot]
                                       [--repeat 3] [--dir DIR]

Generates (scripts/benchgen/history.py) ``runs x models`` snapshot files of ``transforms`` transforms each
(365 x 50 x 100 = 18,250 files, 1.8 million cells) with a few steps and blips, warms the page cache, and
measures in a fresh process each (wall time, CPU time, peak RSS):

* ``ad-diff history ROOT -f json`` cold (no cache);
* the same with ``--cache`` twice: the run that writes the cache, then a re-run that reads nothing new;
* a re-run after one more night (one new run of every model).

CPU time is printed beside wall time because on a shared machine wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchgen.history import bench_events, make_history, run_name  # noqa: E402

# One command in a fresh wrapper: RUSAGE_CHILDREN holds the largest RSS of every child ever waited for.
MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kb": ru.ru_maxrss, "rc": rc}))
"""
TIME_LIMIT_S = 10.0
RSS_LIMIT_MIB = 1024.0


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def measure(cmd: list[str], repeat: int) -> dict[str, float]:
    """Best wall time (with its CPU time and peak RSS) over ``repeat`` runs of ``cmd``."""
    best: dict[str, float] | None = None
    for _ in range(repeat):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's ad_diff, wherever it is run from
        out = subprocess.run(
            [sys.executable, "-c", MEASURE, *cmd],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env=env,
        )
        got = json.loads(out.stdout)
        if best is None or got["wall"] < best["wall"]:
            best = got
    assert best is not None
    return best


def _line(name: str, m: dict[str, float]) -> str:
    return (
        f"  {name:<24} {m['wall']:6.2f} s wall  {m['cpu']:6.2f} s CPU  peak RSS {m['rss_kb'] / 1024:7.1f} MiB"
        f"  exit {int(m['rc'])}"
    )


def bench_history(
    root: Path,
    runs: int = 365,
    models: int = 50,
    transforms: int = 100,
    kind: str = "snapshot",
    repeat: int = 3,
) -> dict[str, object]:
    """Generate the history under ``root`` (reused when already there) and measure ``ad-diff history``."""
    stamp = root / "bench.json"
    params = {"runs": runs, "models": models, "transforms": transforms, "kind": kind}
    gen_s = 0.0
    if not stamp.is_file() or json.loads(stamp.read_text()).get("params") != params:
        if root.exists():
            shutil.rmtree(root)
        t = time.perf_counter()
        info = make_history(root / "nightly", runs, models, transforms, bench_events(models, runs), kind=kind)
        gen_s = time.perf_counter() - t
        stamp.write_text(json.dumps({"params": params, "info": info}))
    info = json.loads(stamp.read_text())["info"]
    history = root / "nightly"
    subprocess.run(["cat", *map(str, history.rglob("*.yaml"))], stdout=subprocess.DEVNULL, check=False)
    cmd = [sys.executable, "-m", "ad_diff", "history", str(history), "-f", "json"]
    cold = measure(cmd, repeat)
    cache = root / "cache.json"
    cache.unlink(missing_ok=True)
    write = measure([*cmd, "--cache", str(cache)], 1)
    warm = measure([*cmd, "--cache", str(cache)], repeat)
    added: list[Path] = []
    last = run_name(runs - 1, runs)
    for model_dir in sorted(p for p in history.iterdir() if p.is_dir()):  # one more night: a copy of the last
        for src in (model_dir / f"{last}.yaml", model_dir / last):
            dst = src.with_name(f"{last}-next{src.suffix}")
            if src.is_file():
                shutil.copy(src, dst)
            elif src.is_dir():
                shutil.copytree(src, dst)
            else:
                continue
            added.append(dst)
    try:
        night = measure([*cmd, "--cache", str(cache)], 1)
    finally:
        for p in added:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    _say(
        f"history: {info['runs']} runs x {info['models']} models x {transforms} transforms = "
        f"{info['leaves']} {'snapshot files' if kind == 'snapshot' else 'run folders'}, {info['cells']} cells"
        + (f" (generated in {gen_s:.1f} s)" if gen_s else "")
    )
    _say(f"  command: python -m ad_diff history {history} -f json")
    for name, m in (
        ("cold (no cache)", cold),
        ("--cache, writing it", write),
        ("--cache, nothing new", warm),
        ("--cache, one new night", night),
    ):
        _say(_line(name, m))
    ok: bool | None = None  # the target is stated for the size only
    if params == {"runs": 365, "models": 50, "transforms": 100, "kind": "snapshot"}:
        ok = cold["wall"] < TIME_LIMIT_S and cold["rss_kb"] / 1024 < RSS_LIMIT_MIB
        verdict = "met" if ok else "MISSED"
        _say(f"  target: cold under {TIME_LIMIT_S:.0f} s and {RSS_LIMIT_MIB:.0f} MiB: {verdict}")
    if cold["rc"] != 1:
        _say(f"  WARNING: ad-diff history exited {cold['rc']}, expected 1 (the generated collapses gate)")
    return {
        "cells": info["cells"],
        "leaves": info["leaves"],
        "cold": cold,
        "cache_write": write,
        "cache_warm": warm,
        "cache_new_night": night,
        "target_met": ok,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=365)
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--transforms", type=int, default=100)
    ap.add_argument("--kind", choices=("snapshot", "folder"), default="snapshot")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best wall time kept)")
    ap.add_argument(
        "--dir", type=Path, help="where to generate the history (kept and reused; default: temporary)"
    )
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="ad-diff-history-")) if args.dir is None else args.dir
    try:
        _say(
            f"machine: {sys.platform}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}, load average "
            f"{os.getloadavg()[0]:.1f} (wall time waits for a core when the load is above the CPU count)"
        )
        result = bench_history(tmp, args.runs, args.models, args.transforms, args.kind, args.repeat)
    finally:
        if args.dir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if result["target_met"] is False else 0


if __name__ == "__main__":
    raise SystemExit(main())
