"""Fuzz targets: one per parser, and the whole CLI on a mutated run folder.

Shared by the CI properties (tests/fuzz/test_fuzz_targets.py, a short profile) and the long run
(scripts/fuzz_long.py). A target gets the index of the seed that was mutated, the mutated bytes and a
scratch folder; it feeds them to ad-diff the way a run folder or a command line would. Returning normally
means ad-diff parsed the input or refused it with an :class:`~ad_diff.errors.AdDiffError` (exit 2); any
other exception is a crash (exit 3 on the command line).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ad_diff.errors import AdDiffError
from tests.conftest import FIXTURES, ROOT

Seed = tuple[str, bytes]
"""``(file name the bytes are written to, bytes)``."""


@dataclasses.dataclass(frozen=True)
class Target:
    """One fuzz target."""

    name: str
    seeds: Callable[[], list[Seed]]
    tokens: tuple[bytes, ...]
    run: Callable[[Seed, bytes, Path], None]
    weight: float = 1.0
    """Share of the long run's inputs (cheap parsers get more)."""
    hang_seconds: float | None = None
    """Time after which one input counts as a hang (default: the run's ``--hang-seconds``)."""


def _files(*patterns: str) -> list[Seed]:
    out: list[Seed] = []
    for pattern in patterns:
        out += [(p.name, p.read_bytes()) for p in sorted(FIXTURES.glob(pattern)) if p.is_file()]
    return out


CANARY = "outside_canary_7f3a"
"""Held only by ``outside.yaml`` next to the CLI targets' run folders: an output showing it read a file
outside the runs (the inputs may name ``../../outside.yaml``, e.g. in an order file)."""


class Leak(AssertionError):
    """An output holds a credential-shaped string or :data:`CANARY` (recorded apart from crashes)."""


def check_leaks(*texts: str) -> None:
    """Raise :class:`Leak` when any output text holds a credential or the canary.

    A credential is what the redactor redacts (:func:`ad_diff.core.redact.redact_text`): every output must be
    a fixed point of it. A bare pattern search would also flag what redaction leaves on purpose, such as a
    ``ghp_`` glued inside a name without a token's exact format."""
    from ad_diff.core.redact import redact_text

    for text in texts:
        if CANARY in text:
            raise Leak("an output holds the outside canary")
        if redact_text(text) != text:
            raise Leak("an output holds a credential")


class Injection(Leak):
    """A report holds a character its medium must never carry raw: a control character or escape sequence
    on the terminal, a bidi override or zero-width character anywhere, a bare NaN/Infinity in JSON, a CSV
    cell that a spreadsheet would run as a formula (recorded as a leak, under its own signature)."""


