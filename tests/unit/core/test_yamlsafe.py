"""The bounded YAML/JSON loaders (ad_diff.core.yamlsafe): each limit refuses with file and line, plain
documents load exactly as ``yaml.safe_load`` loads them."""

from __future__ import annotations

import resource

import pytest
import yaml

from ad_diff.core.yamlsafe import MAX_DEPTH, key_lines, load_json, load_yaml, load_yaml_node
from ad_diff.errors import InputError

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def _refused(text: str, path: str = "c.yaml") -> InputError:
    with pytest.raises(InputError) as e:
        load_yaml(text, path)
    assert str(e.value).startswith(f"{path}:")
    return e.value


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (LAUGHS, 6, "aliases expand the document beyond 100,000 extra nodes"),
        ("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), 1, f"nested more than {MAX_DEPTH} levels"),
        ("a: &a [1, *a]\n", 1, "refers to a node that contains it"),
        ("expected:\n  - a: 1\nexpected: []\n", 3, "duplicate key 'expected' (first at line 1)"),
        ("{a: 1, a: 2}\n", 1, "duplicate key 'a'"),
        ("1: x\n", 1, "expected a string as mapping key, got int '1'"),
        ("transforms:\n  ~: {enabled: true}\n", 2, "got null"),
        ("? !!binary aGVsbG8=\n: x\n", 1, "got binary"),
        ("? [a, b]\n: x\n", 1, "got a list"),
        ("a: !!binary aGVsbG8=\n", 1, "unsupported YAML tag !!binary"),
        ("a: !!set {x}\n", 1, "unsupported YAML tag !!set"),
        ("a: !!python/object/apply:os.system ['true']\n", 1, "unsupported YAML tag !!python/object/apply"),
        ("a: " + "9" * 4301 + "\n", 1, "integer of 4,301 digits is too long"),
        ("a: " + ":".join(["59"] * 2500) + "\n", 1, "digits is too long"),
        ("a: [1, 2\nb: 3\n", 2, "invalid YAML"),
    ],
)
def test_limits_refuse_with_line(text: str, line: int, message: str) -> None:
    e = _refused(text)
    assert e.line == line
    assert message in e.detail


def test_alias_depth_counts_where_the_alias_is_used() -> None:
    half = MAX_DEPTH // 2 + 2
    text = f"a: &deep {'[' * half}1{']' * half}\nb: {'[' * half}*deep{']' * half}\n"
    assert "levels deep (through aliases)" in _refused(text).detail


def test_alias_bomb_is_refused_quickly_and_in_little_memory() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _refused(LAUGHS)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: nothing expanded


@pytest.mark.parametrize("text", [
    "transforms:\n  fuse_gemms: {stage: post_load_fusion, enabled: false}\nworld_size: 2\n",
    "base: &b {x: 1, y: [1, 2]}\nc:\n  <<: *b\n  y: 3\nd: *b\n",
    "a: 1.5\nb: .inf\nc: null\nd: 'quoted: yes'\ne: yes\nf: 0x1f\n",
    "",
    "# only a comment\n",
])
def test_plain_documents_load_like_safe_load(text: str) -> None:
    assert load_yaml(text, "c.yaml") == yaml.safe_load(text)


def test_timestamps_stay_text() -> None:
    assert load_yaml("day: 2024-01-01\n", "c.yaml") == {"day": "2024-01-01"}


def test_key_lines_follow_merge_keys_and_later_keys_win() -> None:
    data, node = load_yaml_node("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n", "c.yaml")
    assert data["c"] == {"x": 1, "y": 3}
    lines = key_lines(node)
    assert lines[("c", "y")] == 4  # the key written in c, not the merged one
    assert lines[("c", "x")] == 1
    assert ("c", "<<") not in lines


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("[" * 100_000, r"nested 100,000 levels deep \(the cap is 64\)"),
        ("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2), "nested 66 levels deep"),
        ('{"a": ' + "1" * 5000 + "}", "integer of 5,000 digits"),
        ('{"a": 1,\n "b": }', "invalid JSON"),
    ],
)
def test_json_limits(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as e:
        load_json(text, "c.json")
    assert str(e.value).startswith("c.json")


def test_json_plain() -> None:
    assert load_json('{"a": [1, 2.5, null, true, "x"]}', "c.json") == {"a": [1, 2.5, None, True, "x"]}


def test_aliases_are_bounded_by_the_text_they_expand_to() -> None:
    """Few nodes, much text: 1,350 aliases of one 200 KB string (once hours downstream) are refused where
    the node count alone let them through; a block reused a few times (how configs share one) is read."""
    big = "x" * 200_000
    text = f"a: &s {big}\nb: [" + ", ".join(["*s"] * 1350) + "]\n"
    with pytest.raises(InputError, match=r"aliases expand the document to more than [0-9,]+ characters") as e:
        load_yaml(text, "c.yaml")
    assert e.value.line is not None
    shared = "base: &b {stage: compile, enabled: true, note: " + "y" * 1000 + "}\n" + "".join(
        f"t{i}: *b\n" for i in range(20))
    assert load_yaml(shared, "c.yaml")["t19"]["stage"] == "compile"
