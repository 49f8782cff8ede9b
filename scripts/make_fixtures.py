"""Regenerate ad-diff's fixture tree deterministically (byte-identical on every run).

    python scripts/make_fixtures.py                       # -> fixtures/
    python scripts/make_fixtures.py --out /tmp/fx --only identical --only partial_loss
    python scripts/make_fixtures.py --large /tmp/bench    # benchmark-size pair (not committed)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixturegen.generate import generate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "fixtures")
    ap.add_argument("--only", action="append", help="scenario name (repeatable); 'unfused' = the single run")
    ap.add_argument("--large", type=Path, help="write a large synthetic pair here instead (benchmark)")
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--transforms", type=int, default=90)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.large:
        from fixturegen.large import make_large_pair

        stats = make_large_pair(args.large, layers=args.layers, transforms=args.transforms)
        print(f"large pair in {args.large}: {stats}")
    else:
        names = generate(args.out, args.only)
        print(f"wrote {len(names)} scenario(s) to {args.out}: {', '.join(names)}")
    print(f"done in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