_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 (but tab and newline), DEL and C1: ESC starts every CSI/OSC/DCS/APC sequence."""
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u2028\u2029]")
"""Bidi overrides and isolates, zero-width characters, line/paragraph separators: one name can look like
another."""


def check_terminal(*texts: str) -> None:
    """Raise :class:`Injection` when an uncoloured terminal text holds a control or invisible character."""
    for text in texts:
        m = _RAW_CONTROL.search(text) or _INVISIBLE.search(text)
        if m is not None:
            raise Injection(f"terminal output holds raw {m.group()!r}")


def check_visible(*texts: str) -> None:
    """Raise :class:`Injection` when a markdown/HTML/text report holds a bidi or zero-width character raw."""
    for text in texts:
        m = _INVISIBLE.search(text)
        if m is not None:
            raise Injection(f"report holds raw {m.group()!r}")


def _no_constant(name: str) -> object:
    raise Injection(f"JSON holds the bare constant {name}")


def check_json(text: str) -> object:
    """Parse a JSON report strictly: a bare ``NaN``/``Infinity`` is an :class:`Injection`."""
    return json.loads(text, parse_constant=_no_constant)


def check_csv(text: str) -> None:
    """Raise :class:`Injection` when a CSV cell starts like a spreadsheet formula (``=``, ``+``, ``-``, ``@``,
    tab, CR) and is not a plain number."""
    import csv

    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                try:
                    float(cell)
                except ValueError:
                    raise Injection(f"CSV cell {cell[:40]!r} starts like a formula") from None


def _accept(fn: Callable[[], object]) -> None:
    """Run ``fn``; an AdDiffError is the expected refusal of bad input."""
    with contextlib.suppress(AdDiffError):
        fn()


# -------------------------------------------------------------------------------------------- tokens

BIG_INT = b"9" * 4400
YAML_TOKENS = (
    b"&a [*a, *a]", b"*a", b"<<: *a\n", b"!!binary aGk=", b"? [a]\n: 1\n", b"~: 1\n", b"1: x\n", b"null: 1\n",
    b"[" * 80, b"{" * 80, BIG_INT, b"!!set {a}", b"!!python/object:os.system", b"&x ", b"\n  - ", b": ",
    b"'", b'"', b"\t", b"\n- ", b"transforms:\n  x: oops\n", b"transforms: ~\n", b"enabled: maybe\n",
    b"stage: [1]\n", b"expected:\n", b"\xff\xfe", b"\x00", b"---\n", b"...\n", b"1:2:3:4:5:6:7",
    b"2024-01-01",
    b".nan", b"ghp_" + b"a" * 36, b"hf_token: x\n", b"%TAG ! tag:x,2000:\n", b"../../outside.yaml\n",
    b"https://bob:hunter2hunter2@example.com/x ", b"api_key: sk-" + b"k" * 30 + b"\n",
)
TOML_TOKENS = (
    b"[tool.ad-diff]\n", b"a" + b".a" * 300 + b" = 1\n", b'"""', b"'''", b"#", b"\\", b"[[x]]\n",
    b"[" * 80, b"{a = {b = {", BIG_INT, b"\xff", b"=", b"fail_on = ", b'"never"', b"rank = ", b"1e400",
    b"markdown = '../../x.md'\n", b"step_summary = '/tmp/x'\n", b"comment_limit = -5\n", b"inf", b"nan",
)
LOG_TOKENS = (
    b"[SUMMARY] ", b"matches=", b"\x1b[31m", b"\r", b"\n", b"[RANK 1] ",
    b"Traceback (most recent call last):\n",
    b"1..2s", b"total=1.2.3s", b"time: 1..2s", BIG_INT, b"[RANK " + BIG_INT + b"] ", b"matches=" + BIG_INT,
    b"[stage=", b", transform=", b"] ", b"skipped", b"disabled", b"failed", b"\xff", b"\x00", b"@user ",
    b"https://x.y/z ", b"\xed\xa0\x80", b"token ghp_" + b"b" * 36 + b" ",
)
DUMP_TOKENS = (
    b" : ", b"%", b"(", b")", b"[", b", ", b"\r\n", b"\n", b"=" * 80 + b"\n", b"# GraphModule: x\n", b"\xff",
    b"# Transform: ", b"# Stage: ", b"# GraphModules found: ", BIG_INT, b"output ", b"x" * 300,
)
JSON_TOKENS = (
    b'["F32"]', b'"0"', b"[0.5, 1.5]", b"1e400", b"[" * 200, BIG_INT, b"-1", b"[-4]", b"null", b"{}",
    b'"__metadata__"', b'"\\ud800"', b'"dtype"', b'"shape"', b'"data_offsets"', b'"F64"', b'"BOOL"', b"true",
    b"[0, 18446744073709551616]", b",", b":",
)
PICKLE_TOKENS = (
    b"c", b"\x8c", b"\x93", b"R", b"b", b"(", b"t", b"}", b"]", b"\x80\x02", b".", b"cposix\nsystem\n",
    b"ctorch\n_utils\n", b"c" + b"A" * 400 + b"\n" + b"B" * 400 + b"\n", b"\x8a\x08" + b"\xff" * 8,
)


# ----------------------------------------------------------------------------------------- parsers


def _write(scratch: Path, name: str, data: bytes) -> Path:
    p = scratch / name
    p.write_bytes(data)
    return p


def run_log(seed: Seed, data: bytes, scratch: Path) -> None:
    """The AD log parser."""
    from ad_diff.kinds.log import parse

    _accept(lambda: parse.parse(_write(scratch, "ad.log", data)))


