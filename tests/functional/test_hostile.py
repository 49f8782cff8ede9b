"""Hostile and broken input (fixtures/hostile/manifest.yaml): the CLI ends every case in the expected
report or a clear exit-2 error, never a traceback, never a hang, in bounded memory, and writes nothing
outside the output paths it was given."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from make_hostile_fixtures import CASES, EVIL, RUNTIME_ONLY, build_case  # noqa: E402

HOSTILE = FIXTURES / "hostile"
MANIFEST: dict[str, dict[str, Any]] = yaml.safe_load((HOSTILE / "manifest.yaml").read_text())["cases"]
MEMORY_LIMIT = 4 << 30
"""Address-space limit of the child (4 GiB): the CPU build of torch alone reserves about 1 GiB of it."""
TIMEOUT = 120
IS_ROOT = os.geteuid() == 0


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` with a digest of its content (links and unreadable files by kind)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):  # os.walk does not follow links: loops are safe
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
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


def _run(case: Path, work: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("AD_DIFF_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "ad_diff", str(case / "baseline"), str(case / "candidate"),
         "--markdown", str(out / "report.md"), "--json", str(out / "report.json"), *extra],
        cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=_limit_memory,
    )


def test_manifest_lists_every_case_and_committed_fixtures_are_current(tmp_path: Path) -> None:
    assert set(MANIFEST) == set(CASES)
    for name in CASES:
        if name in RUNTIME_ONLY:
            assert not (HOSTILE / name).exists(), f"{name} is built at test time and must not be committed"
            continue
        fresh = build_case(name, tmp_path / name)
        assert _tree(fresh) == _tree(HOSTILE / name), f"fixtures/hostile/{name} is stale: rerun the generator"


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(name: str, tmp_path: Path) -> None:
    spec = MANIFEST[name]
    if name == "unreadable" and IS_ROOT:
        pytest.skip("root reads mode-000 files; test_unreadable_dump_simulated covers the denial")
    case = _case_dir(name, tmp_path)
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    before = _tree(case)
    proc = _run(case, work, out)

    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == spec["exit_code"], proc.stderr
    # nothing written outside the outputs we named: not in the runs, not in the working directory
    assert _tree(case) == before
    assert not any(work.iterdir()), "ad-diff (or a pickle it loaded) wrote into the working directory"
    written = {p.name for p in out.iterdir()} if out.exists() else set()
    assert written <= {"report.md", "report.json"}
    if spec["exit_code"] == 2:
        assert proc.stderr.startswith("ad-diff: error: ")
        for s in spec["stderr"]:
            assert s in proc.stderr
        assert str(case) in proc.stderr  # the message names the file
        return
    report = json.loads((out / "report.json").read_text())
    codes = {f["code"] for f in report["findings"]}
    assert set(spec.get("codes", [])) <= codes, codes
    assert not set(spec.get("absent_codes", [])) & codes
    if spec.get("codes") == []:
        assert not [f for f in report["findings"] if f["severity"] != "info"], report["findings"]
    messages = " ".join(f["message"] for f in report["findings"])
    for s in spec.get("message", []):
        assert s in messages
    if spec["exit_code"] == 0:
        assert report["verdict"] != "fail"
    md = (out / "report.md").read_text()
    for s in spec.get("markdown_absent", []):
        assert s not in md
    for s in spec.get("markdown_present", []):
        assert s in md


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
# CI runs as root, where chmod 000 blocks nothing: deny the reads in-process instead, the way the kernel would.


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

    monkeypatch.setattr(Path, "open", guarded_open)
    monkeypatch.setattr(Path, "read_bytes", guarded_read)


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
    assert str(dump) in f.message and "permission denied" in f.message
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
    assert "ADT008" in codes and "ADT005" in codes  # the file is named, and its tensor counts as missing
