"""Benchmark: parse speed of a large plain AutoDeploy log, for this checkout and (optionally) other ones.

Usage: python scripts/bench_log.py [--mb 200] [--repeat 5] [--code DIR ...]

Builds a plain (uncaptured, uncompressed) debug-level log of about ``--mb`` MB from a committed scenario log
(fixtures/scenarios/noisy_log/baseline/ad.log: AD result lines among other loggers' noise, multi-line reprs,
ANSI colours), its transform blocks copied under new transform names so the pipeline never restarts. Then
times ``ad_diff.kinds.log.parse.parse`` on it (CPU time of the parsing process, so other load on the machine
counts less than in wall time) in a fresh process per run, best of ``--repeat``, for each
``--code`` folder (a checkout holding ``ad_diff/``; default: this one), and prints seconds, MB/s and the
ratio to the first. Compare before/after a change with ``git archive <commit> ad_diff | tar -x -C /tmp/old``
and ``--code . --code /tmp/old``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures/scenarios/noisy_log/baseline/ad.log"
_NAME = re.compile(r"transform=(\w+)")

RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from ad_diff.kinds.log import parse
t = time.process_time()
log = parse.parse(Path(sys.argv[2]))
print(time.process_time() - t, len(log.transforms))
"""


def build(path: Path, mb: int) -> int:
    """Write the benchmark log; returns its size in bytes."""
    seed = SEED.read_text(encoding="utf-8")
    size = 0
    with path.open("w", encoding="utf-8") as f:
        k = 0
        while size < mb << 20:
            block = _NAME.sub(lambda m: f"transform={m.group(1)}_{k}", seed)  # noqa: B023 - used at once
            f.write(block)
            size += len(block.encode())
            k += 1
    return size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--code", action="append", type=Path,
                    help="checkout to time (repeatable; default: this one)")
    args = ap.parse_args(argv)
    codes = args.code or [ROOT]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ad.log"
        size = build(log, args.mb)
        print(f"log: {size / 1e6:.0f} MB, {sum(1 for _ in log.open('rb'))} lines")  # noqa: T201
        times: dict[Path, list[float]] = {c: [] for c in codes}
        found: dict[Path, str] = {}
        for _ in range(args.repeat):  # interleaved, so a busy machine slows every checkout alike
            for code in codes:
                out = subprocess.run([sys.executable, "-c", RUN, str(code.resolve()), str(log)],
                                     capture_output=True, text=True, check=True).stdout.split()
                times[code].append(float(out[0]))
                found[code] = out[1]
        first = min(times[codes[0]])
        for code in codes:
            best = min(times[code])
            print(f"{code}: best {best:.3f}s CPU of {args.repeat} ({size / 1e6 / best:.0f} MB/s), "  # noqa: T201
                  f"{found[code]} transforms, ratio {best / first:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