def run_dump(seed: Seed, data: bytes, scratch: Path) -> None:
    """The graph dump parser, and render -> parse of whatever parsed."""
    from ad_diff.kinds.graph import parse
    from ad_diff.kinds.graph.render import render

    path = _write(scratch, "007_pattern_matcher_x.txt", data)
    try:
        d = parse.parse(path)
    except AdDiffError:
        return
    parse.parse_text(render(d), path)


def _safetensors(header: bytes) -> bytes:
    pad = b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header) + len(pad)) + header + pad + bytes(range(256)) * 4


def run_safetensors(seed: Seed, data: bytes, scratch: Path) -> None:
    """A safetensors header (the mutated bytes are the JSON; the length prefix is made to fit)."""
    from ad_diff.kinds.tensors import find

    path = _write(scratch, "outputs.safetensors", _safetensors(data))
    _accept(lambda: find.read_index(path))


def _safetensors_seeds() -> list[Seed]:
    out = []
    found = _files("tensors/synthetic/*/*/tensors/*.safetensors", "hostile/*/*/tensors/*.safetensors")
    for name, raw in found:
        n = struct.unpack("<Q", raw[:8])[0] if len(raw) >= 8 else 0
        if 0 < n < 100_000 and len(raw) >= 8 + n:
            out.append((name, raw[8 : 8 + n].rstrip(b" ")))
    return out


def run_pt(seed: Seed, data: bytes, scratch: Path) -> None:
    """A ``.pt`` file (torch.save zip or legacy pickle), loaded with weights_only."""
    from ad_diff.kinds.tensors import find, pt

    pt._CACHE.clear()  # keyed by path: every input reuses the same one
    path = _write(scratch, "outputs.pt", data)
    _accept(lambda: find.read_index(path))


def _pt_seeds() -> list[Seed]:
    return _files("tensors/synthetic/*/*/tensors/*.pt", "hostile/*/*/tensors/*.pt")


def _config_run(scratch: Path) -> Path:
    run = scratch / "run"
    shutil.rmtree(run, ignore_errors=True)
    (run / "config").mkdir(parents=True)
    (run / "config" / "default.yaml").write_bytes((FIXTURES / "parsers/config/layered_default_rule/config/"
                                                   "default.yaml").read_bytes())
    return run


def run_ad_config(seed: Seed, data: bytes, scratch: Path) -> None:
    """One file of an AD config folder (a YAML/JSON layer, cli_args.txt, an order file, a registry) beside a
    real default.yaml, through the whole config kind: parse, diff against the seed, classify, JSON, render."""
    from ad_diff.core.jsonable import to_jsonable
    from ad_diff.kinds.config import parse
    from ad_diff.kinds.config.classify import classify
    from ad_diff.kinds.config.compare import analyze_config
    from ad_diff.kinds.config.section import view
    from tests.views import NO_CONTEXT, markdown

    run = _config_run(scratch)
    name = seed[0] if seed[0] != "default.yaml" else "model_x.yaml"
    (run / "config" / name).write_bytes(data)
    try:
        cfg = parse.parse(run)
    except AdDiffError:
        return
    analysis = analyze_config(_base_config(), cfg, None, None)
    classify(analysis)
    json.dumps(to_jsonable(analysis))
    markdown(view(analysis, NO_CONTEXT))


@lru_cache(maxsize=1)
def _base_config() -> Any:
    from ad_diff.kinds.config import parse

    return parse.parse(FIXTURES / "parsers/config/layered_default_rule")


def _config_seeds() -> list[Seed]:
    return _files("parsers/config/*/config/*", "parsers/config/*/*.yaml", "parsers/config/invalid/*",
                  "config_scenarios/*/*/config/*")


def run_settings(seed: Seed, data: bytes, scratch: Path) -> None:
    """ad-diff's own config file (``.ad-diff.yaml`` or ``pyproject.toml``), found in the working folder."""
    from ad_diff.settings import find_config, load_config

    for old in (".ad-diff.yaml", "pyproject.toml"):
        (scratch / old).unlink(missing_ok=True)
    _write(scratch, seed[0], data)

    def go() -> None:
        path = find_config(None, scratch)
        if path is not None:
            load_config(path, auto=True)

    _accept(go)


