"""Graph dump parser: golden pairs, round-trip through render, invalid inputs with file:line messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ad_diff.errors import InputError
from ad_diff.kinds.graph.parse import as_dict, parse, parse_text, read_header, render

DIR = Path(__file__).resolve().parents[4] / "fixtures" / "parsers" / "dump"
CASES = sorted(p.stem for p in DIR.glob("*.txt"))


def test_cases_found() -> None:
    assert len(CASES) >= 5, DIR


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    """The parse equals the reviewed golden (written only by scripts/update_golden.py, never by a test)."""
    got = as_dict(parse(DIR / f"{case}.txt"))
    assert got == json.loads((DIR / f"{case}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES)
def test_render_round_trips_byte_for_byte(case: str) -> None:
    path = DIR / f"{case}.txt"
    dump = parse(path)
    text = render(dump)
    assert text == path.read_text(encoding="utf-8")
    assert parse_text(text, path) == dump


def test_formats_detected() -> None:
    assert parse(DIR / "d1_sample.txt").fmt == "D1"
    assert parse(DIR / "d2_root_only.txt").fmt == "D2"
    multi = parse(DIR / "d3_multi_section.txt")
    assert multi.fmt == "D3"
    assert [s.name for s in multi.sections] == ["(root)", "submod_0"]


def test_stage_comes_from_header_not_file_name(tmp_path: Path) -> None:
    p = tmp_path / "007_export_onnx_some_key.txt"
    p.write_text("# Transform: some_key\n# Stage: post_export\n\noutput\n", encoding="utf-8")
    d = parse(p)
    assert (d.stage, d.transform, d.counter) == ("post_export", "some_key", 7)
    assert read_header(p) == ("some_key", "post_export")


def test_symbolic_shapes_and_python_targets() -> None:
    nodes = {n.name: n for n in parse(DIR / "d2_root_only.txt").sections[0].nodes}
    assert nodes["max_1"].meta.shape == "Max(1, s0)xs44*s70"
    assert nodes["add"].args[1].meta.shape == "s0 + 1x2048"
    assert nodes["fn"].target == "<function my_helper at 0x7f3a2c1d9e40>"
    assert not nodes["fn"].meta.known
    assert nodes["getitem"].target == "<built-in function getitem>"
    assert nodes["all_reduce"].meta.dtype == "(torch.float32, None)"
    assert nodes["all_reduce"].inputs() == ["fn", "SUM"]
    assert nodes["view"].inputs() == ["model_embed_tokens_weight", "sym_size_int"]
    assert [a.text for a in nodes["output"].args] == ["amax", "getitem", "None"]


INVALID = {
    "header_swapped": ":1: expected '# Transform:",
    "garbage_line": ":5: expected an SSA line",
    "unbalanced": ":5: unbalanced brackets",
    "d1_with_shape": ":5: expected '<target>(<args>) : <dtype>'",
    "section_count": ":3: header declares 2 GraphModules but 1 sections",
    "missing_paren": ":5: expected '<target>(<args>) : <shape> : <dtype>'",
    "bad_name": ":4: expected '%<identifier>'",
    "bad_arg_meta": ":5: expected '%<name> : <shape> : <dtype>' argument",
}


def test_every_invalid_fixture_has_an_expectation() -> None:
    assert sorted(p.stem for p in (DIR / "invalid").glob("*.txt")) == sorted(INVALID)


@pytest.mark.parametrize(("case", "message"), sorted(INVALID.items()))
def test_invalid(case: str, message: str) -> None:
    path = DIR / "invalid" / f"{case}.txt"
    with pytest.raises(InputError) as e:
        parse(path)
    assert message in str(e.value)
    assert str(e.value).startswith(str(path))


def test_empty_and_unreadable(tmp_path: Path) -> None:
    empty = tmp_path / "001_x_y.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="graph dump is empty"):
        parse(empty)
    with pytest.raises(InputError, match="cannot read"):
        parse(tmp_path / "missing.txt")
