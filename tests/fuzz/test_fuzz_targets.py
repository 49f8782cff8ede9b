"""The short CI profile of every fuzz target in tests/fuzz/targets.py: mutated safetensors headers, .pt
files, AD configs (layers, cli_args.txt, order files), ad-diff's own config, expected changes, snapshots
and whole run folders (in-process, and a sample through the real command line) end in a result or an
AdDiffError, never another exception. The log and dump parsers have their own files (test_fuzz_log.py,
test_fuzz_dump.py).

The long run is ``python scripts/fuzz_long.py`` (docs/bad-input.md, Fuzzing); ``AD_DIFF_FUZZ_EXAMPLES=N``
runs N examples per target here.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import mutate, targets

PROFILE = {"safetensors_header": 40, "pt": 15, "ad_config": 25, "settings": 40, "expected_changes": 25,
           "snapshot": 15, "cli": 6, "sinks": 6, "history": 6,
           "candidates": 10, "json_reader": 40, "escapers": 40}


@cache
def _seeds(name: str) -> tuple[targets.Seed, ...]:
    seeds = tuple(targets.TARGETS[name].seeds())
    assert seeds, f"target {name} has no seed files"
    return seeds


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_every_target_has_a_ci_profile_or_its_own_file() -> None:
    assert set(targets.TARGETS) == set(PROFILE) | {"log", "dump", "cli_subprocess"}


@pytest.mark.parametrize("name", sorted(PROFILE))
def test_target_never_crashes(name: str, scratch: Path) -> None:
    target = targets.TARGETS[name]
    seeds = _seeds(name)

    @settings(max_examples=mutate.examples(PROFILE[name]), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        seed = seeds[data.draw(st.integers(0, len(seeds) - 1), label="seed")]
        raw = data.draw(mutate.mutated([seed[1]], target.tokens, max_ops=8, max_insert=40), label="bytes")
        work = scratch / name
        work.mkdir(exist_ok=True)
        target.run(seed, raw, work)

    prop()


@pytest.mark.parametrize("seed_index", [5])
def test_command_line_on_a_mutated_run_folder(seed_index: int, tmp_path: Path) -> None:
    """A fixed mutation through the real entry point (a subprocess): exit 0/1/2, no traceback."""
    import random

    seeds = _seeds("cli_subprocess")
    seed = seeds[seed_index % len(seeds)]
    rng = random.Random(seed_index)
    data = mutate.mutate_bytes(rng, seed[1], targets.TARGETS["cli_subprocess"].tokens, max_ops=6)
    targets.run_cli_subprocess(seed, data, tmp_path)
