"""A run's dumps must show the model its own config builds (ADG016): the decoder layers their weights name,
and the embedding's vocabulary and hidden size in a dump before sharding. Dumps left over from another
model's run gate; dumps that agree, or a config that says nothing, do not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ad_diff.kinds.graph.identity import layers_of, sizes_of
from ad_diff.kinds.graph.parse import parse as parse_dump

FIX = Path(__file__).resolve().parents[4] / "fixtures" / "scenarios"
SHOWN = {"num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 128}
"""What the identical scenario's dumps show: two layers, an embedding of 128 x 64."""


def _pair(tmp_path: Path, base_kwargs: dict[str, int], cand_kwargs: dict[str, int]) -> tuple[Path, Path]:
    out = []
    config = (FIX / "config_explained" / "baseline" / "config" / "default.yaml").read_text()
    for name, kwargs in (("baseline", base_kwargs), ("candidate", cand_kwargs)):
        run = tmp_path / name
        shutil.copytree(FIX / "identical" / name, run)
        (run / "config").mkdir(exist_ok=True)
        extra = "".join(f"  {k}: {v}\n" for k, v in kwargs.items())
        (run / "config" / "default.yaml").write_text(config + ("model_kwargs:\n" + extra if kwargs else ""))
        out.append(run)
    return out[0], out[1]


def _compare(base: Path, cand: Path, tmp_path: Path) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    report = tmp_path / "r.json"
    args = [sys.executable, "-m", "ad_diff", "compare", str(base), str(cand), "--json", str(report)]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    assert report.is_file(), proc.stderr
    return proc.returncode, json.loads(report.read_text())["findings"]


def test_the_dumps_show_the_layers_and_the_embedding() -> None:
    first = sorted((FIX / "identical" / "baseline" / "graphs").glob("*.txt"))[0]
    dump = parse_dump(first)
    assert layers_of(dump) == 2
    assert sizes_of(dump) == {"vocab_size": 128, "hidden_size": 64}


def test_a_config_that_agrees_with_the_dumps_passes(tmp_path: Path) -> None:
    code, findings = _compare(*_pair(tmp_path, SHOWN, SHOWN), tmp_path)
    assert (code, [f["code"] for f in findings]) == (0, [])


@pytest.mark.parametrize(("key", "value"), [("num_hidden_layers", 4), ("hidden_size", 4096),
                                            ("vocab_size", 32000)])
def test_dumps_of_another_model_gate_and_name_the_size(tmp_path: Path, key: str, value: int) -> None:
    code, findings = _compare(*_pair(tmp_path, SHOWN, {**SHOWN, key: value}), tmp_path)
    mismatch = [f for f in findings if f["code"] == "ADG016"]
    assert code == 1
    assert len(mismatch) == 1
    assert f"model_kwargs.{key}" in mismatch[0]["message"]
    assert f"builds {value}" in mismatch[0]["message"]
    assert "candidate" in mismatch[0]["message"]


def test_a_config_that_says_nothing_is_not_judged(tmp_path: Path) -> None:
    code, findings = _compare(*_pair(tmp_path, {}, {}), tmp_path)
    assert (code, [f["code"] for f in findings]) == (0, [])


@pytest.mark.parametrize("dim", ["\u00b2", "\u0663", "9" * 4400, "1" * 10])
def test_an_embedding_size_that_is_no_number_is_not_read(tmp_path: Path, dim: str) -> None:
    """A dump's shape is input: a superscript or other Unicode digit (``str.isdigit`` says yes, ``int``
    refuses ``²``), thousands of digits, or more digits than a vocabulary has are no size; never a crash."""
    first = sorted((FIX / "identical" / "baseline" / "graphs").glob("*.txt"))[0]
    text = first.read_text().replace("128x64", f"{dim}x64")
    assert f"{dim}x64" in text
    path = tmp_path / first.name
    path.write_text(text)
    assert sizes_of(parse_dump(path)) == {}
