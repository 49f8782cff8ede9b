"""``dump_difference`` against its definition: the first line where the two dumps' canonical texts
(:func:`canonical_dump`) differ. Its fast path skips canonicalising the leading lines that are the same as
written; these tests check that this never changes the answer, on generated dumps whose first difference is
a rename (equal canonically), a changed op, an inserted or removed node, or a shorter file."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.kinds.graph.facts import DumpComparisons, canonical_dump, dump_difference


def _by_definition(base: Path, cand: Path) -> tuple[bool, str | None, int, tuple[str, str]]:
    """The first differing canonical line, compared as the docstring of ``dump_difference`` defines it."""
    b, c = list(canonical_dump(base)), list(canonical_dump(cand))
    for n in range(1, max(len(b), len(c)) + 1):
        lb = b[n - 1] if n <= len(b) else None
        lc = c[n - 1] if n <= len(c) else None
        if lb is None or lc is None or lb[0] != lc[0]:
            node = (lc[1] if lc else None) or (lb[1] if lb else None)
            return False, node, n, (_excerpt(lb), _excerpt(lc))
    return True, None, 0, ("", "")


def _excerpt(line: tuple[str, str | None, str] | None) -> str:
    """A line as written, cut to 80 characters as the report shows it."""
    if line is None:
        return "end of dump"
    text = line[2].strip()
    return text if len(text) <= 80 else text[:77] + "..."


_OPS = ("add", "mul", "view", "linear", "getitem")


def _dump(ops: list[tuple[str, int]]) -> list[str]:
    """A D3-like dump: a header, one placeholder, one call node per ``(op, input offset)``, the output."""
    lines = ["# stage: pattern_matcher transform: t", "graph():",
             "    %x : [num_users=1] = placeholder[target=x]"]
    names = ["x"]
    seen: dict[str, int] = {}
    for op, back in ops:
        k = seen.get(op, -1) + 1
        seen[op] = k
        name = op if k == 0 else f"{op}_{k}"
        arg = names[max(0, len(names) - 1 - back)]
        target = f"torch.ops.aten.{op}"
        lines.append(f"    %{name} : [num_users=1] = call_function[target={target}](args = (%{arg},))")
        names.append(name)
    lines.append(f"    return ({names[-1]},)")
    return lines


def _edit(ops: list[tuple[str, int]], kind: int, at: int, op: str) -> list[tuple[str, int]]:
    at = at % (len(ops) + 1)
    if kind == 0:  # insert a node: every later node of that op shifts its counter
        return ops[:at] + [(op, 0)] + ops[at:]
    if kind == 1 and ops:  # remove a node
        return ops[:at] + ops[at + 1:]
    if kind == 2 and at < len(ops):  # another op at one place
        return ops[:at] + [(op, ops[at][1])] + ops[at + 1:]
    return ops


@settings(max_examples=150, deadline=None)
@given(
    ops=st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 3)), max_size=30),
    kind=st.integers(0, 3),
    at=st.integers(0, 40),
    op=st.sampled_from(_OPS),
    cut=st.integers(0, 3),
)
def test_same_answer_as_the_definition(ops, kind, at, op, cut) -> None:
    base = _dump(ops)
    cand = _dump(_edit(ops, kind, at, op))
    if cut:
        cand = cand[:-cut]  # a dump that ends early
    with tempfile.TemporaryDirectory() as d:
        pb, pc = Path(d) / "b.txt", Path(d) / "c.txt"
        pb.write_text("\n".join(base) + "\n")
        pc.write_text("\n".join(cand) + "\n")
        assert dump_difference(pb, pc) == _by_definition(pb, pc)
        assert dump_difference(pc, pb) == _by_definition(pc, pb)


def test_a_rename_alone_is_equal_and_a_changed_op_is_found(tmp_path: Path) -> None:
    base = _dump([("add", 0), ("mul", 0), ("add", 1)])
    renamed = [line.replace("add_1", "add_7") for line in base]  # a consistent FX counter rename
    changed = _dump([("add", 0), ("view", 0), ("add", 1)])
    pb, pr, pc = tmp_path / "b.txt", tmp_path / "r.txt", tmp_path / "c.txt"
    pb.write_text("\n".join(base) + "\n")
    pr.write_text("\n".join(renamed) + "\n")
    pc.write_text("\n".join(changed) + "\n")
    assert dump_difference(pb, pr)[0] is True
    same, node, line, _ = dump_difference(pb, pc)
    assert (same, node, line) == (False, "view", 5)


_HEADERS = (("# Transform: t", "# Stage: s"), ("# Transform: t ", "# Stage: s"),
            ("# Transform: u", "# Stage: s"))


def _body(ops: list[tuple[str, int]]) -> list[str]:
    return _dump(ops)[1:]  # what follows the header lines (their place is taken by real headers below)


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 3)), max_size=12),
    edits=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 20), st.sampled_from(_OPS)), min_size=1,
                   max_size=3),
    steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from(_HEADERS),
                             st.sampled_from(_HEADERS)), min_size=1, max_size=8),
)
def test_a_remembered_comparison_is_the_comparison(ops, edits, steps) -> None:
    """:class:`DumpComparisons` answers every pair as :func:`dump_difference` does, whether it reads the
    pair or reuses an earlier pair with the same bodies: a pool of bodies is drawn from with repeats, each
    pair with headers that may differ as written (a trailing space, another transform), so a remembered
    result is offered where it must not be taken too."""
    import xxhash

    pool = [_body(ops)]
    for kind, at, op in edits:
        pool.append(_body(_edit(ops, kind, at, op)))
    memo = DumpComparisons()
    with tempfile.TemporaryDirectory() as d:
        for n, (ib, ic, hb, hc) in enumerate(steps):
            bb, bc = pool[ib % len(pool)], pool[ic % len(pool)]
            pb, pc = Path(d) / f"b{n}.txt", Path(d) / f"c{n}.txt"
            pb.write_text("\n".join([*hb, *bb]) + "\n")
            pc.write_text("\n".join([*hc, *bc]) + "\n")
            bodies = (xxhash.xxh3_128_digest(("\n".join(bb) + "\n").encode()),
                      xxhash.xxh3_128_digest(("\n".join(bc) + "\n").encode()))
            want = dump_difference(pb, pc)
            known = memo.known(pb, pc, bodies)
            assert known is None or known == want
            assert memo.compare(pb, pc, bodies) == want
            assert memo.compare(pb, pc, None) == want


def test_a_pair_of_known_bodies_is_not_read_again(tmp_path: Path, monkeypatch) -> None:
    """The reuse is real: the second pair with the same bodies and headers is answered without a read."""
    import ad_diff.kinds.graph.facts as inv

    body_b, body_c = _body([("add", 0), ("mul", 0)]), _body([("add", 0), ("view", 0)])
    paths = []
    for n in range(2):
        pb, pc = tmp_path / f"b{n}.txt", tmp_path / f"c{n}.txt"
        pb.write_text("\n".join(["# Transform: t", "# Stage: s", *body_b]) + "\n")
        pc.write_text("\n".join(["# Transform: t", "# Stage: s", *body_c]) + "\n")
        paths.append((pb, pc))
    reads = []
    real = inv.dump_difference
    monkeypatch.setattr(inv, "dump_difference", lambda b, c: reads.append(b) or real(b, c))
    memo = inv.DumpComparisons()
    first = memo.compare(*paths[0], (b"b", b"c"))
    assert memo.compare(*paths[1], (b"b", b"c")) == first
    assert first[0] is False
    assert reads == [paths[0][0]]
    assert memo.compare(*paths[1], (b"b", b"other")) == first  # other bodies: read
    assert len(reads) == 2
