"""Hostile and broken input (fixtures/hostile/manifest.yaml): the CLI ends every case in the expected
report or a clear exit-2 error, never a traceback, never a hang, within 5 CPU-seconds and 1 GiB of memory
(unless the case says otherwise), leaks nothing from outside the run folders, and writes nothing outside
the output paths it was given."""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ad_diff.core.sinks import unsafe
from tests.conftest import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from make_hostile_fixtures import CASES, EVIL, RUNTIME_ONLY, build_case  # noqa: E402

HOSTILE = FIXTURES / "hostile"
MANIFEST: dict[str, dict[str, Any]] = yaml.safe_load((HOSTILE / "manifest.yaml").read_text())["cases"]
MEMORY_LIMIT = 4 << 30
"""Address-space limit of the child (4 GiB): the CPU build of torch alone reserves about 1 GiB of it; the
memory actually used (peak RSS) is held to the case's bound, 1 GiB by default."""
TIMEOUT = 300
"""Wall-clock backstop; the bound that counts is CPU time (a shared CI machine is slow, not the input)."""
DEFAULT_BOUNDS = {"cpu_s": 5.0, "rss_mib": 1024}
"""Per case: CPU-seconds beyond starting Python and importing torch (about 4 CPU-seconds by themselves),
and peak RSS in MiB (torch's import included)."""
IS_ROOT = os.geteuid() == 0


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@dataclass
class Run:
    """One finished child: exit code, output and what it cost."""

    returncode: int
    stdout: str
    stderr: str
    cpu_s: float
    rss_mib: float


def _spawn(args: list[str], cwd: Path, env: dict[str, str], scratch: Path) -> Run:
    """Run ``args`` and measure that child alone (``os.wait4``), under the memory limit and a timeout."""
    scratch.mkdir(parents=True, exist_ok=True)
    out_p, err_p = scratch / "stdout.txt", scratch / "stderr.txt"
    with out_p.open("wb") as out, err_p.open("wb") as err:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err, preexec_fn=_limit_memory)
        deadline = time.monotonic() + TIMEOUT
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise AssertionError(f"{args} did not finish within {TIMEOUT} s")
            time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Run(proc.returncode, out_p.read_text(errors="replace"), err_p.read_text(errors="replace"),
               usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` with a digest of its content (links, FIFOs and unreadable files by kind)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):  # os.walk does not follow links: loops are safe
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + str(p.readlink())
            elif p.is_fifo():
                out[rel] = "fifo"
            elif p.is_file():
                try:
                    out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
                except PermissionError:
                    out[rel] = "unreadable"
            else:
                out[rel] = "dir"
    return out


def _case_dir(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / "case"
    if name in RUNTIME_ONLY:
        return build_case(name, dest)
    shutil.copytree(HOSTILE / name, dest, symlinks=True)
    return dest


def _run(case: Path, work: Path, out: Path, *extra: str, command: str = "compare") -> Run:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("AD_DIFF_DEBUG", None)
    if command == "candidates":  # the candidate run's dumps; the JSON report holds the notes
        cmd = ["candidates", str(case / "candidate"), "-f", "json", "-o", str(out / "report.json")]
    else:  # compare two runs, or batch two roots of runs: the same three reports
        cmd = [*(["batch"] if command == "batch" else []), str(case / "baseline"), str(case / "candidate"),
               "--markdown", str(out / "report.md"), "--json", str(out / "report.json"),
               "--junit", str(out / "report.xml")]
    return _spawn([sys.executable, "-m", "ad_diff", *cmd, *extra], work, env, case.parent / "proc")


@pytest.fixture(scope="session")
def startup_cpu(tmp_path_factory: pytest.TempPathFactory) -> float:
    """CPU time of starting Python with ad-diff's CLI and torch imported: the fixed cost of every run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scratch = tmp_path_factory.mktemp("startup")
    runs = [_spawn([sys.executable, "-c", "import torch, ad_diff.cli.app"], scratch, env, scratch)
            for _ in range(2)]
    return min(r.cpu_s for r in runs)


def _outside_code(md: str) -> str:
    """The markdown with fenced blocks and inline code spans removed: what GitHub would render as prose."""
    md = re.sub(r"(?ms)^(`{3,}).*?^\1\s*$", "", md)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", md)


