"""A log-line normaliser skips its pattern when the line lacks a substring every match holds; the guarded
rule must rewrite every text exactly as the bare pattern would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ad_diff.explain.accounting import noise

RULES = {r.name: r for r in noise.NOISE_RULES}
BARE = {
    "timestamps": (noise._TIMESTAMP, "<ts>"),
    "timings": (noise._TIMING, "<t>"),
    "memory-figures": (noise._MEMORY, "<mem>"),
    "dump-folder-path": (noise._DUMP_DIR, r"\1 <dir>"),
}
PIECES = st.sampled_from([
    "0", "12", "2026-02-10", "T", " ", "11:02:15", "02/10/2026-11:02:15", ".5", "ms", "s", "sec", "GB", "MiB",
    "B", "K", "+", "-", "\x1b[32m", "\x1b", "[", "Graph dumping enabled to:", "AD_DUMP_GRAPHS_DIR", "=",
    "/tmp/d", "time: 0.055s", "alloc: 12.40GB (+1.20GB)", "x", ":", "Z", "e-3",
    # what decides a word boundary next to a digit: the timestamp and timing rules run patterns rewritten to
    # begin with a digit (noise._TIMESTAMP_FAST, _TIMING_FAST) and must match exactly where their spec does
    "_", "a", "é", "\u0663", "\x1c", "\t", "1s", "12:30:45", "2026-02-10T11:02:15.5+01:00", "seconds", "m",
])
LINES = st.lists(PIECES, max_size=12).map("".join) | st.text(max_size=80)


@pytest.mark.parametrize("name", sorted(BARE))
@given(text=LINES)
@example(text="[02/10/2026-11:02:15] Graph dumping enabled to: /tmp/x \x1b[0m alloc: 1.2GB time: 3ms")
@example(text="x12:30:45 _1s é12:30:45 a2026-02-10T11:02:15Z 3\x1cms \u066312:30:45 1e-3 seconds")
@example(text="took 3 ms")  # a unit after a space, and no digit right before any m or s
@example(text="0.5\x1cs")
def test_a_guarded_normaliser_equals_its_pattern(name: str, text: str) -> None:
    pattern, repl = BARE[name]
    normalise = RULES[name].normalise
    assert normalise is not None
    assert normalise(text, Path("/nonexistent-run")) == re.sub(pattern, repl, text)