SETTINGS_SEEDS: list[Seed] = [
    (".ad-diff.yaml", b"fail_on: collapse\ncollapse_fraction: 0.25\nignore_codes: [ADL005]\n"
                      b"expected: exp.yaml\n"
                      b"tolerances: {default: {atol: 1.0e-5}, 'layer1.*': {rtol: 0.001, statistic: max}}\n"
                      b"markdown: out/r.md\njunit: out/j.xml\ncomment_limit: 5000\n"),
    ("pyproject.toml", b'[project]\nname = "x"\nversion = "1.0"\n\n[tool.ad-diff]\nfail_on = "never"\n'
                       b'junit = "out/junit.xml"\nrank = 1\nignore_transforms = ["fuse_*"]\n'
                       b'[tool.ad-diff.tolerances.default]\natol = 1e-5\n[tool.ruff]\nline-length = 110\n'),
]


def run_expected(seed: Seed, data: bytes, scratch: Path) -> None:
    """An expected-changes file, loaded and applied to real findings."""
    from ad_diff.explain import expected

    path = _write(scratch, "expected.yaml", data)
    try:
        exp = expected.load(path)
    except AdDiffError:
        return
    findings, rows = _scenario_findings()
    expected.apply(exp, list(findings), rows, "model-x")


@lru_cache(maxsize=1)
def _scenario_findings() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    from tests.unit.kinds.config.scenarios import make_log, make_rows, run_scenario

    _, findings = run_scenario("explained")
    return findings, make_rows(make_log("explained", 0), make_log("explained", 1))


EXPECTED_SEEDS: list[Seed] = [
    ("expected.yaml", b"expected:\n  - transform: fuse_gemms\n    after: disabled\n"
                      b"    reason: on purpose (PR 1)\n"
                      b"  - transform: 'match_*'\n    before: 16\n    after: 0\n    model: llama*\n"
                      b"    reason: rope is matched by the fused attention\n"
                      b"  - code: ADC0*\n    reason: x\n"),
    ("expected.yaml", b"- transform: fuse_rmsnorm\n  reason: r\n- category: match_loss\n  stage: post_*\n"
                      b"  reason: r2\n"),
]


def run_snapshot(seed: Seed, data: bytes, scratch: Path) -> None:
    """A snapshot file used as the baseline, and its metadata coverage against a dump folder."""
    from ad_diff.discover import snapshot
    from ad_diff.kinds.graph.snapshot import check_coverage

    path = _write(scratch, "counts.yaml", data)
    graphs = FIXTURES / "hostile/dump_crlf/baseline/graphs"
    _accept(lambda: (snapshot.load_as_run(path), check_coverage(path, graphs)))


@lru_cache(maxsize=1)
def _snapshot_seeds() -> list[Seed]:
    from ad_diff.discover import snapshot
    from ad_diff.pipeline import take_snapshot

    out = []
    cases = ("hostile/dump_crlf/baseline", "scenarios/multi_rank/baseline", "scenarios/crash_midway/baseline")
    for case in cases:
        out.append(("counts.yaml", snapshot.dump(take_snapshot(FIXTURES / case)).encode()))
    return out


# ------------------------------------------------------------------------------------- the whole CLI