def test_manifest_lists_every_case_and_committed_fixtures_are_current(tmp_path: Path) -> None:
    assert set(MANIFEST) == set(CASES)
    for name in CASES:
        if name in RUNTIME_ONLY:
            assert not (HOSTILE / name).exists(), f"{name} is built at test time and must not be committed"
            continue
        fresh = build_case(name, tmp_path / name)
        assert _tree(fresh) == _tree(HOSTILE / name), f"fixtures/hostile/{name} is stale: rerun the generator"


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(name: str, tmp_path: Path, startup_cpu: float) -> None:
    spec = MANIFEST[name]
    if name == "unreadable" and IS_ROOT:
        pytest.skip("root reads mode-000 files; test_unreadable_dump_simulated covers the denial")
    case = _case_dir(name, tmp_path)
    work, out = tmp_path / "work", tmp_path / "out"
    if (case / "work").is_dir():
        shutil.copytree(case / "work", work)
    work.mkdir(exist_ok=True)
    before, work_before = _tree(case), _tree(work)
    extra = [a.replace("{case}", str(case)) for a in spec.get("args", [])]
    command = spec.get("command", "compare")
    proc = _run(case, work, out, *extra, command=command)

    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == spec["exit_code"], proc.stderr
    bounds = {**DEFAULT_BOUNDS, **spec.get("bounds", {})}
    cost = f"{proc.cpu_s:.1f} CPU-seconds ({startup_cpu:.1f} of them startup)"
    assert proc.cpu_s - startup_cpu <= bounds["cpu_s"], cost
    assert proc.rss_mib <= bounds["rss_mib"], f"{proc.rss_mib:.0f} MiB peak RSS"
    # nothing written outside the outputs we named: not in the runs, not in the working directory
    assert _tree(case) == before
    assert _tree(work) == work_before, "ad-diff (or a pickle it loaded) wrote into the working directory"
    written = {p.name for p in out.iterdir()} if out.exists() else set()
    assert written <= {"report.md", "report.json", "report.xml"}
    outputs = proc.stdout + proc.stderr + "".join(
        (out / n).read_text(errors="replace") for n in sorted(written))
    for s in spec.get("report_absent", []):
        assert s not in outputs, f"{s!r} leaked into an output"
    raw = sorted({repr(ch) for ch in outputs if unsafe(ch)})  # the sink layer: nothing acts on the reader
    assert not raw, f"raw control, bidi or zero-width characters in an output: {raw}"
    for s in spec.get("shown", []):
        assert s in proc.stdout, f"{s!r} not shown on the terminal"
    if "report.json" in written:  # strict JSON: a parser that rejects NaN and Infinity reads it
        json.loads((out / "report.json").read_text(), parse_constant=_no_constant)
    if command == "batch":  # a model's input error is its own row of the report, not the batch's error
        _check_batch(spec, case, json.loads((out / "report.json").read_text()))
        return
    if spec["exit_code"] == 2:
        assert proc.stderr.startswith("ad-diff: error: ")
        for s in spec["stderr"]:
            assert s in proc.stderr
        if spec.get("names_file", True):  # the message names the file (a run's, or the working folder's)
            assert str(case) in proc.stderr or str(work) in proc.stderr
        return
    for s in spec.get("stderr", []):
        assert s in proc.stderr
    report = json.loads((out / "report.json").read_text())
    if command == "candidates":
        notes = "\n".join(report["notes"])
        for s in spec.get("notes", []):
            assert s.replace("{case}", str(case)) in notes, notes
        return
    codes = {f["code"] for f in report["findings"]}
    assert set(spec.get("codes", [])) <= codes, codes
    assert not set(spec.get("absent_codes", [])) & codes
    if spec.get("codes") == []:
        assert not [f for f in report["findings"] if f["severity"] != "info"], report["findings"]
    messages = " ".join(f["message"] for f in report["findings"])
    for s in spec.get("message", []):
        assert s in messages
    if spec["exit_code"] == 0:
        assert report["verdict"] != "fail" or report["fail_on"] == "never"
    md = (out / "report.md").read_text()
    for s in spec.get("markdown_absent", []):
        assert s not in md
    for s in spec.get("markdown_present", []):
        assert s in md
    prose = _outside_code(md)
    for s in spec.get("markdown_inert", []):
        assert s in md, f"{s!r} should still be shown"
        assert s not in prose, f"{s!r} outside code would act on GitHub"


