"""Sharding transforms of the fixture pipeline, after AD's ``detect_sharding`` (``transform/library/sharding.py``).

The fixture runs on one device: ``detect_sharding`` logs why it shards nothing, from its own code (so the
line carries whatever context the interface version adds to a transform's own lines), and matches 0.
"""

from __future__ import annotations

from torch import fx

from .events import say


def detect_sharding(gm: fx.GraphModule, k: object) -> int:
    """One device: nothing to shard."""
    say("Skipping sharding for single device")
    return 0
