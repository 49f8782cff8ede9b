"""Many models at once: pair run folders of two roots by name and compare each pair in parallel.

``BASELINE_ROOT/`` holds one run folder per model (or one ``<model>.yaml`` snapshot per model);
``CANDIDATE_ROOT/`` one run folder per model. A model that cannot be compared (bad input, a bug in
ad-diff, a worker process that died) gets status ``error`` and exit code 2 without stopping the others.
A model with a baseline but no candidate run gates (its run is missing, which must not read as a pass); a
model only in the candidate root is listed as new.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

from ad_diff.core.escape import excerpt
from ad_diff.errors import AdDiffError, InputError
from ad_diff.gate import EXIT_INPUT_ERROR
from ad_diff.progress import ProgressFn, no_progress
from ad_diff.result import BatchResult, ModelOutcome
from ad_diff.settings import Settings


def _entries(root: Path, allow_snapshots: bool) -> dict[str, Path]:
    if not root.is_dir():
        raise InputError(root, "is not a folder; expected a folder holding one run folder per model")
    out: dict[str, Path] = {}
    for p in sorted(root.iterdir()):
        if p.name.startswith("."):
            continue
        if p.is_dir():
            out[p.name] = p
        elif allow_snapshots and p.suffix in (".yaml", ".yml") and p.is_file():
            out.setdefault(p.stem, p)
    return out


def pair(baseline_root: Path,
         candidate_root: Path) -> tuple[list[tuple[str, Path, Path]], list[str], list[str]]:
    """Pair run folders by name: ``(pairs, baseline_only, candidate_only)``, all sorted by name."""
    b = _entries(baseline_root, allow_snapshots=True)
    c = _entries(candidate_root, allow_snapshots=False)
    for root in (baseline_root, candidate_root):
        if any(root.glob("*.log")):
            raise InputError(root, "holds a *.log at its top: it looks like a single run folder; use "
                                   "`ad-diff compare` for one pair, `ad-diff batch` for folders of run "
                                   "folders")
    if not b and not c:
        raise InputError(baseline_root, f"neither this folder nor {candidate_root} holds any run folder; "
                                        "expected one sub-folder per model (e.g. "
                                        "runs/base/llama-3-8b/ad.log)")
    pairs = [(n, b[n], c[n]) for n in sorted(b.keys() & c.keys())]
    return pairs, sorted(b.keys() - c.keys()), sorted(c.keys() - b.keys())


def compare_one(name: str, settings: Settings) -> ModelOutcome:
    """Compare one pair; any failure becomes the model's ``error`` row (runs in a worker process).

    Every model that could not be compared, whether its input was bad or ad-diff hit a bug on it, gets exit
    code 2 ("not compared"): the batch then exits 2, which never reads as a pass, and one model's failure
    costs neither the other models' results nor the report. The row's ``error`` says which it was.
    """
    from ad_diff import gate, pipeline

    try:
        result = pipeline.run(settings)
        verdict = gate.decide(result.findings, settings.fail_on)
    except AdDiffError as e:
        return _error_row(name, str(e))
    except Exception as e:  # noqa: BLE001 - one model's bug must not lose the other models' results
        return _bug_row(name, e)
    return ModelOutcome(name, verdict.verdict, verdict.exit_code, result, verdict)


def _error_row(name: str, error: str) -> ModelOutcome:
    return ModelOutcome(name, "error", EXIT_INPUT_ERROR, error=excerpt(error, 1000))


def _bug_row(name: str, e: BaseException) -> ModelOutcome:
    return _error_row(name, f"internal error (a bug in ad-diff, please report it): {type(e).__name__}: {e}")


def _in_fresh_worker(name: str, settings: Settings) -> ModelOutcome:
    """Retry one model alone in its own process, so a model that kills its worker only loses itself."""
    try:
        with ProcessPoolExecutor(max_workers=1) as pool:
            return pool.submit(compare_one, name, settings).result()
    except BrokenProcessPool:
        return _error_row(name, "the worker process comparing this model died (killed by a signal, e.g. "
                                "out of memory); it was retried alone and died again")
    except Exception as e:  # noqa: BLE001 - e.g. a result that cannot be sent back from the worker
        return _bug_row(name, e)


def run_batch(
    baseline_root: Path,
    candidate_root: Path,
    make_settings: Callable[[str, Path, Path], Settings],
    jobs: int | None = None,
    progress: ProgressFn = no_progress,
) -> BatchResult:
    """Compare every pair in up to ``min(jobs or cpu_count, pairs)`` processes (in-process when that is 1)."""
    pairs, b_only, c_only = pair(baseline_root, candidate_root)
    settings = {n: replace(make_settings(n, b, c), model=n) for n, b, c in pairs}
    workers = max(1, min(jobs or os.cpu_count() or 1, len(pairs)))
    outcomes: list[ModelOutcome] = []
    progress("comparing models", 0, len(pairs))
    if workers == 1:
        for n, _, _ in pairs:
            outcomes.append(compare_one(n, settings[n]))
            progress("comparing models", len(outcomes), len(pairs))
    else:
        lost: list[str] = []
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(compare_one, n, settings[n]): n for n, _, _ in pairs}
            for fut in as_completed(futures):
                try:
                    outcomes.append(fut.result())
                except BrokenProcessPool:  # a worker died: every model it took down is retried alone
                    lost.append(futures[fut])
                    continue
                except Exception as e:  # noqa: BLE001 - e.g. a result that cannot be sent back
                    outcomes.append(_bug_row(futures[fut], e))
                progress("comparing models", len(outcomes), len(pairs))
        for n in sorted(lost):
            outcomes.append(_in_fresh_worker(n, settings[n]))
            progress("comparing models", len(outcomes), len(pairs))
    if settings:
        fail_on = next(iter(settings.values())).fail_on
    else:
        fail_on = make_settings("", baseline_root, candidate_root).fail_on
    models = tuple(sorted(outcomes, key=lambda m: m.name))
    return BatchResult(baseline_root, candidate_root, fail_on, models, tuple(b_only), tuple(c_only))
