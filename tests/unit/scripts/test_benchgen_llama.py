"""The Llama pair generator at 2 layers: deterministic, well-formed dumps and log, the injected loss exactly
where it was injected, logits readable as bf16. (Sizes and speed are the benchmark's business, not these
tests'.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ad_diff.kinds.graph.parse import parse as parse_dump
from ad_diff.kinds.tensors.find import read_index
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from benchgen import safetensors_np  # noqa: E402
from benchgen.keys import AD_KEYS  # noqa: E402
from benchgen.llama import LOGITS_SHAPE, make_llama_pair  # noqa: E402

LAYERS = 2
SUMMARY = re.compile(r"\[stage=(\w+), transform=(\w+)\] \[SUMMARY\] (?:matches=(\d+)|(skipped)|(disabled))")
DEF = re.compile(r"^%(\w+) (?:=|:)")
REF = re.compile(r"%(\w+) : ")


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("llama")
    return out, make_llama_pair(out, LAYERS, seed=3)


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def _summaries(run: Path) -> dict[str, str]:
    out = {}
    for m in SUMMARY.finditer((run / "ad.log").read_text()):
        out[m.group(2)] = m.group(3) or m.group(4) or m.group(5)
    return out


def test_same_seed_same_bytes_other_seed_other_logits(pair: tuple[Path, dict], tmp_path: Path) -> None:
    out, _ = pair
    make_llama_pair(tmp_path / "again", LAYERS, seed=3)
    for side in ("baseline", "candidate"):
        assert _files(out / side) == _files(tmp_path / "again" / side)
    make_llama_pair(tmp_path / "other", LAYERS, seed=4)
    a, b = _files(out / "baseline"), _files(tmp_path / "other" / "baseline")
    assert a["tensors/outputs.safetensors"] != b["tensors/outputs.safetensors"]
    assert {k: v for k, v in a.items() if k.startswith("graphs/")} == {
        k: v for k, v in b.items() if k.startswith("graphs/")
    }


def test_one_dump_per_configured_transform_but_build_model(pair: tuple[Path, dict]) -> None:
    out, info = pair
    names = sorted(p.name for p in (out / "baseline" / "graphs").iterdir())
    expected = [f"{i:03d}_{s}_{k}.txt" for i, (s, k, _) in enumerate(AD_KEYS[1:], start=1)]
    assert names == expected
    assert len(names) == 92 == info["baseline"]["files"]
    logged = _summaries(out / "baseline")
    assert list(logged) == [k for _, k, _ in AD_KEYS]
    assert all(logged[k] == "disabled" for _, k, enabled in AD_KEYS if not enabled)


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_dumps_are_ssa_with_fx_names(pair: tuple[Path, dict], side: str) -> None:
    out, _ = pair
    bodies = {}
    for p in sorted((out / side / "graphs").iterdir()):
        bodies.setdefault(p.read_text().split("\n", 2)[2], p)
    assert len(bodies) == 17  # the distinct graph states of the pipeline
    for body, path in bodies.items():
        defined: set[str] = set()
        for line in body.splitlines():
            m = DEF.match(line)
            if m is None:
                continue
            refs = set(REF.findall(line.split(" = ", 1)[1])) if " = " in line else set()
            unknown = {
                r for r in refs - defined if not r.endswith("_weight") and r != "model_rotary_emb_inv_freq"
            }
            assert not unknown, f"{path.name}: {line[:80]} uses {unknown} before it is defined"
            assert m.group(1) not in defined, f"{path.name}: {m.group(1)} defined twice"
            defined.add(m.group(1))
        dump = parse_dump(path)  # ad-diff's own parser reads every distinct state
        assert dump.fmt == "D3"
        assert dump.node_count == len(defined) + 1


def test_graph_changes_where_the_log_counts_matches(pair: tuple[Path, dict]) -> None:
    out, _ = pair
    files = sorted((out / "baseline" / "graphs").iterdir())
    logged = _summaries(out / "baseline")
    bodies = [p.read_text().split("\n", 2)[2] for p in files]
    changed = {files[i].name.split("_", 1)[1] for i in range(1, len(files)) if bodies[i] != bodies[i - 1]}
    counted = {f"{s}_{k}.txt" for s, k, _ in AD_KEYS[2:] if logged[k] not in ("0", "skipped", "disabled")}
    # initialize_cache counts caches, not graph rewrites, as in AD; every other count changes the graph
    assert counted - changed == {"cache_init_initialize_cache.txt"}
    assert changed <= counted
    L = LAYERS
    assert {k: int(logged[k]) for k in ("match_repeat_kv", "match_rope_pattern", "match_rmsnorm_pattern",
                                        "eliminate_redundant_transposes", "fuse_rmsnorm")} == {
        "match_repeat_kv": 2 * L, "match_rope_pattern": L, "match_rmsnorm_pattern": 2 * L + 1,
        "eliminate_redundant_transposes": 6 * L, "fuse_rmsnorm": 2 * L + 1,
    }  # fmt: skip


def test_candidate_differs_only_from_the_lost_match_on(pair: tuple[Path, dict]) -> None:
    out, info = pair
    assert info["lost_at"] == "match_rmsnorm_pattern"
    base, cand = _summaries(out / "baseline"), _summaries(out / "candidate")
    assert {k for k in base if base[k] != cand[k]} == {"match_rmsnorm_pattern", "fuse_rmsnorm"}
    assert int(cand["match_rmsnorm_pattern"]) == int(base["match_rmsnorm_pattern"]) - 1
    first = next(
        p.name
        for p in sorted((out / "baseline" / "graphs").iterdir())
        if p.read_bytes() != (out / "candidate" / "graphs" / p.name).read_bytes()
    )
    assert first.endswith("_match_rmsnorm_pattern.txt")


@pytest.mark.parametrize(
    ("loss", "transform"), [("rope", "match_rope_pattern"), ("swiglu", "match_swiglu_pattern")]
)
def test_other_losses_lower_their_transform(tmp_path: Path, loss: str, transform: str) -> None:
    info = make_llama_pair(tmp_path, LAYERS, loss=loss, tensors=False)
    base, cand = _summaries(tmp_path / "baseline"), _summaries(tmp_path / "candidate")
    assert info["lost_at"] == transform
    assert int(cand[transform]) == int(base[transform]) - 1
    assert not (tmp_path / "baseline" / "tensors").exists()


def test_no_loss_gives_identical_graphs(tmp_path: Path) -> None:
    make_llama_pair(tmp_path, LAYERS, loss=None)
    b, c = _files(tmp_path / "baseline"), _files(tmp_path / "candidate")
    assert {k: v for k, v in b.items() if k.startswith("graphs/")} == {
        k: v for k, v in c.items() if k.startswith("graphs/")
    }


def test_logits_are_2kib_of_bf16_close_to_the_baseline(pair: tuple[Path, dict]) -> None:
    out, _ = pair
    recs = {s: read_index(out / s / "tensors" / "outputs.safetensors") for s in ("baseline", "candidate")}
    for side, (rec,) in recs.items():
        assert (rec.name, rec.dtype, rec.shape) == ("logits", "BF16", LOGITS_SHAPE), side
    vals = []
    for side, (rec,) in recs.items():
        raw = (out / side / "tensors" / "outputs.safetensors").read_bytes()
        assert rec.data_offset is not None
        bits = np.frombuffer(raw[rec.data_offset : rec.data_offset + 2048], dtype="<u2")
        vals.append(safetensors_np.bf16_to_f32(bits).astype(np.float64))
    base, cand = vals
    assert len(base) == 1024
    assert np.isfinite(base).all()
    assert 0 < np.abs(base - cand).max() <= 0.02 * np.abs(base).max()  # rounding-level noise, not equality
    ids = read_index(out / "baseline" / "tensors" / "inputs.safetensors")
    assert [(r.name, r.dtype, r.shape) for r in ids] == [("input_ids", "I64", LOGITS_SHAPE[:2])]


def test_bf16_rounds_to_nearest_even() -> None:
    x = np.array([1.0, -2.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.0e38], dtype=np.float32)
    bits = safetensors_np.bf16_bits(x)
    assert bits.tolist() == [0x3F80, 0xC000, 0x3F80, 0x3F82, 0x7F62]  # ties go to the even mantissa
    assert safetensors_np.bf16_to_f32(bits)[:2].tolist() == [1.0, -2.0]
