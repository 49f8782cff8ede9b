"""Graph dump parser: golden pairs, round-trip through render, invalid inputs with file:line messages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.discover.dumps import read_header
from ad_diff.errors import InputError
from ad_diff.kinds.graph.linememo import LineMemo
from ad_diff.kinds.graph.parse import _split_args, as_dict, parse, parse_text
from ad_diff.kinds.graph.render import render
from scripts.synth_dumps import Spec, build

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
    with pytest.raises(InputError, match="missing.txt: does not exist; expected a graph dump"):
        parse(tmp_path / "missing.txt")


# ------------------------------------------------------------------------------------------ line memo


def _bodies() -> list[tuple[str, str]]:
    """A run-like sequence of (name, text): a graph, the same graph with lines moved (an unfused layer adds
    lines up front), renamed counters, and the parser fixtures (D1, D2, D3 mixed)."""
    out = [(f"synth{k}", build(spec)) for k, spec in enumerate([
        Spec(layers=3, fused_norm=False), Spec(layers=3, unfused_layers=(0,)), Spec(layers=3),
        Spec(layers=3, counter_offset=2), Spec(layers=3, norm_meta=False), Spec(layers=3, rope_fused=True)])]
    return out + [(c, (DIR / f"{c}.txt").read_text(encoding="utf-8")) for c in CASES]


def test_memo_parse_equals_a_fresh_parse() -> None:
    memo = LineMemo()
    for _ in range(2):  # the second round finds every line in the memo
        for name, text in _bodies():
            assert parse_text(text, Path(name), memo) == parse_text(text, Path(name)), name


def _ssa(text: str) -> list[str]:
    return [x for x in text.split("\n") if x.startswith(("%", "output"))]


def test_memo_reuses_nodes_wherever_the_line_moved() -> None:
    memo = LineMemo()
    ta, tb = build(Spec(layers=3)), build(Spec(layers=3, unfused_layers=(1,)))
    sa = parse_text(ta, Path("a"), memo).sections[0]
    sb = parse_text(tb, Path("b"), memo).sections[0]
    node_a = dict(zip(_ssa(ta), zip(sa.nodes, sa.lines, strict=True), strict=True))
    same = moved = 0
    for ln, n, line in zip(_ssa(tb), sb.nodes, sb.lines, strict=True):
        old = node_a.get(ln)
        if old is None:
            continue
        assert n is old[0]  # one node object per line text, wherever it sits
        if old[1] == line:
            same += 1
        else:
            moved += 1
    assert same > 10, same  # lines before layer 1 stay put
    assert moved > 10, moved  # later ones move
    fresh = parse_text(tb, Path("b")).sections[0]
    assert sb == fresh
    # the line numbers are the file's: every node's line holds its text
    lines_b = tb.split("\n")
    assert all(lines_b[k - 1].startswith(("%" + n.name + " ", "output")) for n, k in zip(sb.nodes, sb.lines,
                                                                                          strict=True))


def test_memo_keeps_grammars_apart() -> None:
    """``%x : torch.float32`` is a D1 placeholder but no D2 line: each grammar has its own memo."""
    memo = LineMemo()
    d1 = ("# Transform: t\n# Stage: s\n\n%x : torch.float32\n"
          "%y = aten.relu.default(%x) : torch.float32\noutput %y\n")
    assert parse_text(d1, Path("d1"), memo).fmt == "D1"
    d2 = ("# Transform: t\n# Stage: s\n\n%x : 2x3 : torch.float32\n"
          "%y = aten.relu.default(%x : 2x3 : torch.float32) : 2x3 : torch.float32\noutput %y\n")
    assert parse_text(d2, Path("d2"), memo) == parse_text(d2, Path("d2"))
    bad = d2 + "%z : torch.float32\n"  # a D1 line inside a D2 body, after the memo has seen it as D1
    with pytest.raises(InputError, match=r"d2x:7.*'<shape> : <dtype>'"):
        parse_text(bad, Path("d2x"), memo)


def test_memo_after_a_failed_body() -> None:
    memo = LineMemo()
    good = build(Spec(layers=2))
    lines = good.split("\n")
    broken = "\n".join(lines[:20] + ["%bad line here"] + lines[20:])
    with pytest.raises(InputError, match=r"broken:21"):
        parse_text(broken, Path("broken"), memo)
    with pytest.raises(InputError, match=r"broken:21"):  # the same message with a warm memo
        parse_text(broken, Path("broken"), memo)
    assert parse_text(good, Path("good"), memo) == parse_text(good, Path("good"))


def test_memo_stays_bounded() -> None:
    memo = LineMemo()
    sizes = []
    for k in range(12):
        parse_text(build(Spec(layers=2, counter_offset=100 * k)), Path(f"{k}"), memo)  # every line new
        sizes.append(len(memo))
    one = len(build(Spec(layers=2)).split("\n"))
    assert max(sizes) <= 2 * one, sizes  # the last two bodies' lines, not all twelve


def _split_reference(text: str) -> list[str] | str:
    """The character loop ``_split_args`` replaced (differential oracle: same pieces, same errors)."""
    if "(" not in text and "[" not in text and "{" not in text:
        return text.split(", ")
    out, start, stack = [], 0, []
    for i, ch in enumerate(text):
        if ch in "([{":
            stack.append({"(": ")", "[": "]", "{": "}"}[ch])
        elif ch in ")]}":
            if not stack or stack.pop() != ch:
                return f"unbalanced '{ch}'"
        elif ch == "," and not stack and text.startswith(", ", i):
            out.append(text[start:i])
            start = i + 2
    if stack:
        return "unbalanced brackets"
    out.append(text[start:])
    return out


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="()[]{}, a%", max_size=24))
def test_split_args_matches_the_character_loop(text: str) -> None:
    want = _split_reference(text)
    if isinstance(want, str):
        with pytest.raises(InputError, match=re.escape(want)):
            _split_args(text, 1, Path("x"))
    else:
        assert _split_args(text, 1, Path("x")) == want, text


def test_memo_keys_lines_with_lone_surrogates() -> None:
    """Text from a file is valid UTF-8, but a caller may pass any str: a lone surrogate in a literal still
    gets a key of its own (not the key of the line without it) and parses as a fresh parse does."""
    from ad_diff.kinds.graph.linememo import line_keys

    base = ("# Transform: t\n# Stage: s\n\n%x : 2x3 : torch.float32\n"
            "%y = aten.relu.default(%x : 2x3 : torch.float32, {lit}) : 2x3 : torch.float32\noutput %y\n")
    odd, plain = base.format(lit="'\ud800'"), base.format(lit="'?'")
    keys = line_keys(odd.split("\n"))
    assert len(set(keys)) == len(set(odd.split("\n")))
    assert keys != line_keys(plain.split("\n"))
    memo = LineMemo()
    assert parse_text(plain, Path("plain"), memo) == parse_text(plain, Path("plain"))
    got = parse_text(odd, Path("odd"), memo)
    assert got == parse_text(odd, Path("odd"))
    assert got.sections[0].nodes[1].args[1].text == "'\ud800'"


@pytest.mark.parametrize("width", [4000, 4083, 4084, 4096, 9000])
def test_header_lines_longer_than_the_first_block(tmp_path: Path, width: int) -> None:
    """read_header reads a first block and more only when the two lines are not in it."""
    p = tmp_path / "001_x.txt"
    key = "k" * width
    p.write_text(f"# Transform: {key}\n# Stage: post_export\n%x : 2 : torch.float32\n", encoding="utf-8")
    assert read_header(p) == (key, "post_export")
