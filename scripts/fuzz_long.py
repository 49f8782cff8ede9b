"""The long fuzz run: millions of mutated inputs through every parser and the whole CLI.

    python scripts/fuzz_long.py --inputs 1000000 --workers 2 --out /tmp/ad-diff-fuzz   # every target
    python scripts/fuzz_long.py --inputs 1000000 --cpu-seconds 1200 --workers 2   # stop after 20 CPU-min
    python scripts/fuzz_long.py --inputs 20000 --targets ad_config,settings --seed 7
    python scripts/fuzz_long.py --replay /tmp/ad-diff-fuzz/reproducers/<target>/<sig>.bin   # rerun one

Targets are in tests/fuzz/targets.py (log, dump, safetensors_header, pt, ad_config, settings,
expected_changes, snapshot, cli in-process, cli_subprocess). Each input is one seed file mutated by
tests/fuzz/mutate.py:mutate_bytes. An input *crashes* when ad-diff raises anything but an AdDiffError
(exit 3 on the command line), and *hangs* when it uses more than ``--hang-seconds`` of CPU time, or blocks
for more than ``--block-seconds`` of wall time (it is interrupted and recorded; CPU time, so that a busy
machine does not make slow inputs out of fast ones). An input *leaks* when an output holds a
credential-shaped string or the canary of a file outside the run folders (tests/fuzz/targets.py:check_leaks).
*Slow* inputs took more than ``--slow-seconds`` of CPU beyond the fixed cost (for the subprocess target,
the cheapest command line it ran); they are listed with their time. Each process runs under an
address-space limit (``--memory-gib``), so a memory bomb is a MemoryError crash, not a dead machine.
``--cpu-seconds`` ends the run after that much CPU time over all workers (children included), whatever
``--inputs`` says; the inputs actually run are what ``stats.json`` counts.

Written under ``--out``: ``stats.json`` (updated every ``--report-every`` seconds: inputs, crashes,
hangs, leaks and slow inputs per target, distinct signatures), ``signatures.json`` (per signature: target,
count, first message, traceback, reproducer path) and ``reproducers/<target>/<signature>.bin`` (+ ``.seed``
naming the file the bytes go to). A signature is the exception type plus the innermost ad_diff frame
(file:function), so one bug found a thousand times counts once. ``--workers N`` runs N processes with
different seeds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Hang(Exception):
    """Raised by the alarm when one input runs too long."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang()


