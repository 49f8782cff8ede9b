"""The accounting's log-line inventory (``inventory.log_lines``) normalises each distinct line of a run once
and counts it as often as the run holds it: the counters must be what a line-by-line walk gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.discover import RunArtifacts
from ad_diff.discover.logs import LogFile
from ad_diff.explain.accounting import inventory as inv
from ad_diff.explain.accounting.noise import LINE_NORMALISERS, TRANSFORM_LINE


def _line_by_line(art: RunArtifacts, sign: int, acc: inv.LineCounts) -> int:
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


def _acc() -> inv.LineCounts:
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
    got, want = _acc(), _acc()
    for art, sign in zip(arts, (1, -1), strict=True):
        assert inv.log_lines(art, sign, got) == _line_by_line(art, sign, want)
    assert [_nonzero(s) for s in got[0]] == [_nonzero(s) for s in want[0]]
    assert _nonzero(got[1]) == _nonzero(want[1])
    assert got[2] == want[2]
    # the per-rule figures the report shows: what each step leaves over, both runs together
    assert [sum(map(abs, s.values())) for s in got[0]] == [sum(map(abs, s.values())) for s in want[0]]


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
    acc = _acc()
    assert inv.log_lines(art, 1, acc) == 800
    assert sum(calls.values()) <= 4  # two distinct lines (and the final form named once)
    assert sum(acc[0][0].values()) == 500
