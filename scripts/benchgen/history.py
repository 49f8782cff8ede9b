"""Generator of a run history (``ad-diff history`` input) with known changes, fast enough for 18,000 runs.

Usage (benchmark size, 365 runs x 50 models x 100 transforms as snapshot files)::

    python scripts/benchgen/history.py OUT/ [--runs 365] [--models 50] [--transforms 100] [--kind snapshot]

Layout ``model-run``: ``OUT/<model>/<run>.yaml`` (``kind="snapshot"``) or ``OUT/<model>/<run>/`` holding
``ad.log`` and ``run.json`` (``kind="folder"``); ``layout="flat"`` drops the model level (one model).
Every (model, transform) has a fixed base value; :class:`Event` values override it from a run on, or for a
few runs (a blip). Snapshot text is written directly, in exactly the form ``ad-diff snapshot`` writes
(a test compares it with ``ad_diff.discover.snapshot.dump``), because dumping 1.8 million rows through
PyYAML would take minutes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ad_diff import __version__  # noqa: E402

_STAGES = (
    "export",
    "post_export",
    "pattern_matcher",
    "sharding",
    "post_load_fusion",
    "cache_init",
    "compile",
)
_NAMED = (
    "export_to_gm",
    "cleanup_noop_slice",
    "match_repeat_kv",
    "match_rope_pattern",
    "match_rmsnorm_pattern",
    "match_swiglu_pattern",
    "fuse_moe",
    "fuse_allreduce_residual_rmsnorm",
    "fuse_gemms",
    "insert_cached_attention",
)
START = datetime(2025, 1, 1, 2, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Event:
    """``transform`` of ``model`` has ``state``/``matches`` from run ``run`` on (for ``runs`` runs if set)."""

    model: str
    transform: str
    run: int
    matches: int | None
    state: str = "applied"
    runs: int | None = None


Row = tuple[str, str, str, int | None]
"""(stage, transform, state, matches)"""


def transforms(n: int) -> list[tuple[str, str]]:
    """``n`` (stage, transform) pairs in pipeline order; the first ones carry real AD names."""
    names = [*_NAMED[:n], *(f"match_pattern_{i:03d}" for i in range(len(_NAMED), n))]
    return [(_STAGES[min(i * len(_STAGES) // max(n, 1), len(_STAGES) - 1)], t) for i, t in enumerate(names)]


def base_value(model: str, transform: str) -> tuple[str, int | None]:
    """A fixed value per (model, transform): mostly applied with 0-32 matches, some skipped or disabled."""
    h = int.from_bytes(hashlib.blake2b(f"{model}/{transform}".encode(), digest_size=4).digest(), "big")
    if h % 11 == 0:
        return "skipped", None
    if h % 13 == 0:
        return "disabled", None
    return "applied", h % 33


def snapshot_text(source: str, rows: Sequence[Row]) -> str:
    """A snapshot file as ``ad-diff snapshot`` writes it (names must be plain words)."""
    last = f"{rows[-1][0]}/{rows[-1][1]}" if rows else "none"
    head = (
        "# ad-diff snapshot: per-transform states and match counts of one AutoDeploy run.\n"
        "# Check a candidate against it with: ad-diff THIS_FILE.yaml CANDIDATE_RUN/\n"
        f"ad_diff_snapshot: 1\ntool: ad-diff {__version__}\nsource: {source}\nlog: ad.log\nrank: 0\n"
        "log_formats:\n- V3\nlog_prefixes:\n- L3\nend: complete\n"
        f"end_detail: {len(rows)} transforms, last {last}\n"
        "transforms:\n"
    )
    body = "".join(
        f"  - {{stage: {s}, transform: {t}, state: {st}, matches: {'null' if m is None else m}}}\n"
        for s, t, st, m in rows
    )
    return head + body


def log_text(rows: Iterable[Row]) -> str:
    """An AD log (V3 summaries, standalone logger with rank) holding ``rows``."""
    out = []
    for s, t, st, m in rows:
        result = f"matches={m}" if st == "applied" else st
        tail = "" if st == "disabled" else " | time: 0.100s (pre=0.000s, apply=0.100s, post=0.000s)"
        out.append(f"[AUTO-DEPLOY] [INFO] [RANK 0] [stage={s}, transform={t}] [SUMMARY] {result}{tail}\n")
    return "".join(out)


def run_json(run: int) -> str:
    """A ``run.json`` as ``ad-diff record`` writes it (the fields history reads, plus a few)."""
    started = START + timedelta(days=run)
    commit = hashlib.sha1(f"commit-{run}".encode()).hexdigest()
    return json.dumps(
        {
            "schema_version": 1,
            "tool": f"ad-diff {__version__}",
            "started": started.isoformat(),
            "git": {"commit": commit, "dirty": False},
            "exit_code": 0,
            "status": "succeeded",
        },
        indent=2,
    )


def run_name(i: int, runs: int) -> str:
    """``run-007`` (zero-padded, so name order is time order)."""
    return f"run-{i:0{max(3, len(str(runs - 1)))}d}"


def make_history(
    out: Path,
    runs: int = 365,
    models: int | Sequence[str] = 50,
    n_transforms: int = 100,
    events: Sequence[Event] = (),
    model_start: dict[str, int] | None = None,
    kind: str = "snapshot",
    layout: str = "model-run",
) -> dict[str, object]:
    """Write the history under ``out``; returns what was written (runs, models, leaves, cells)."""
    names = list(models) if not isinstance(models, int) else [f"model-{j:02d}" for j in range(models)]
    if layout == "flat" and len(names) != 1:
        raise ValueError("layout flat holds one model")
    pipeline = transforms(n_transforms)
    starts = model_start or {}
    by_model: dict[str, list[Event]] = {}
    for e in events:
        by_model.setdefault(e.model, []).append(e)
    leaves = cells = 0
    for model in names:
        base = {t: base_value(model, t) for _, t in pipeline}
        mine = by_model.get(model, [])
        folder = out if layout == "flat" else out / model
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(starts.get(model, 0), runs):
            value = dict(base)
            for e in mine:  # later events win
                if e.run <= i and (e.runs is None or i < e.run + e.runs):
                    value[e.transform] = (e.state, e.matches)
            rows = [(s, t, *value[t]) for s, t in pipeline if value[t][0] != "absent"]
            name = run_name(i, runs)
            if kind == "snapshot":
                (folder / f"{name}.yaml").write_text(snapshot_text(f"{model}/{name}", rows), encoding="utf-8")
            else:
                run_dir = folder / name
                run_dir.mkdir(exist_ok=True)
                (run_dir / "ad.log").write_text(log_text(rows), encoding="utf-8")
                (run_dir / "run.json").write_text(run_json(i), encoding="utf-8")
            leaves += 1
            cells += len(rows)
    return {"runs": runs, "models": len(names), "leaves": leaves, "cells": cells}


def main(argv: list[str] | None = None) -> int:
    """Command line: write a benchmark-size history."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=int, default=365)
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--transforms", type=int, default=100)
    ap.add_argument("--kind", choices=("snapshot", "folder"), default="snapshot")
    args = ap.parse_args(argv)
    info = make_history(
        args.out,
        args.runs,
        args.models,
        args.transforms,
        bench_events(args.models, args.runs),
        kind=args.kind,
    )
    print(json.dumps(info))  # noqa: T201
    return 0


def bench_events(models: int, runs: int) -> list[Event]:
    """A few steps and blips spread over a benchmark history (so step analysis has work to do)."""
    out = []
    for j in range(0, models, 5):
        m = f"model-{j:02d}"
        out.append(Event(m, "fuse_moe", runs // 3, 0))
        out.append(Event(m, "match_rope_pattern", runs // 2, 1))
        out.append(Event(m, "match_swiglu_pattern", runs // 4, 40, runs=1))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