@lru_cache(maxsize=1)
def _cli_pair_template() -> Path:
    """A small pair with every artifact kind: log, dumps, tensors, config layers, cli_args, order file."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_hostile_fixtures as h

    root = Path(os.environ.get("AD_DIFF_FUZZ_TMP", "/dev/shm" if Path("/dev/shm").is_dir() else "/tmp"))
    dest = root / f"ad_diff_fuzz_pair_{os.getpid()}"
    shutil.rmtree(dest, ignore_errors=True)
    b, c = h.write_run(dest / "baseline"), h.write_run(dest / "candidate")
    for run, shift in ((b, 0.0), (c, 0.5)):
        h.write_tensors(run, {"logits": ("F32", (4, 4), h.f32([x + shift for x in h.LOGITS]))})
        (run / "config").mkdir()
        (run / "config" / "default.yaml").write_text(
            "transforms:\n  export_to_gm: {stage: export}\n  match_rope_pattern: {stage: pattern_matcher}\n"
            "  compile_model: {stage: compile}\nworld_size: 1\n")
    (c / "config" / "model_x.yaml").write_text("transforms:\n  match_rope_pattern: {enabled: false}\n")
    (c / "config" / "cli_args.txt").write_text("--args.world_size=2 --args.compile_backend=torch-opt\n")
    (c / "config" / "layers.txt").write_text("default.yaml\nmodel_x.yaml\n")
    return dest


def _cli_seeds() -> list[Seed]:
    cand = _cli_pair_template() / "candidate"
    return [(p.relative_to(cand).as_posix(), p.read_bytes()) for p in sorted(cand.rglob("*")) if p.is_file()]


def _cli_case(seed: Seed, data: bytes, scratch: Path) -> Path:
    case = scratch / "case"
    shutil.rmtree(case, ignore_errors=True)
    shutil.copytree(_cli_pair_template(), case)
    (case / "candidate" / seed[0]).write_bytes(data)
    (case / "outside.yaml").write_text(f"{CANARY}: 1\ntransforms: {{{CANARY}: {{stage: export}}}}\n")
    return case


def run_cli(seed: Seed, data: bytes, scratch: Path) -> None:
    """The whole comparison in-process, the way ``ad-diff compare`` runs it: pipeline, gate, and every
    report written (terminal on a UTF-8 stdout, markdown at a small and the full limit, JSON, JUnit)."""
    from ad_diff import gate, pipeline
    from ad_diff.cli.options import ResolvedOptions
    from ad_diff.cli.output import write_reports
    from ad_diff.settings import Settings

    case = _cli_case(seed, data, scratch)
    try:
        result = pipeline.run(Settings(baseline=case / "baseline", candidate=case / "candidate"))
    except AdDiffError as e:  # credentials in it are redacted when printed; a file outside is never read
        if CANARY in str(e):
            raise Leak("an error message shows the outside canary") from None
        return
    verdict = gate.judge(result.findings, result.groups, "error")
    out = scratch / "out"
    for fmt, limit in (("terminal", 65_536), ("markdown", 1000), ("json", 65_536)):
        opts = ResolvedOptions(
            {"color": False, "comment_limit": limit, "format": fmt, "markdown": out / "r.md",
             "json": out / "r.json", "junit": out / "r.xml", "step_summary": out / "summary.md"},
            config_note="settings from ./.ad-diff.yaml (found in the current folder): fail_on=never")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            write_reports(opts, result, verdict)
        buf.getvalue().encode("utf-8")  # what a UTF-8 stdout would do with it
        check_leaks(buf.getvalue())
        if fmt == "terminal":
            check_terminal(buf.getvalue())
        if len((out / "r.md").read_text(encoding="utf-8")) > limit:
            raise AssertionError(f"markdown report longer than --comment-limit {limit}")
    _check_report_files(out)


def _check_report_files(out: Path) -> None:
    """Every report file in ``out`` through its medium's own check, and the leak check."""
    import xml.etree.ElementTree as ET

    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(out.iterdir()) if p.is_file()}
    check_leaks(*texts.values())
    for name, text in texts.items():
        if name.endswith(".json"):
            check_json(text)
        elif name.endswith(".xml"):
            ET.fromstring(text)
            check_visible(text)
        elif name.endswith(".csv"):
            check_csv(text)
            check_visible(text)
        else:
            check_visible(text)


