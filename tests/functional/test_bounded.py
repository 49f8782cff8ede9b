"""Bounded readers (docs/bad-input.md, "Bounded readers"; the caps: ad_diff/core/limits.py).

Every hostile class goes past its cap and must end in an InputError naming the file and the cap (exit 2 or
an ADT008 finding), never a MemoryError, a traceback or minutes of CPU; the caps are lowered here so each
case runs in milliseconds (the code reads them from ``limits`` at call time). Then each generator is built
at size n and 2n and the work must grow about linearly. Tensors: a ``.pt`` whose tensors carry
``requires_grad`` is compared, and finite F64 values near the float64 limit give finite statistics.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import pickletools
import statistics
import struct
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.candidates.graphview import LAYER
from ad_diff.core import limits
from ad_diff.core.text import LINE_CAP
from ad_diff.discover.capture import CapturedLines
from ad_diff.errors import InputError
from ad_diff.history import cache
from ad_diff.history.columns import Columns
from ad_diff.history.load import run_json
from ad_diff.kinds.log.parse import parse
from ad_diff.kinds.tensors.find import discover
from ad_diff.kinds.tensors.header import read_header
from ad_diff.kinds.tensors.measure import MeasureOptions, measure
from ad_diff.kinds.tensors.pt import load_pt, prescan
from tests.conftest import FIXTURES

AD = FIXTURES / "scenarios" / "identical" / "baseline" / "ad.log"


def _result(stage: str, transform: str, rank: int = 0) -> str:
    return f"[AUTO-DEPLOY] [INFO] [RANK {rank}] [stage={stage}, transform={transform}] [SUMMARY] matches=1\n"


# -- generators of hostile logs: n items of one kind after a real log's lines ------------------------------
LOG_ITEMS: dict[str, Callable[[int], str]] = {
    "LOG_TRANSFORMS": lambda n: "".join(_result("pattern_matcher", f"t{i}") for i in range(n)),
    "LOG_PIPELINES": lambda n: _result("pattern_matcher", "same") * (n + 1),
    "LOG_RANKS": lambda n: "".join(_result("pattern_matcher", "t", rank=i) for i in range(n)),
    "LOG_ISSUES": lambda n: "[AUTO-DEPLOY] [INFO] [stage=s, transform=t] [SUMMARY] garbled\n" * n,
    "LOG_ERRORS": lambda n: "Traceback (most recent call last)\nRuntimeError: boom\n" * n,
}


@pytest.mark.parametrize("cap", sorted(LOG_ITEMS))
def test_log_items_past_their_cap_are_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     cap: str) -> None:
    monkeypatch.setattr(limits, cap, 50)
    p = tmp_path / "ad.log"
    p.write_text(AD.read_text() + LOG_ITEMS[cap](60))
    with pytest.raises(InputError) as e:
        parse(p)
    assert e.value.path == p
    assert cap in str(e.value)
    assert "more than 50 " in str(e.value)
    assert e.value.line is not None  # where the cap was passed


def test_log_items_within_their_caps_parse(tmp_path: Path) -> None:
    p = tmp_path / "ad.log"
    p.write_text(AD.read_text() + "".join(LOG_ITEMS[c](40) for c in sorted(LOG_ITEMS)))
    assert parse(p, rank=None).ranks_seen


def test_compressed_log_of_empty_lines_is_refused_by_its_line_cap(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "LOG_LINES_FLOOR", 1_000)
    p = tmp_path / "ad.log.gz"
    p.write_bytes(gzip.compress(AD.read_bytes() + b"\n" * 200_000, 9))  # 2.4 KB: 16 lines a byte is 38,000
    cap = limits.line_limit(p.stat().st_size, compressed=True)
    assert cap == 16 * p.stat().st_size < 200_000
    with pytest.raises(InputError, match=rf"more than {cap:,} lines \(the cap") as e:
        list(CapturedLines(p, "a log"))
    assert e.value.path == p
    assert e.value.line == cap + 1


def test_plain_log_line_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "LOG_LINES_CEILING", 500)
    p = tmp_path / "ad.log"
    p.write_bytes(AD.read_bytes() + b"x\n" * 1000)
    with pytest.raises(InputError, match="more than 500 lines"):
        list(CapturedLines(p, "a log"))


def test_sparse_plain_log_keeps_bounded_lines(tmp_path: Path) -> None:
    """A plain log extended by ``truncate`` (one endless line of NULs): every line kept is at most LINE_CAP
    bytes (a 2 GiB one was a MemoryError; 64 MiB here keeps the test light)."""
    p = tmp_path / "ad.log"
    p.write_bytes(AD.read_bytes())
    with p.open("r+b") as f:
        f.truncate(64 << 20)
    lines = list(CapturedLines(p, "a log"))
    assert max(len(t) for _, t, _, _ in lines) <= LINE_CAP
    assert lines[-1][2] is False  # the endless line has no newline: a cut file
    assert parse(p).transforms


def test_graphs_folder_past_its_dump_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ad_diff.discover.dumps import scan

    monkeypatch.setattr(limits, "GRAPH_DUMPS", 20)
    graphs = tmp_path / "graphs"
    graphs.mkdir()
    for i in range(21):
        (graphs / f"{i:03d}_pattern_matcher_t{i}.txt").write_text("")
    assert scan(graphs).error == f"{graphs}: holds more than 20 files named like graph dumps (the cap " \
        'GRAPH_DUMPS of docs/bad-input.md, "Bounded readers"); refused rather than read without bound'
    (graphs / "020_pattern_matcher_t20.txt").unlink()
    assert scan(graphs).error is None


def test_sniffed_head_is_bounded_in_characters(tmp_path: Path) -> None:
    """The head is held while the capture prefixes are decided: 20,000 lines of 1 MiB would be 20 GiB."""
    from ad_diff.core.text import iter_lines

    p = tmp_path / "ad.log"
    p.write_bytes((b"x" * (LINE_CAP - 1) + b"\n") * 40 + AD.read_bytes())
    with p.open("rb") as f:
        head = CapturedLines(p, "a log")._sniff(iter_lines(f, p, None, 10**6))
    assert sum(len(t) for _, t, _, _ in head) <= limits.LOG_SNIFF_CHARS + LINE_CAP
    assert len(head) < 40


# -- tensors ------------------------------------------------------------------------------------------------
def _safetensors(path: Path, tensors: dict[str, np.ndarray], escape: bool = False) -> Path:
    hdr, data = {}, b""
    for name, a in tensors.items():
        raw = a.tobytes()
        hdr[name] = {"dtype": {"float64": "F64", "float32": "F32"}[a.dtype.name], "shape": list(a.shape),
                     "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(hdr)
    if escape:  # the same keys spelt with escapes: only a parsed count sees them
        text = text.replace('"data_offsets"', '"data\\u005foffsets"')
    h = text.encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)
    return path


@pytest.mark.parametrize("escape", [False, True])
def test_safetensors_with_more_tensors_than_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    escape: bool) -> None:
    monkeypatch.setattr(limits, "TENSORS_PER_FILE", 100)
    tensors = {f"t{i}": np.zeros(1, np.float32) for i in range(101)}
    p = _safetensors(tmp_path / "t.safetensors", tensors, escape)
    with pytest.raises(InputError, match="more than 100 tensors.*TENSORS_PER_FILE") as e:
        read_header(p)
    assert e.value.path == p


def test_tensors_past_the_run_cap_are_reported_unread(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "TENSORS_PER_RUN", 15)
    for k in range(3):
        _safetensors(tmp_path / "tensors" / f"out{k}.safetensors",
                     {f"f{k}t{i}": np.zeros(1, np.float32) for i in range(10)})
    found = discover(tmp_path / "tensors", "candidate")
    assert len(found.outputs) == 10
    assert [u.path.name for u in found.unreadable] == ["out1.safetensors", "out2.safetensors"]
    assert all("TENSORS_PER_RUN" in u.message for u in found.unreadable)


def test_pt_with_more_tensors_than_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(limits, "TENSORS_PER_FILE", 20)
    p = tmp_path / "many.pt"
    torch.save({f"t{i}": torch.zeros(1) for i in range(21)}, p)
    with pytest.raises(InputError, match="more than 20 tensors"):
        load_pt(p)


def _legacy(torch: object, obj: object) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)  # type: ignore[attr-defined]
    return buf.getvalue()


def _pickle_ends(raw: bytes) -> list[int]:
    b, ends = io.BytesIO(raw), []
    for _ in range(limits.PICKLE_STREAMS):
        for _op in pickletools.genops(b):
            pass
        ends.append(b.tell())
    return ends


@pytest.mark.parametrize("which", [1, 2, 3, 4])
def test_legacy_pt_with_a_malformed_later_pickle_is_refused(tmp_path: Path, which: int) -> None:
    """Any of the pickles after the first may be the malformed one (an unterminated 80 KB global took 84 s
    in torch's error message): each is walked before torch sees the file."""
    torch = pytest.importorskip("torch")
    raw = _legacy(torch, {"out": torch.ones(3)})
    start = _pickle_ends(raw)[which - 1]
    p = tmp_path / "bad.pt"
    p.write_bytes(raw[:start] + b"\x80\x02c" + b"a" * 80_000)
    with pytest.raises(InputError, match=f"pickle {which + 1} of the 5 of a legacy file") as e:
        prescan(p)
    assert e.value.path == p
    prescan(_write(tmp_path / "good.pt", raw))  # the file it was cut from passes


def _write(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def test_legacy_pt_that_ends_before_its_pickles_is_refused(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    raw = _legacy(torch, {"out": torch.ones(3)})
    with pytest.raises(InputError, match="ends before pickle 4 of the 5"):
        prescan(_write(tmp_path / "short.pt", raw[: _pickle_ends(raw)[2]]))


def test_pt_with_requires_grad_is_compared(tmp_path: Path) -> None:
    """`torch.save(model(x))`: the saved tensors carry requires_grad (once `Can't call numpy() on Tensor
    that requires grad`, exit 3); legacy and zip files alike."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 16)
    x = torch.randn(4, 8)
    recs = []
    for side, legacy in (("b", False), ("c", True)):
        out = {"logits": lin(x) * (1.001 if side == "c" else 1.0)}
        assert out["logits"].requires_grad
        p = tmp_path / side / "tensors" / "outputs.pt"
        p.parent.mkdir(parents=True)
        torch.save(out, p, _use_new_zipfile_serialization=not legacy)
        recs.append(discover(p.parent, "baseline" if side == "b" else "candidate").outputs["logits"])
    s = measure(recs[0], recs[1], MeasureOptions(atol=1e-5, rtol=1e-3))
    ref = lin(x).detach().double()
    assert s.compared == 64
    assert s.max_abs == pytest.approx((ref * 0.001).abs().max().item(), rel=1e-3)
    assert s.cosine == pytest.approx(1.0)


@pytest.mark.parametrize("exponent", [0, 510, 800, 1020])
@pytest.mark.parametrize("chunk", [7, 0])
def test_f64_statistics_are_finite_and_scale_free(tmp_path: Path, exponent: int, chunk: int) -> None:
    """Values near the float64 limit (1e154 and far beyond: their squares overflow) give the statistics of
    the same values scaled down by a power of two: finite, and equal up to that power."""
    rng = np.random.default_rng(0)
    b = rng.standard_normal((6, 32))
    c = b + 1e-3 * rng.standard_normal((6, 32))
    unit = 2.0**exponent
    recs = []
    for side, x in (("b", b * unit), ("c", c * unit)):
        _safetensors(tmp_path / side / "tensors" / "outputs.safetensors", {"x": x})
        recs.append(discover(tmp_path / side / "tensors", "baseline").outputs["x"])
    with np.errstate(over="ignore"):
        assert math.isfinite(float(np.sum((b * unit) ** 2))) == (exponent == 0)  # float64 sums overflow
    s = measure(recs[0], recs[1], MeasureOptions(atol=0.0, rtol=1e-2, chunk=chunk))
    cos = float(np.dot(b.ravel(), c.ravel()) / np.linalg.norm(b) / np.linalg.norm(c))
    assert math.isfinite(s.cosine)
    assert s.cosine == pytest.approx(cos, abs=1e-12)
    assert s.one_minus_cosine == pytest.approx(1 - cos, rel=1e-6)
    assert s.nrmse == pytest.approx(float(np.linalg.norm(c - b) / np.linalg.norm(b)), rel=1e-9)
    assert s.rmse / unit == pytest.approx(float(np.sqrt(np.mean((c - b) ** 2))), rel=1e-9)
    assert s.mean_abs / unit == pytest.approx(float(np.mean(np.abs(c - b))), rel=1e-9)


# -- JSON and numbers -----------------------------------------------------------------------------------
def test_history_cache_of_deep_nesting_is_rebuilt_with_the_cap_named(tmp_path: Path) -> None:
    p = tmp_path / "cache.json"
    p.write_text("[" * 1000 + "]" * 1000)
    out, note = cache.load(p, 0, Columns(), {})
    assert out == {}
    assert str(p) in note
    assert "1,000 levels deep (the cap is 64)" in note


@pytest.mark.parametrize("text", ["[" * 1000 + "]" * 1000, '{"started": ' + "9" * 5000 + "}"])
def test_run_json_past_its_caps_reads_as_absent(tmp_path: Path, text: str) -> None:
    (tmp_path / "run.json").write_text(text)
    assert run_json(tmp_path).started is None


def test_layer_numbers_are_short_digit_runs() -> None:
    assert LAYER.search("model_layers_12_mlp") is not None
    assert LAYER.search("model_layers_" + "9" * 4500 + "_mlp") is None  # no index: never handed to int()


def test_candidates_with_a_4500_digit_layer_number(tmp_path: Path, cli) -> None:  # noqa: ANN001
    import shutil

    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "candidates" / "unfused", run)
    dump = sorted((run / "graphs").iterdir())[-1]
    dump.write_text(dump.read_text().replace("layers_1_", f"layers_{'9' * 4500}_"))
    r = cli("candidates", run, "-f", "json")
    assert r.code == 0, r.err
    assert "internal error" not in r.err


# -- linear work --------------------------------------------------------------------------------------
def _gz_newlines(p: Path, n: int) -> Callable[[], object]:
    p.write_bytes(gzip.compress(AD.read_bytes() + b"\n" * (n * 2000), 9))
    return lambda: sum(1 for _ in CapturedLines(p, "a log"))


def _transforms(p: Path, n: int) -> Callable[[], object]:
    p.write_text(AD.read_text() + LOG_ITEMS["LOG_PIPELINES"](n * 20) + LOG_ITEMS["LOG_ISSUES"](n * 20))
    return lambda: parse(p)


def _long_line(p: Path, n: int) -> Callable[[], object]:
    p.write_bytes(AD.read_bytes() + b"z" * (n << 20) + b"\n")
    return lambda: sum(1 for _ in CapturedLines(p, "a log"))


def _legacy_global(p: Path, n: int) -> Callable[[], object]:
    p.write_bytes(b"\x80\x02K\x01.\x80\x02c" + b"a" * (n * 100_000))

    def run() -> object:
        with pytest.raises(InputError):
            prescan(p)
        return None

    return run


def _deep_json(p: Path, n: int) -> Callable[[], object]:
    p.write_bytes(b"[" * (n * 50_000) + b"]" * (n * 50_000))
    return lambda: cache.load(p, 0, Columns(), {})


def _many_tensors(p: Path, n: int) -> Callable[[], object]:
    _safetensors(p.with_suffix(".safetensors"), {f"t{i}": np.zeros(1, np.float32) for i in range(n * 2000)})
    return lambda: read_header(p.with_suffix(".safetensors"))


GENERATORS = {"gz_newlines": _gz_newlines, "transforms": _transforms, "long_line": _long_line,
              "legacy_global": _legacy_global, "deep_json": _deep_json, "many_tensors": _many_tensors}


def _median_time(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_work_grows_linearly(tmp_path: Path, name: str) -> None:
    """Doubling a hostile input at most about doubles the CPU time (bound 4x: the machine is shared and
    noisy; a quadratic reader gives 4x and more, a cap that counts the wrong unit far more)."""
    small = GENERATORS[name](tmp_path / "small", 1)
    large = GENERATORS[name](tmp_path / "large", 2)
    small(), large()  # warm: imports, caches
    t1, t2 = _median_time(small), _median_time(large)
    assert t2 < 4 * max(t1, 0.005), f"{name}: {t1:.4f} s at n, {t2:.4f} s at 2n"


# -- the measured cases, at full size, through the command line ------------------------------------------
def _gz_64k(case: Path) -> None:
    (case / "candidate" / "ad.log").unlink()
    (case / "candidate" / "ad.log.gz").write_bytes(gzip.compress(AD.read_bytes() + b"\n" * (60 << 20), 9))


def _sparse_2g(case: Path) -> None:
    with (case / "candidate" / "ad.log").open("r+b") as f:
        f.truncate(2 << 30)


def _many_results(case: Path) -> None:
    with (case / "candidate" / "ad.log").open("a") as f:
        f.write(LOG_ITEMS["LOG_TRANSFORMS"](20_000))


def _legacy_pt(case: Path) -> None:
    torch = pytest.importorskip("torch")
    raw = _legacy(torch, {"out": torch.ones(3)})
    bad = raw[: _pickle_ends(raw)[2]] + b"\x80\x02c" + b"a" * 80_000  # an unterminated 80 KB global
    for side, data in (("baseline", raw), ("candidate", bad)):
        (case / side / "tensors").mkdir()
        (case / side / "tensors" / "out.pt").write_bytes(data)


CLI_CASES = {  # what is done to the candidate, the exit code, what stderr or the JSON report must say
    "gz_newlines_64k": (_gz_64k, 2, "lines (the cap for a log of this size: 16 per compressed byte"),
    "sparse_2gib_log": (_sparse_2g, 0, ""),
    "20k_transform_results": (_many_results, 2, "holds more than 10,000 transform results"),
    "legacy_pt_malformed_later_pickle": (_legacy_pt, 1, "out.pt could not be read: not a readable torch.save "
                                                        "file (pickle 4 of the 5 of a legacy file"),
}


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_measured_cases_through_the_cli(tmp_path: Path, name: str) -> None:
    """Each once ended in exit 3 (MemoryError), minutes of CPU or a hang inside torch; under a 4 GiB
    address-space limit each now ends in its exit code within seconds."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.conftest import ROOT

    make, code, says = CLI_CASES[name]
    for side in ("baseline", "candidate"):
        (tmp_path / side).mkdir()
        shutil.copy(AD, tmp_path / side / "ad.log")
    make(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("AD_DIFF_DEBUG", None)
    args = [str(tmp_path / "baseline"), str(tmp_path / "candidate"), "--json", str(tmp_path / "report.json")]
    proc = subprocess.run([sys.executable, "-m", "ad_diff", *args], env=env, capture_output=True, text=True,
                          timeout=300, preexec_fn=_limit_memory)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "internal error" not in proc.stderr
    found = proc.stderr if code == 2 else (tmp_path / "report.json").read_text()
    assert says in found


# -- issue 45: bounds by what a thing costs, not by its bytes or digits -----------------------------------


def test_a_dump_is_bounded_by_its_lines_before_any_node_is_built(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A 244 MiB dump of 3 million nodes, under the byte cap, ended in MemoryError: nodes are what a dump
    costs, so its lines are counted first (the cap lowered here; the real one is 500,000)."""
    from ad_diff.kinds.graph.parse import parse_text

    monkeypatch.setattr(limits, "GRAPH_DUMP_LINES", 100)
    head = "# Transform: t\n# Stage: s\n\n"
    ok = head + "".join(f"%n{i} : 2 : torch.float32\n" for i in range(90))
    assert parse_text(ok, tmp_path / "001_s_t.txt").sections
    with pytest.raises(InputError, match=r"001_s_t.txt: holds more than 100 lines \(the cap GRAPH_DUMP"):
        parse_text(ok + "".join(f"%m{i} : 2 : torch.float32\n" for i in range(20)), tmp_path / "001_s_t.txt")


@pytest.mark.parametrize("line", [
    "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=s, transform=t] [SUMMARY] matches=" + "9" * 310,
    "[AUTO-DEPLOY] [INFO] [RANK " + "1" * 21 + "] [stage=s, transform=t] [SUMMARY] matches=1",
])
def test_a_count_or_rank_beyond_64_bits_is_an_input_error(tmp_path: Path, line: str) -> None:
    """Every count the log gives meets floats (the collapse fraction, the HTML axis) and sizes things (a
    rank's range): one of 310 digits crashed --html; now the log names the line."""
    p = tmp_path / "ad.log"
    p.write_text(line + "\n")
    with pytest.raises(InputError, match=r"ad.log:1: holds a number AD never writes .*the cap INT_DIGITS"):
        parse(p)


@given(st.integers(0, 10**4200))
@settings(max_examples=200, deadline=None)
def test_the_html_count_axis_holds_any_integer(v: int) -> None:
    from ad_diff.report.svg import _height, _nice_ticks, count_label

    step, top = _nice_ticks(v)
    assert top >= v
    assert top // step <= 5
    assert 0.0 <= _height(v, top) <= 160.0
    assert len(count_label(top)) <= 12


@given(st.lists(st.integers(0, 10**20), min_size=1, max_size=6, unique=True).map(sorted))
@settings(max_examples=300, deadline=None)
def test_layer_spans_are_judged_pairwise_never_by_a_range(layers: list[int]) -> None:
    """A 9-digit layer number once built a 400-million-element range: the text is decided pair by pair."""
    from ad_diff.candidates.render import layers_text

    text = layers_text(tuple(layers))
    consecutive = len(layers) > 2 and all(b == a + 1 for a, b in zip(layers, layers[1:], strict=False))
    assert text == (f"{layers[0]}-{layers[-1]}" if consecutive else ", ".join(map(str, layers)))
