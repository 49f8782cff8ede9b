"""Pause Python's cyclic garbage collector around allocation-heavy, cycle-free work.

Parsing and aligning a 50k-node dump allocates hundreds of thousands of small objects and no reference cycles;
the collector's repeated generation scans over them cost more than the work itself (measured: about 2x on
alignment). The previous state is restored on exit, so callers that disabled GC themselves are unaffected.

``pipeline.run`` holds it for a whole comparison (``compare``, ``batch``'s workers, ``note``): at 160 Llama
layers the collector otherwise takes a third of the CPU time (docs/benchmark.md); the parser and the
aligner hold it too, for callers that use them directly. Usable as ``with paused_gc():`` or as the
decorator ``@paused_gc()``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic GC inside the block, restoring its previous state afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