def run_cli_subprocess(seed: Seed, data: bytes, scratch: Path) -> None:
    """The real command line in a child process: exit 0, 1 or 2 and never a traceback."""
    case = _cli_case(seed, data, scratch)
    # this checkout first, then whatever the fuzz run's environment put on the path (extra site folders)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "120"}
    env.pop("AD_DIFF_DEBUG", None)
    def limits() -> None:  # CPU time, not wall time: a busy machine must not turn into hangs
        resource.setrlimit(resource.RLIMIT_CPU, (CLI_CPU_SECONDS, CLI_CPU_SECONDS + 5))

    try:
        proc = subprocess.run([sys.executable, "-m", "ad_diff", str(case / "baseline"),
                               str(case / "candidate"),
                               "--markdown", str(scratch / "r.md"), "--json", str(scratch / "r.json"),
                               "--junit", str(scratch / "r.xml"), "--comment-limit", "1000"],
                              cwd=scratch, env=env, capture_output=True, text=True, timeout=600,
                              errors="replace", preexec_fn=limits)
    except subprocess.TimeoutExpired:
        raise CliHang("blocked for 600 s") from None
    if proc.returncode == -signal.SIGXCPU:
        raise CliHang(f"over {CLI_CPU_SECONDS} CPU seconds")
    if proc.returncode not in (0, 1, 2) or "Traceback" in proc.stderr + proc.stdout:
        raise CliCrash(proc.returncode, proc.stderr[-2000:])
    if proc.returncode == 2 and not proc.stderr.startswith("ad-diff: error: "):
        raise CliCrash(proc.returncode, "exit 2 without the error line: " + proc.stderr[-2000:])
    outputs = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(scratch.glob("r.*"))]
    check_leaks(proc.stdout, proc.stderr, *outputs)


HOSTILE_NAMES: list[Seed] = [
    ("name", b"\x1b[2J\x1b[H\x1b[32mPASS: no regression\x1b[0m"),
    ("name", b"\x1b]52;c;cm0gLXJmIH4=\x07title\x1b]0;owned\x1b\\"),
    ("name", "rope\u202egnp.exe\u200b\u2066x\u2069".encode()),
    ("name", b"=HYPERLINK(\"http://x\",\"y\")<script>alert(1)</script>]]></x>&amp;|*_`"),
    ("name", b"\x9b2J\x90dcs\x9c\x07\x08\x7fbell"),
    ("name", b"password=hunter2hunter2 AKIAABCDEFGHIJKLMNOP"),
]
"""Hostile strings (terminal escapes, bidi and zero-width characters, markup, formula, controls); the
mutated bytes become the string pushed into every field of a run pair."""
SINK_TOKENS = (
    b"\x1b[", b"\x1b]", b"\x1bP", b"\x1b_", b"\x1b\\", b"\x07", b"\x9b", b"\x9d", b"\r", b"\x00", b"\x85",
    "\u202e".encode(), "\u200b".encode(), "\u2028".encode(), "\ufeff".encode(), b"=", b"+", b"@", b"<", b"&",
    b"]]>", b"|", b"`", b"\n", b"\t", b"%", b"\\",
)


