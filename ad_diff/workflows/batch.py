"""Many models at once: pair run folders of two roots by name and compare each pair in parallel.

``BASELINE_ROOT/`` holds one run folder per model (or one ``<model>.yaml`` snapshot per model);
``CANDIDATE_ROOT/`` one run folder per model. A model that cannot be compared (bad input, a bug in
ad-diff, a worker process that died) gets status ``error`` and exit code 2 (3 for a bug in ad-diff) without
stopping the others.
A model with a baseline but no candidate run gates (its run is missing, which must not read as a pass); a
model only in the candidate root is listed as new. A model entry that may not be read (a folder or snapshot
linking outside its root, a FIFO, a broken link) is that model's error row, never left out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

from ad_diff.core import safepath
from ad_diff.core.escape import excerpt
from ad_diff.errors import AdDiffError, InputError
from ad_diff.gate import EXIT_INPUT_ERROR, EXIT_INTERNAL_ERROR
from ad_diff.progress import ProgressFn, no_progress
from ad_diff.result import BatchResult, ModelOutcome
from ad_diff.settings import Settings

_PLACE = "the batch root"


def _vet(path: Path, root: Path, snapshot: bool) -> tuple[str | None, str | None]:
    """``(model name, why it is refused)`` of one entry of a batch root; the name is ``None`` for an entry
    that is no model (``snapshot``: the name makes it a baseline ``<model>.yaml``).

    A folder, or a link to one, is a model; so is a snapshot file. An entry that is neither a folder nor a
    regular file (a FIFO, a socket, a broken link) is a refused model: its name may be a model's. Any other
    file is no model (a README, a report). Nothing is opened here."""
    name = path.stem if snapshot else path.name
    try:
        mode = path.stat().st_mode  # follows links: a link is judged by its target, then by where it leads
    except OSError:
        return name, safepath.refusal(path, root, _PLACE) or "cannot be read"
    if stat.S_ISDIR(mode):
        inside = safepath.is_inside(path, root)
        return path.name, None if inside else safepath.linked_folder(path, root, _PLACE)
    if stat.S_ISREG(mode):
        return (name, safepath.refusal(path, root, _PLACE)) if snapshot else (None, None)
    return name, "is not a folder or a regular file (a FIFO, socket or device); refusing to open it"


def _entries(root: Path, allow_snapshots: bool) -> tuple[dict[str, Path], dict[str, str]]:
    """The models of one root by name, and the refused ones with the error that names them.

    A model folder (or snapshot) is read as a run of its own; one inside the root that links outside it would
    let a batch read anything the link names, and a dropped one would let the batch pass with fewer models:
    both are the model's error row instead. Links that stay inside the root are followed."""
    if not root.is_dir():
        raise InputError(root, "is not a folder; expected a folder holding one run folder per model")
    expected = "expected a run folder (one per model)" + (" or a <model>.yaml snapshot" if allow_snapshots
                                                          else "")
    out: dict[str, Path] = {}
    refused: dict[str, str] = {}
    for p in sorted(root.iterdir()):  # a folder `m` sorts before `m.yaml`: the folder is the model
        if p.name.startswith("."):
            continue
        name, why = _vet(p, root, allow_snapshots and p.suffix in (".yaml", ".yml"))
        if name is None:
            continue
        if why is not None:
            refused.setdefault(name, str(InputError(p, f"{why}; {expected}")))
        else:
            out.setdefault(name, p)
    return out, refused


def pair(baseline_root: Path, candidate_root: Path
         ) -> tuple[list[tuple[str, Path, Path]], list[str], list[str], dict[str, str]]:
    """Pair run folders by name: ``(pairs, baseline_only, candidate_only, refused)``, all sorted by name.

    ``refused``: model name -> the error naming the entry of either root that may not be read (a link
    leaving its root, a FIFO...); such a model is neither paired nor unpaired, it is an error row."""
    b, b_bad = _entries(baseline_root, allow_snapshots=True)
    c, c_bad = _entries(candidate_root, allow_snapshots=False)
    for root in (baseline_root, candidate_root):
        if any(root.glob("*.log")):
            raise InputError(root, "holds a *.log at its top: it looks like a single run folder; use "
                                   "`ad-diff compare` for one pair, `ad-diff batch` for folders of run "
                                   "folders")
    refused = {**c_bad, **b_bad}  # the baseline's entry is named when both are refused
    if not b and not c and not refused:
        raise InputError(baseline_root, f"neither this folder nor {candidate_root} holds any run folder; "
                                        "expected one sub-folder per model (e.g. "
                                        "runs/base/llama-3-8b/ad.log)")
    for bad in refused:
        b.pop(bad, None)
        c.pop(bad, None)
    pairs = [(n, b[n], c[n]) for n in sorted(b.keys() & c.keys())]
    return pairs, sorted(b.keys() - c.keys()), sorted(c.keys() - b.keys()), dict(sorted(refused.items()))


def compare_one(name: str, settings: Settings) -> ModelOutcome:
    """Compare one pair; any failure becomes the model's ``error`` row (runs in a worker process).

    A model that could not be compared gets an ``error`` row: exit code 2 when its input was bad (or its
    worker died), 3 when ad-diff hit a bug on it, as ``compare`` would exit. The batch exits with the worst
    code, which never reads as a pass, and one model's failure costs neither the other models' results nor
    the report. The row's ``error`` says which it was.
    """
    # lazy: the comparison loads when a model is compared, not when the batch is planned
    from ad_diff import gate, pipeline

    try:
        result = pipeline.run(settings)
        verdict = gate.judge(result.findings, result.groups, settings.fail_on)
    except AdDiffError as e:
        return _error_row(name, str(e))
    except Exception as e:  # noqa: BLE001 - one model's bug must not lose the other models' results
        return _bug_row(name, e)
    return ModelOutcome(name, verdict.exit_code, result, verdict)


def _error_row(name: str, error: str) -> ModelOutcome:
    return ModelOutcome(name, EXIT_INPUT_ERROR, error=excerpt(error, 1000))


def _bug_row(name: str, e: BaseException) -> ModelOutcome:
    error = f"internal error (a bug in ad-diff, please report it): {type(e).__name__}: {e}"
    return ModelOutcome(name, EXIT_INTERNAL_ERROR, error=excerpt(error, 1000))


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
    pairs, b_only, c_only, refused = pair(baseline_root, candidate_root)
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
    outcomes += [_error_row(n, error) for n, error in refused.items()]
    models = tuple(sorted(outcomes, key=lambda m: m.name))
    return BatchResult(baseline_root, candidate_root, fail_on, models, tuple(b_only), tuple(c_only))