def _no_constant(name: str) -> None:
    raise AssertionError(f"the JSON report holds a bare {name}")


def _check_batch(spec: dict[str, Any], case: Path, report: dict[str, Any]) -> None:
    """Every model of the batch report has the status the case says, and its error the substrings."""
    rows = {m["name"]: m for m in report["models"]}
    assert set(rows) == set(spec["models"]), rows
    for name, want in spec["models"].items():
        assert rows[name]["status"] == want["status"], rows[name]
        for s in want.get("error", []):
            assert s.replace("{case}", str(case)) in (rows[name].get("error") or ""), rows[name]


def test_markup_names_are_literal_in_the_terminal(tmp_path: Path) -> None:
    case = _case_dir("markup_names", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"}
    proc = subprocess.run([sys.executable, "-m", "ad_diff", str(case / "baseline"), str(case / "candidate")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 1
    # rich markup in a name is printed as text, not interpreted (and not swallowed)
    assert "[bold]red[/bold]" in proc.stdout
    assert EVIL.split("|")[0] in proc.stdout


def test_pickle_payload_never_runs(tmp_path: Path) -> None:
    case = _case_dir("pt_malicious", tmp_path)
    proc = _run(case, tmp_path, tmp_path / "out")
    assert proc.returncode == 1
    assert not (tmp_path / "ad_diff_pwned").exists()
    assert not list(ROOT.glob("ad_diff_pwned"))


# ------------------------------------------------------------------------------ permission denied
# CI runs as root, where chmod 000 blocks nothing: deny the reads in-process instead, the way the kernel
# would.


def _deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    real_open, real_read = Path.open, Path.read_bytes

    def guarded_open(self: Path, *a: Any, **k: Any) -> Any:
        if self.resolve() == denied.resolve():
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *a, **k)

    def guarded_read(self: Path) -> bytes:
        if self.resolve() == denied.resolve():
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    real_os_open = os.open

    def guarded_os_open(path: Any, *a: Any, **k: Any) -> int:
        full = Path(path)
        if k.get("dir_fd") is not None:  # the run-folder opener walks names relative to folder descriptors
            full = Path(f"/proc/self/fd/{k['dir_fd']}").readlink() / path
        if full.resolve() == denied.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(Path, "open", guarded_open)
    monkeypatch.setattr(Path, "read_bytes", guarded_read)
    monkeypatch.setattr(os, "open", guarded_os_open)


def _settings(case: Path) -> Any:
    from ad_diff.settings import Settings

    return Settings(baseline=case / "baseline", candidate=case / "candidate")


def test_unreadable_dump_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ad_diff import pipeline
    from ad_diff.gate import decide

    case = build_case("log_crlf_ansi", tmp_path / "case")
    dump = sorted((case / "candidate/graphs").iterdir())[-1]
    _deny(monkeypatch, dump)
    result = pipeline.run(_settings(case))
    (f,) = [f for f in result.findings if f.code == "ADI005"]
    assert str(dump) in f.message
    assert "permission denied" in f.message
    assert f.severity.value == "error"
    assert decide(result.findings, "error").exit_code == 1  # missing data never passes
    # the log comparison still stands: every transform is compared
    assert [r.transform for r in result.transforms][-1] == "compile_model"


def test_unreadable_log_simulated_is_exit_2_through_guarded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    from ad_diff import pipeline
    from ad_diff.cli.app import guarded

    case = build_case("log_crlf_ansi", tmp_path / "case")
    _deny(monkeypatch, case / "candidate/ad.log")
    with pytest.raises(typer.Exit) as exc:
        guarded(lambda: pipeline.run(_settings(case)))
    assert exc.value.exit_code == 2
    err = capsys.readouterr().err
    assert f"{case / 'candidate/ad.log'}: cannot be read (permission denied)" in err
    assert "Traceback" not in err


def test_unreadable_tensor_file_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ad_diff import pipeline

    case = build_case("nan_same_places", tmp_path / "case")
    _deny(monkeypatch, case / "candidate/tensors/outputs.safetensors")
    result = pipeline.run(_settings(case))
    codes = {f.code for f in result.findings}
    assert "ADT008" in codes  # the file is named,
    assert "ADT005" in codes  # and its tensor counts as missing