def _hostile_pair(name: str, scratch: Path) -> Path:
    """A pair whose candidate carries ``name`` in a transform's failure message, a noise line, a tensor name,
    a config key and value, and a node name of its final dump."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_hostile_fixtures as h

    case = scratch / "sinkcase"
    shutil.rmtree(case, ignore_errors=True)
    b = h.write_run(case / "baseline")
    log = h.log_text()
    log += f"[AUTO-DEPLOY] [WARNING] {name}\n"
    log = log.replace("transform=cleanup_noop_slice] [SUMMARY] matches=0",
                      "transform=cleanup_noop_slice] Transform cleanup_noop_slice failed: " + name
                      + "\n[AUTO-DEPLOY] [INFO] [RANK 0] [stage=post_export, transform=cleanup_noop_slice] "
                      "[SUMMARY] skipped")
    c = h.write_run(case / "candidate", log=log)
    token = "".join(ch if ch.isidentifier() or ch.isdigit() else "_" for ch in name)[:40] or "x"
    final = sorted((c / "graphs").iterdir())[-1]
    final.write_text(final.read_text().replace("%out", f"%out_{token}").replace("out_" + token + " =",
                     "out_" + token + " ="), encoding="utf-8")
    for run, shift in ((b, 0.0), (c, 0.5)):
        h.write_tensors(run, {"logits": ("F32", (4, 4), h.f32([x + shift for x in h.LOGITS])),
                              name or "empty": ("F32", (4,), h.f32([1.0, 2.0, 3.0, 4.0 + shift]))})
        (run / "config").mkdir()
        (run / "config" / "default.yaml").write_text(
            "transforms:\n  export_to_gm: {stage: export}\n  compile_model: {stage: compile}\n"
            "world_size: 1\n")
    import yaml

    (c / "config" / "model_x.yaml").write_text(
        yaml.safe_dump({"transforms": {"compile_model": {"backend": name}}, name or "k": name}),
        encoding="utf-8")
    return case


def run_sinks(seed: Seed, data: bytes, scratch: Path) -> None:
    """One hostile string through every field of a run pair into every report medium (terminal, markdown,
    HTML, JSON, JUnit, step summary), each output checked with its medium's rule."""
    from ad_diff import gate, pipeline
    from ad_diff.cli.options import ResolvedOptions
    from ad_diff.cli.output import write_reports
    from ad_diff.settings import Settings

    name = data.decode("utf-8", "replace").replace("\x00", "")[:200]
    try:
        case = _hostile_pair(name, scratch)
    except (OSError, ValueError):  # a name the file system or YAML cannot hold: nothing to render
        return
    try:
        result = pipeline.run(Settings(baseline=case / "baseline", candidate=case / "candidate"))
    except AdDiffError:
        return
    verdict = gate.judge(result.findings, result.groups, "error")
    out = scratch / "sinkout"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    for fmt in ("terminal", "markdown", "json"):
        opts = ResolvedOptions(
            {"color": False, "comment_limit": 65_536, "format": fmt, "markdown": out / "r.md",
             "json": out / "r.json", "junit": out / "r.xml", "step_summary": out / "summary.md",
             "html": out / "r.html"})
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            write_reports(opts, result, verdict)
        check_leaks(buf.getvalue())
        {"terminal": check_terminal, "markdown": check_visible, "json": check_json}[fmt](buf.getvalue())
    _check_report_files(out)


def _history_root(scratch: Path) -> Path:
    """Three flat run folders (ad.log + run.json) of one model, the last losing a match."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from benchgen.history import Event, make_history

    root = scratch / "hist"
    if not root.is_dir():
        make_history(root, runs=4, models=("m",), n_transforms=6, kind="run", layout="flat",
                     events=(Event("m", "t003", 0, 4), Event("m", "t003", 3, 1)))
    return root


def _history_seeds() -> list[Seed]:
    import tempfile

    root = _history_root(Path(tempfile.mkdtemp(prefix="ad_diff_hist_seed_")))
    last = sorted(p for p in root.iterdir() if p.is_dir())[-1]
    seeds = [(f"{last.name}/{p.name}", p.read_bytes()) for p in sorted(last.iterdir()) if p.is_file()]
    seeds.append(("cache.json", b'{"version": 1, "rows": {}}'))
    return seeds


def run_history(seed: Seed, data: bytes, scratch: Path) -> None:
    """``ad-diff history`` on a small history whose last run's log, run.json (or the --cache file) is the
    mutated input: every renderer and the CSV table, each checked by its medium's rule."""
    from ad_diff.history import HistoryOptions, export, render, run_history, serialize

    root = scratch / "histcase"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(_history_root(scratch / "histtemplate"), root)
    cache = None
    if seed[0] == "cache.json":
        cache = _write(scratch, "cache.json", data)
    else:
        (root / seed[0]).write_bytes(data)
    try:
        h = run_history(root, HistoryOptions(cache=cache))
    except AdDiffError:
        return
    out = scratch / "histout"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    # as `ad-diff history` writes them: every text through the CLI's last pass (redaction, sinks)
    from ad_diff.cli.output import safe_text

    terminal = safe_text(render.render_terminal(h, color=False, width=80))
    check_leaks(terminal)
    check_terminal(terminal)
    (out / "h.md").write_text(safe_text(render.render_markdown(h)), encoding="utf-8")
    (out / "h.json").write_text(safe_text(serialize.render_json(h)), encoding="utf-8")
    with contextlib.suppress(AdDiffError):
        export.write_table(h, out / "h.csv")
    _check_report_files(out)


