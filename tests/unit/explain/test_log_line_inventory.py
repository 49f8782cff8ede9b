"""The accounting's log-line inventory (``inventory.log_lines``) normalises each distinct line of a run once,
counts it as often as the run holds it and keeps of each step only the lines it moved
(``inventory.LineTally``): what is left after each step, the final counts and the names must be what a
line-by-line walk with a whole counter per step gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.discover import RunArtifacts
from ad_diff.discover.logs import LogFile
from ad_diff.explain.accounting import inventory as inv
from ad_diff.explain.accounting.noise import LINE_NORMALISERS, TRANSFORM_LINE

Counts = tuple[list[Counter[bytes]], Counter[bytes], dict[bytes, tuple[str, str, str]]]


def _line_by_line(art: RunArtifacts, sign: int, acc: Counts) -> int:
    """The inventory as a walk over every line, each normalised where it stands: the oracle."""
    steps, noise, names = acc
    chain = [(rule.normalise, steps[i]) for i, rule in enumerate(LINE_NORMALISERS, 1) if rule.normalise]
    n = 0
    for text in inv._lines(art):
        n += 1
        if TRANSFORM_LINE.search(text) is None:
            for normalise, _ in chain:
                text = normalise(text, art.root)
            d = inv._digest(text)
            noise[d] += sign
            continue
        steps[0][inv._digest(text)] += sign
        for normalise, step in chain:
            text = normalise(text, art.root)
            step[inv._digest(text)] += sign
        d = inv._digest(text)
        if d not in names:
            m = TRANSFORM_LINE.search(text)
            names[d] = (text, *((m.group("stage"), m.group("transform")) if m else ("", "")))
    return n


def _acc() -> Counts:
    return [Counter() for _ in range(len(LINE_NORMALISERS) + 1)], Counter(), {}


def _nonzero(c: Counter[bytes]) -> dict[bytes, int]:
    return {k: v for k, v in c.items() if v}


LINES = st.sampled_from([
    "[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=pattern_matcher, "
    "transform=match_rope_pattern] [SUMMARY] matches=4 | time: 0.123s",
    "[02/10/2026-11:02:16] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=pattern_matcher, "
    "transform=match_rope_pattern] [SUMMARY] matches=4 | time: 0.123s",
    "[02/10/2026-11:02:16] [TRT-LLM AUTO-DEPLOY] [I] [stage=pattern_matcher, transform=match_rope_pattern] "
    "[SUMMARY] matches=3 | time: 1.5 ms",
    "[stage=export, transform=export_to_gm] Graph dumping enabled to: {root}/graphs",
    "[stage=export, transform=export_to_gm] memory 1.2 GiB at {root}",
    "\x1b[32m[stage=compile, transform=compile_model] enabled=True\x1b[0m",
    "[TensorRT-LLM][INFO] Set logger level to INFO",
    "[02/10/2026-11:02:17] [TRT-LLM] [I] loading took 3.2 s from {root}/weights",
    "",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, max_size=40), st.lists(LINES, max_size=40))
def test_each_distinct_line_once_counts_as_every_line(tmp_path_factory, base: list[str],
                                                      cand: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("inv")
    arts = []
    for name, lines in (("baseline", base), ("candidate", cand)):
        root = tmp / name
        root.mkdir()
        (root / "ad.log").write_text("".join(ln.format(root=root) + "\n" for ln in lines), encoding="utf-8")
        arts.append(RunArtifacts(name, root, root / "ad.log", None, None,  # type: ignore[arg-type]
                                 logs=(LogFile(root / "ad.log", root=root),)))
    got, want = inv.LineTally(), _acc()
    for art, sign in zip(arts, (1, -1), strict=True):
        assert inv.log_lines(art, sign, got) == _line_by_line(art, sign, want)
    left, final = got.steps()
    # the per-rule figures the report shows: what each step leaves over, both runs together
    assert left == [sum(map(abs, s.values())) for s in want[0]]
    assert _nonzero(Counter(final)) == _nonzero(want[0][-1])
    assert _nonzero(Counter(got.noise)) == _nonzero(want[1])
    left_over = _nonzero(want[0][-1])
    assert {d: got.names[d] for d in _nonzero(Counter(final))} == {d: want[2][d][0] for d in left_over}
    assert all(d in got.names for d, n in final.items() if n)


def test_a_repeated_line_is_normalised_once(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "run"
    root.mkdir()
    line = "[02/10/2026-11:02:15] [stage=a, transform=b] [SUMMARY] matches=1 | time: 0.5s\n"
    (root / "ad.log").write_text(line * 500 + "other\n" * 300, encoding="utf-8")
    art = RunArtifacts("baseline", root, root / "ad.log", None, None,  # type: ignore[arg-type]
                       logs=(LogFile(root / "ad.log", root=root),))
    calls = Counter[str]()
    real = inv.TRANSFORM_LINE

    class Counting:
        def search(self, text: str):  # noqa: ANN201 - the pattern's own signature
            calls[text] += 1
            return real.search(text)

    monkeypatch.setattr(inv, "TRANSFORM_LINE", Counting())
    tally = inv.LineTally()
    assert inv.log_lines(art, 1, tally) == 800
    assert sum(calls.values()) <= 4  # two distinct lines (and the final form named once)
    assert sum(tally.raw.values()) == 500
    assert [len(olds) for olds, _, _ in tally.moves] == [0, 1, 1, 0, 0, 0]  # timestamps, timings: one line
