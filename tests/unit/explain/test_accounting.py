"""The accounting pass (docs/accounting.md), held to its promise on a real fixture pair.

Property: random harmless perturbations of the candidate (noise lines in the log, other timestamps and
timings, consistent FX counter renames in every dump, another dump folder path, other run folder names) never
produce a gating finding; one random substantive mutation (a transform's count, one node's op in one dump,
one tensor value, one transform config key, one rank's transform lines removed) always produces a gating
finding whose text names the mutated thing.

The pair: fixtures/scenarios/multi_rank's baseline (two ranks, graph dumps) on both sides, with the same AD
config (world size 2) and the same recorded tensors (within tolerance of each other) added to each.
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff.core.model import Finding
from ad_diff.explain.accounting.noise import NOISE_RULES
from ad_diff.gate import decide
from ad_diff.kinds.tensors.header import read_header
from ad_diff.pipeline import run
from ad_diff.settings import Settings
from tests.conftest import FIXTURES, ROOT

PAIR_LOG = FIXTURES / "scenarios/multi_rank/baseline"
CONFIG = FIXTURES / "scenarios/config_explained/baseline/config/default.yaml"
TENSORS = FIXTURES / "tensors/synthetic/within"
GRAPH_STAGES = ("post_export", "pattern_matcher", "post_load_fusion")


def _make_pair(root: Path, names: tuple[str, str] = ("baseline", "candidate")) -> tuple[Path, Path]:
    sides = []
    for name, src in zip(names, ("baseline", "candidate"), strict=True):
        side = root / name
        shutil.copytree(PAIR_LOG, side)
        (side / "config").mkdir()
        cfg = yaml.safe_load(CONFIG.read_text())
        cfg["world_size"] = 2
        (side / "config/default.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        shutil.copytree(TENSORS / src / "tensors", side / "tensors")
        sides.append(side)
    # a second run, not a copy of the first: the log's times are its own (a byte-identical log holding
    # timestamps and timings is ADI008, the candidate looks like a copy)
    _timestamps(sides[1], random.Random(1))
    return sides[0], sides[1]


def _gated(base: Path, cand: Path) -> list[Finding]:
    result = run(Settings(baseline=base, candidate=cand))
    return list(decide(result.findings, "error").gated)


def test_the_pair_passes(tmp_path: Path) -> None:
    base, cand = _make_pair(tmp_path)
    assert _gated(base, cand) == []


# --- harmless perturbations -------------------------------------------------------------------------------

_TS = re.compile(r"\[(\d{2})/(\d{2})/(\d{4})-(\d{2}):(\d{2}):(\d{2})\]")
_TIME = re.compile(r"(\d+)\.(\d{3})s\b")


def _noise_lines(cand: Path, rnd: random.Random) -> None:
    log = cand / "ad.log"
    lines = log.read_text().splitlines(keepends=True)
    for _ in range(rnd.randint(1, 6)):
        at = rnd.randrange(len(lines) + 1)
        text = rnd.choice(["UserWarning: something deprecated {n}", "Loading checkpoint shards: {n}%",
                           "[TensorRT-LLM][INFO] MPI size {n}", "   continuation {n}"])
        lines.insert(at, text.format(n=rnd.randint(0, 99)) + "\n")
    log.write_text("".join(lines))


def _timestamps(cand: Path, rnd: random.Random) -> None:
    log = cand / "ad.log"
    shift = rnd.randint(1, 9)
    text = _TS.sub(lambda m: f"[{m[1]}/{m[2]}/{m[3]}-{(int(m[4]) + shift) % 24:02d}:{m[5]}:{m[6]}]",
                   log.read_text())
    log.write_text(_TIME.sub(lambda m: f"{rnd.randint(0, 9)}.{rnd.randint(0, 999):03d}s", text))


def _fx_renames(cand: Path, rnd: random.Random) -> None:
    op = rnd.choice(["view", "transpose", "linear", "add", "mul", "sym_size_int"])
    name = re.compile(rf"(?<![\w.]){op}(_\d+)?(?![\w.])")
    for dump in (cand / "graphs").iterdir():
        dump.write_text(name.sub(lambda m: f"{op}_default{m[1] or ''}", dump.read_text()))


def _dump_folder(cand: Path, rnd: random.Random) -> None:
    log = cand / "ad.log"
    where = f"/scratch/job{rnd.randint(0, 9999)}/graphs"
    log.write_text(re.sub(r"(Graph dumping enabled to:) \S+", rf"\1 {where}", log.read_text()))


HARMLESS: dict[str, Callable[[Path, random.Random], None]] = {
    "noise lines": _noise_lines,
    "timestamps and timings": _timestamps,
    "FX counter renames": _fx_renames,
    "dump folder path": _dump_folder,
}


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kinds=st.lists(st.sampled_from(sorted(HARMLESS)), min_size=1, max_size=4, unique=True),
    seed=st.integers(0, 2**16),
    folders=st.tuples(st.sampled_from(["base", "run-a", "x"]), st.sampled_from(["cand", "run b", "y"])),
)
def test_harmless_perturbations_never_gate(kinds: list[str], seed: int, folders: tuple[str, str]) -> None:
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        base, cand = _make_pair(Path(tmp), folders)
        for k in kinds:
            HARMLESS[k](cand, rnd)
        gated = _gated(base, cand)
        assert gated == [], f"{kinds}: {[f.message for f in gated]}"


# --- substantive mutations --------------------------------------------------------------------------------

_SUMMARY = re.compile(r"\[RANK 0\] \[I\] \[stage=(\w+), transform=(\w+)\] \[SUMMARY\] matches=(\d+)")


def _count(cand: Path, rnd: random.Random) -> str:
    log = cand / "ad.log"
    text = log.read_text()
    dumped = {p.name.split("_", 1)[1].removesuffix(".txt") for p in (cand / "graphs").iterdir()}
    options = [m for m in _SUMMARY.finditer(text) if m[1] in GRAPH_STAGES and f"{m[1]}_{m[2]}" in dumped]
    m = rnd.choice(options)
    new = max(0, int(m[3]) + rnd.choice([-1, 1, 2])) if int(m[3]) else rnd.randint(1, 3)
    new = new if new != int(m[3]) else new + 1
    line = m[0].replace(f"matches={m[3]}", f"matches={new}")
    # the same transform on every rank: a changed count, not a rank disagreement
    log.write_text(text.replace(m[0], line).replace(m[0].replace("RANK 0", "RANK 1"),
                                                    line.replace("RANK 0", "RANK 1")))
    return m[2]


_CALL = re.compile(r"^%(\w+) = (aten\.\w+\.\w+)\(", re.M)


def _op(cand: Path, rnd: random.Random) -> str:
    dumps = sorted((cand / "graphs").iterdir())
    dump = rnd.choice(dumps[1:])  # after export: the first dump's input is the model
    text = dump.read_text()
    m = rnd.choice(list(_CALL.finditer(text)))
    dump.write_text(text[: m.start(2)] + "aten.mutated_op.default" + text[m.end(2):])
    return m[1]


def _tensor(cand: Path, rnd: random.Random) -> str:
    path = cand / "tensors/outputs.safetensors"
    _start, entries = read_header(path)
    name = rnd.choice(sorted(entries))
    dtype, _shape, begin, end = entries[name]
    at = begin + rnd.randrange((end - begin) // 4) * 4
    data = bytearray(path.read_bytes())
    data[at:at + 4] = b"\x7f\x7f\x7f\x7f"  # about 3e38 in BF16 and F32: far beyond any tolerance
    path.write_bytes(bytes(data))
    return name


def _config(cand: Path, rnd: random.Random) -> str:
    path = cand / "config/default.yaml"
    cfg = yaml.safe_load(path.read_text())
    t = rnd.choice(sorted(cfg["transforms"]))
    entry = cfg["transforms"][t]
    key = rnd.choice(["enabled", "stage", "an_option"])
    if key == "enabled":
        entry["enabled"] = not entry.get("enabled", True)
    elif key == "stage":
        entry["stage"] = "compile" if entry.get("stage") != "compile" else "sharding"
    else:
        entry["an_option"] = rnd.randint(1, 9)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return t


def _rank(cand: Path, rnd: random.Random) -> str:
    log = cand / "ad.log"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(ln for ln in lines if not ("[RANK 1]" in ln and "[stage=" in ln)))
    return "rank 1"


SUBSTANTIVE: dict[str, Callable[[Path, random.Random], str]] = {
    "count": _count,
    "op target": _op,
    "tensor value": _tensor,
    "config key": _config,
    "rank lines": _rank,
}


def _names(f: Finding, thing: str) -> bool:
    return thing in (f.transform, f.node, f.tensor) or re.search(rf"(?<![\w.]){re.escape(thing)}(?![\w])",
                                                                  f.message) is not None


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(sorted(SUBSTANTIVE)), seed=st.integers(0, 2**16))
def test_one_substantive_mutation_always_gates_and_is_named(kind: str, seed: int) -> None:
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        base, cand = _make_pair(Path(tmp))
        thing = SUBSTANTIVE[kind](cand, rnd)
        gated = _gated(base, cand)
        assert gated, f"{kind} ({thing}): nothing gates"
        assert any(_names(f, thing) for f in gated), f"{kind} ({thing}): {[f.message for f in gated]}"


@pytest.mark.parametrize("kind", sorted(SUBSTANTIVE))
def test_each_substantive_kind_once(tmp_path: Path, kind: str) -> None:
    """Every mutation kind at least once, whatever hypothesis draws."""
    base, cand = _make_pair(tmp_path)
    thing = SUBSTANTIVE[kind](cand, random.Random(7))
    gated = _gated(base, cand)
    assert any(_names(f, thing) for f in gated), f"{kind} ({thing}): {[f.message for f in gated]}"


def test_every_noise_rule_is_documented() -> None:
    doc = (ROOT / "docs/accounting.md").read_text()
    for rule in NOISE_RULES:
        row = f"| `{rule.name}` | `{rule.item.value}` |"
        assert row in doc, f"docs/accounting.md has no row for {rule.name}"
        assert rule.description in doc, f"docs/accounting.md describes {rule.name} otherwise than the code"