def signature(e: BaseException) -> tuple[str, str]:
    """``(id, text)``: the exception type and the innermost frame inside ad_diff (else the innermost)."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if "/ad_diff/" in f.filename]
    f = (ours or frames or [None])[-1]
    where = "?"
    if f is not None:
        name = Path(f.filename)
        where = f"{name.relative_to(ROOT) if ROOT in name.parents else name}:{f.name}"
    text = f"{type(e).__name__} at {where}"
    return hashlib.sha1(text.encode()).hexdigest()[:12], text


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _worker(args: argparse.Namespace, wid: int, quota: dict[str, int], queue: Any) -> None:
    from tests.fuzz import mutate, targets

    limit = int(args.memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    rng = random.Random(args.seed * 1000 + wid)
    scratch = Path(tempfile.mkdtemp(prefix=f"ad_diff_fuzz_{wid}_", dir=args.tmp))
    os.environ["AD_DIFF_FUZZ_TMP"] = str(scratch)
    targets.preload()
    seeds = {name: targets.TARGETS[name].seeds() for name in quota}
    counts = {name: {"inputs": 0, "crashes": 0, "hangs": 0, "leaks": 0, "seconds": 0.0, "cpu": 0.0,
                     "min_cpu": float("inf")} for name in quota}
    found: dict[str, dict[str, Any]] = {}
    slow: list[dict[str, Any]] = []
    last = time.monotonic()
    budget = args.cpu_seconds / max(1, args.workers) if args.cpu_seconds else None
    cpu_start = _cpu()
    plan = [name for name, n in quota.items() for _ in range(n)]
    rng.shuffle(plan)
    for name in plan:
        if budget is not None and _cpu() - cpu_start > budget:
            break
        target = targets.TARGETS[name]
        seed = rng.choice(seeds[name])
        data = mutate.mutate_bytes(rng, seed[1], target.tokens, max_ops=rng.choice((1, 2, 4, 8, 16)))
        work = scratch / "w"
        work.mkdir(exist_ok=True)
        start, cpu0 = time.monotonic(), _cpu()
        limit_s = target.hang_seconds or args.hang_seconds
        signal.setitimer(signal.ITIMER_PROF, limit_s)
        signal.setitimer(signal.ITIMER_REAL, max(args.block_seconds, limit_s))
        try:
            target.run(seed, data, work)
            kind = None
        except (Hang, targets.CliHang) as e:
            kind, exc = "hang", e
        except targets.Leak as e:
            kind, exc = "leak", e
        except BaseException as e:  # noqa: BLE001 - every escape is a finding of the fuzzer
            if isinstance(e, KeyboardInterrupt):
                raise
            kind, exc = "crash", e
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
        c = counts[name]
        c["inputs"] += 1
        c["seconds"] += time.monotonic() - start
        cpu = _cpu() - cpu0
        c["cpu"] += cpu
        c["min_cpu"] = min(c["min_cpu"], cpu)
        if cpu > args.slow_seconds:  # judged against the target's fixed cost when the stats are written
            slow.append({"target": name, "cpu_s": round(cpu, 2), "seed": seed[0],
                         "reproducer": _save(args.out, name, "slow-" + hashlib.sha1(data).hexdigest()[:12],
                                             seed, data)})
        if kind is not None:
            c[{"crash": "crashes", "hang": "hangs", "leak": "leaks"}[kind]] += 1
            if kind == "crash":
                sig, text = signature(exc)
            elif kind == "leak":
                sig, text = "leak-" + signature(exc)[0], f"leak: {exc}"
            else:
                sig, text = "hang-" + name, f"hang over {limit_s}s"
            key = f"{name}/{sig}"
            if key not in found:
                found[key] = {"target": name, "signature": text, "count": 0, "message": str(exc)[:500],
                              "traceback": "".join(traceback.format_exception(exc))[-4000:],
                              "reproducer": _save(args.out, name, sig, seed, data)}
            found[key]["count"] += 1
        shutil.rmtree(work, ignore_errors=True)
        if time.monotonic() - last > args.report_every:
            queue.put((wid, counts, found, slow, False))
            last = time.monotonic()
    queue.put((wid, counts, found, slow, True))
    shutil.rmtree(scratch, ignore_errors=True)


def _save(out: Path, target: str, sig: str, seed: tuple[str, bytes], data: bytes) -> str:
    folder = out / "reproducers" / target
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sig}.bin"
    if not path.exists():
        path.write_bytes(data)
        (folder / f"{sig}.seed").write_text(seed[0] + "\n")
    return str(path.relative_to(out))


def _quota(total: int, names: list[str]) -> dict[str, int]:
    from tests.fuzz import targets

    weights = {n: targets.TARGETS[n].weight for n in names}
    s = sum(weights.values())
    return {n: max(1, round(total * w / s)) for n, w in weights.items()}


def _write_stats(out: Path, start: float, per_worker: dict[int, Any], done: bool,
                 slow_seconds: float) -> dict[str, Any]:
    totals: dict[str, dict[str, float]] = {}
    sigs: dict[str, dict[str, Any]] = {}
    slow_all: list[dict[str, Any]] = []
    for counts, found, slow in per_worker.values():
        for name, c in counts.items():
            t = totals.setdefault(name, {"inputs": 0, "crashes": 0, "hangs": 0, "leaks": 0, "seconds": 0.0,
                                         "cpu": 0.0, "min_cpu": float("inf")})
            for k in t:
                t[k] = min(t[k], c[k]) if k == "min_cpu" else t[k] + c[k]
        slow_all += slow
        for key, f in found.items():
            if key in sigs:
                sigs[key]["count"] += f["count"]
            else:
                sigs[key] = dict(f)
    # slow: beyond the target's cheapest input (a subprocess's start-up; about 0 for in-process targets)
    slow_list = sorted((s for s in slow_all
                        if s["cpu_s"] - min(totals[s["target"]]["min_cpu"], s["cpu_s"]) > slow_seconds),
                       key=lambda s: -s["cpu_s"])
    stats = {
        "done": done, "elapsed_s": round(time.monotonic() - start, 1),
        "cpu_s": round(sum(t["cpu"] for t in totals.values()), 1),
        "inputs": int(sum(t["inputs"] for t in totals.values())),
        "crashes": int(sum(t["crashes"] for t in totals.values())),
        "hangs": int(sum(t["hangs"] for t in totals.values())),
        "leaks": int(sum(t["leaks"] for t in totals.values())),
        "distinct_signatures": len(sigs),
        "slow": len(slow_list), "slow_inputs": slow_list[:50],
        "targets": {n: {**{k: int(v) for k, v in t.items() if k not in ("seconds", "cpu", "min_cpu")},
                        "cpu_s": round(t["cpu"], 1),
                        "inputs_per_s": round(t["inputs"] / t["seconds"], 1) if t["seconds"] else None}
                    for n, t in sorted(totals.items())},
    }
    (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    (out / "signatures.json").write_text(json.dumps(sigs, indent=2, sort_keys=True) + "\n")
    return stats


def replay(path: Path) -> int:
    """Run one reproducer again and show what happens (its target is the folder it is in)."""
    from tests.fuzz import targets

    target = targets.TARGETS[path.parent.name]
    seed_name = path.with_suffix(".seed").read_text().strip()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["AD_DIFF_FUZZ_TMP"] = tmp
        start = time.monotonic()
        try:
            target.run((seed_name, b""), path.read_bytes(), Path(tmp))
        except BaseException:  # noqa: BLE001 - show it
            traceback.print_exc()
            print(f"{target.name}: crash after {time.monotonic() - start:.2f}s")  # noqa: T201
            return 1
    print(f"{target.name}: no crash ({time.monotonic() - start:.2f}s)")  # noqa: T201
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=int, default=1_000_000, help="inputs over all targets")
    ap.add_argument("--targets", default="", help="comma-separated target names (default: all)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "ad-diff-fuzz")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--hang-seconds", type=float, default=5.0, help="CPU seconds per input")
    ap.add_argument("--slow-seconds", type=float, default=5.0, help="CPU seconds that make an input slow")
    ap.add_argument("--cpu-seconds", type=float, default=0.0, help="stop after this much CPU (0: no limit)")
    ap.add_argument("--block-seconds", type=float, default=120.0, help="wall seconds per input")
    ap.add_argument("--memory-gib", type=float, default=4.0)
    ap.add_argument("--report-every", type=float, default=30.0)
    ap.add_argument("--tmp", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    ap.add_argument("--replay", type=Path, help="rerun one reproducer file and exit")
    args = ap.parse_args()
    if args.replay:
        return replay(args.replay)
    from tests.fuzz import targets

    names = [n for n in args.targets.split(",") if n] or list(targets.TARGETS)
    unknown = set(names) - set(targets.TARGETS)
    if unknown:
        ap.error(f"unknown targets: {', '.join(sorted(unknown))} (known: {', '.join(targets.TARGETS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    per = _quota(args.inputs // max(1, args.workers), names)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(args, w, per, queue)) for w in range(args.workers)]
    start = time.monotonic()
    for p in procs:
        p.start()
    per_worker: dict[int, Any] = {}
    finished = 0
    while finished < len(procs):
        try:
            wid, counts, found, slow, done = queue.get(timeout=args.report_every * 4)
        except Exception:  # noqa: BLE001 - queue.Empty: check the workers are alive
            if not any(p.is_alive() for p in procs):
                break
            continue
        per_worker[wid] = (counts, found, slow)
        finished += done
        stats = _write_stats(args.out, start, per_worker, False, args.slow_seconds)
        print(f"[{stats['elapsed_s']:>8.0f}s] inputs {stats['inputs']:,}  crashes {stats['crashes']:,}  "  # noqa: T201
              f"hangs {stats['hangs']:,}  leaks {stats['leaks']:,}  slow {stats['slow']:,}  "
              f"signatures {stats['distinct_signatures']}", flush=True)
    for p in procs:
        p.join()
    dead = [p.exitcode for p in procs if p.exitcode]
    stats = _write_stats(args.out, start, per_worker, True, args.slow_seconds)
    print(json.dumps(stats, indent=2))  # noqa: T201
    if dead:
        print(f"worker(s) died with exit codes {dead}", file=sys.stderr)  # noqa: T201
    return 1 if stats["crashes"] or stats["hangs"] or stats["leaks"] or dead else 0


if __name__ == "__main__":
    raise SystemExit(main())