def _candidates_seeds() -> list[Seed]:
    out: list[Seed] = []
    for case in ("unfused", "moe", "moe_grouped", "edges"):
        for p in sorted((FIXTURES / "candidates" / case / "graphs").glob("*.txt"))[-1:]:
            out.append((f"{case}/{p.name}", p.read_bytes()))
    return out


def run_candidates(seed: Seed, data: bytes, scratch: Path) -> None:
    """``ad-diff candidates`` on a run whose final dump is the mutated input, through every renderer."""
    from ad_diff.candidates import find_candidates, render
    from ad_diff.candidates.terminal import render_terminal

    run = scratch / "candrun"
    shutil.rmtree(run, ignore_errors=True)
    (run / "graphs").mkdir(parents=True)
    (run / "graphs" / Path(seed[0]).name).write_bytes(data)
    try:
        report = find_candidates(run)
    except AdDiffError:
        return
    check_terminal(render_terminal(report, 100, color=False))
    check_visible(render.render_markdown(report), render.render_text(report))
    check_json(render.render_json(report))


CLI_CPU_SECONDS = 20
"""CPU time after which one command line counts as hung (Python start and imports take about 1 s)."""


class CliHang(Exception):
    """The command line ran out of its CPU time or blocked."""


class CliCrash(Exception):
    """The command line exited 3 (or worse), or printed a traceback."""

    def __init__(self, code: int, stderr: str) -> None:
        self.code = code
        last = [ln for ln in stderr.splitlines() if ln.strip()]
        super().__init__(f"exit {code}: {last[-1] if last else ''}")


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("log", lambda: _files("parsers/log/*.log", "hostile/*/candidate/ad.log"), LOG_TOKENS, run_log, 20),
    Target("dump", lambda: _files("parsers/dump/*.txt", "hostile/markup_names/candidate/graphs/*.txt"),
           DUMP_TOKENS, run_dump, 20),
    Target("safetensors_header", _safetensors_seeds, JSON_TOKENS, run_safetensors, 20),
    Target("pt", _pt_seeds, PICKLE_TOKENS, run_pt, 6),
    Target("ad_config", _config_seeds, YAML_TOKENS + JSON_TOKENS, run_ad_config, 6),
    Target("settings", lambda: SETTINGS_SEEDS, YAML_TOKENS + TOML_TOKENS, run_settings, 12),
    Target("expected_changes", lambda: EXPECTED_SEEDS, YAML_TOKENS, run_expected, 9),
    Target("snapshot", _snapshot_seeds, YAML_TOKENS, run_snapshot, 5),
    Target("cli", _cli_seeds, YAML_TOKENS + LOG_TOKENS + DUMP_TOKENS + JSON_TOKENS, run_cli, 2),
    Target("sinks", lambda: HOSTILE_NAMES, SINK_TOKENS, run_sinks, 0.3),
    Target("history", _history_seeds, YAML_TOKENS + LOG_TOKENS + JSON_TOKENS, run_history, 1),
    Target("candidates", _candidates_seeds, DUMP_TOKENS, run_candidates, 1),
    Target("cli_subprocess", _cli_seeds, YAML_TOKENS + LOG_TOKENS + DUMP_TOKENS, run_cli_subprocess, 0.015,
           60),
)}
"""Every target by name."""


def _round5() -> None:
    """Add issue 45's targets (tests/fuzz/targets_round5.py: the bounded JSON reader, the escapers)."""
    from tests.fuzz.targets_round5 import TARGETS_ROUND5

    for name, (seeds, tokens, run, weight) in TARGETS_ROUND5.items():
        TARGETS[name] = Target(name, seeds, tokens, run, weight)


_round5()


def preload() -> None:
    """Import what the targets import lazily (torch, deepdiff, rich), so that the first input's time limit
    does not interrupt an import halfway (leaving a broken module behind)."""
    import deepdiff  # noqa: F401
    import rich.console  # noqa: F401
    import torch  # noqa: F401

    import ad_diff.cli.output  # noqa: F401
    import ad_diff.pipeline  # noqa: F401
