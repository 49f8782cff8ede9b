"""Rows of the benchmark that other scripts measure, called as functions when those scripts are present
(imported by path, so the coupling is one function call; "not available" otherwise):

* ``scripts/bench_tensors.py``: ``bench_row(work: Path, *, repeats: int, quick: bool) -> dict`` with
  ``ratio`` (ad-diff / single numpy pass) and optionally ``ad_s``, ``numpy_s``, ``cosine_error``; a version
  without ``bench_row`` is driven through its ``generate``, ``floor`` and ``exact_cosine`` functions;
* ``scripts/bench_history.py``: ``bench_history(root: Path, ..., repeat: int) -> dict`` with ``cold`` =
  ``{"wall": s, "rss_kb": KiB}``.

An exception inside another script's function becomes a row saying so, so the other rows survive it.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .runner import SCRIPTS, Target


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def external(name: str) -> ModuleType | None:
    """``scripts/<name>.py`` imported by path, ``None`` when absent."""
    path = SCRIPTS / f"{name}.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tensor_pair(mod: ModuleType, work: Path, *, repeats: int, quick: bool) -> dict[str, float]:
    """``scripts/bench_tensors.py``'s own procedure through its functions, for a version of the script that
    has no ``bench_row``: a 2 x 256 MiB bf16 pair (4 MiB with ``quick``), the numpy single pass and
    ``analyze_tensors`` interleaved in this process, page cache warm, medians; the cosine against the exact
    float64 value."""
    import statistics
    import time

    from ad_diff.kinds.tensors.analysis import analyze_tensors
    from ad_diff.settings import Settings

    root = work / "hidden"
    pb, pc = mod.generate(root, 4 if quick else 256, "hidden")
    settings = Settings(baseline=root / "baseline", candidate=root / "candidate")
    mod.floor(pb, pc)  # warm the page cache for both
    floor_s, ad_s, result = [], [], None
    for i in range(repeats):
        for which in ("floor", "ad") if i % 2 == 0 else ("ad", "floor"):  # each first as often (bench.py)
            t = time.perf_counter()
            if which == "floor":
                mod.floor(pb, pc)
                floor_s.append(time.perf_counter() - t)
            else:
                result = analyze_tensors(root / "baseline" / "tensors", root / "candidate" / "tensors",
                                         settings)
                ad_s.append(time.perf_counter() - t)
    assert result is not None
    (c,) = result.comparisons
    assert c.stats is not None
    cos, _ = mod.exact_cosine(pb, pc)
    ad, fl = statistics.median(ad_s), statistics.median(floor_s)
    return {"ratio": ad / fl, "ad_s": ad, "numpy_s": fl, "cosine_error": abs(c.stats.cosine - cos)}


def tensor_row(work: Path, repeats: int, quick: bool) -> tuple[list[Target], dict]:
    """The tensor pair row from ``scripts/bench_tensors.py``: its ``bench_row`` when it has one, else its
    procedure through its ``generate``/``floor``/``exact_cosine`` functions."""
    what = "tensor pair: ad-diff / numpy single pass"
    mod = external("bench_tensors")
    fn = getattr(mod, "bench_row", None)
    how = "bench_row"
    if fn is None and mod is not None and all(hasattr(mod, n) for n in ("generate", "floor", "exact_cosine")):
        fn, how = functools.partial(_tensor_pair, mod), "generate/floor/exact_cosine"
    if fn is None:
        why = "no scripts/bench_tensors.py" if mod is None else "scripts/bench_tensors.py has no bench_row()"
        return [Target(what, None, 2.0, "x", why)], {"available": False, "why": why}
    _say(f"tensor pair (scripts/bench_tensors.py {how}):")
    try:
        got = dict(fn(work, repeats=repeats, quick=quick))
    except Exception as e:  # another helper's code: report, do not lose the other rows
        return [Target(what, None, 2.0, "x", f"{how} failed: {type(e).__name__}: {e}")], {"error": str(e)}
    note = ", ".join(
        f"{k} {got[k]:.3g} s" for k in ("ad_s", "numpy_s") if isinstance(got.get(k), (int, float))
    )
    rows = [Target(what, got.get("ratio"), 2.0, "x", f"{note} (in one process, via {how})")]
    if isinstance(got.get("cosine_error"), (int, float)):
        rows.append(Target("tensor pair: |cosine - exact float64 cosine|", got["cosine_error"], 1e-9, ""))
    return rows, got


def history_row(work: Path, repeats: int, quick: bool) -> tuple[list[Target], dict]:
    """The history row from ``scripts/bench_history.py``'s ``bench_history``, when present."""
    what = "history: cold run wall time"
    mod = external("bench_history")
    fn = getattr(mod, "bench_history", None)
    if fn is None:
        why = (
            "no scripts/bench_history.py"
            if mod is None
            else "scripts/bench_history.py has no bench_history()"
        )
        return [Target(what, None, 10.0, "s", why)], {"available": False, "why": why}
    _say("history (scripts/bench_history.py bench_history):")
    sizes = {"runs": 6, "models": 2, "transforms": 8} if quick else {}
    try:
        got = dict(fn(work, **sizes, repeat=repeats))
        cold = got["cold"]
    except Exception as e:  # another helper's code: report, do not lose the other rows
        return [Target(what, None, 10.0, "s", f"bench_history failed: {type(e).__name__}: {e}")], {
            "error": str(e)
        }
    return [
        Target(what, cold["wall"], 10.0, "s"),
        Target("history: cold run peak RSS", cold["rss_kb"] / 1024, 1024.0, "MiB"),
    ], got
