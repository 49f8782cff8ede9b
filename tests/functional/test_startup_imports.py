"""What the common commands must not import (issue 15): ``--help`` loads only the CLI, a log-only comparison
none of the graph, tensor or report-markdown code, and a comparison of logs, dumps and safetensors files
no torch. Checked as module sets in a fresh interpreter, never as timings (those live in scripts/bench.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, make_run, v3

PROBE = """
import json, os, sys
from ad_diff.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
with open(os.environ["AD_DIFF_PROBE"], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""
NEVER = ("torch", "pandas", "deepdiff", "matplotlib", "scipy")
"""Never imported by a comparison whose inputs do not need them (torch: only .pt files or a CUDA device)."""
LIGHT = (*NEVER, "numpy", "yaml", "rich", "jinja2")
"""Not imported where no tensor, YAML file, terminal or HTML report is involved."""


def _run(tmp_path: Path, *args: str | Path) -> tuple[int, str, set[str]]:
    """Exit code, stdout and the modules loaded by one ``ad-diff`` call in a fresh interpreter."""
    probe = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AD_DIFF_PROBE": str(probe)}
    env.pop("AD_DIFF_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert probe.is_file(), proc.stderr
    data = json.loads(probe.read_text())
    return data["code"], proc.stdout, set(data["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The packages of ``names`` (with any submodule) found in ``modules``."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


def test_help_loads_only_the_cli(tmp_path: Path) -> None:
    code, out, modules = _run(tmp_path, "--help")
    assert code == 0
    assert "Usage" in out
    assert "compare" in out
    assert _loaded(modules, LIGHT) == []
    # the reporters, the kinds and the finding model are built only when a comparison runs
    inner = ("ad_diff.kinds", "ad_diff.pipeline", "ad_diff.report.markdown", "ad_diff.core.model",
             "ad_diff.gate")
    assert _loaded(modules, inner) == []


def test_log_only_comparison_loads_no_graph_or_tensor_code(tmp_path: Path) -> None:
    lines = v3("pattern_matcher", "match_rope_pattern", "matches=4")
    base = make_run(tmp_path / "base", lines)
    cand = make_run(tmp_path / "cand", v3("pattern_matcher", "match_rope_pattern", "matches=3"))
    code, out, modules = _run(tmp_path, base, cand, "-f", "json")
    assert code == 1  # the lost match gates: the comparison really ran
    assert any(f["category"] == "match_loss" for f in json.loads(out)["findings"])
    assert _loaded(modules, LIGHT) == []
    heavy_parts = ("ad_diff.kinds.graph.model", "ad_diff.kinds.graph.parse", "ad_diff.kinds.graph.analysis",
                   "ad_diff.kinds.graph.diff", "ad_diff.discover.dumps", "ad_diff.kinds.tensors.model",
                   "ad_diff.kinds.tensors.analysis", "ad_diff.report.markdown",
                   # neither run holds a config: its model, loader and parser stay unloaded
                   "ad_diff.kinds.config.model", "ad_diff.kinds.config.parse", "ad_diff.kinds.config.load",
                   # only the command that runs is registered
                   "ad_diff.cli.ci", "ad_diff.cli.fusion", "ad_diff.cli.history",
                   # the graph kind's alignment, the other formats' renderers, what graph and config kinds
                   # tell the others, a snapshot baseline's reader, the naming of anonymous results
                   "ad_diff.kinds.graph.index", "ad_diff.kinds.graph.align", "ad_diff.report.html",
                   "ad_diff.report.terminal", "ad_diff.core.kindfacts", "ad_diff.discover.snapshot",
                   "ad_diff.kinds.log.attribute",
                   # nothing drifted: the tensor kind's cause search and titles stay unloaded
                   "ad_diff.kinds.tensors.causes")
    assert _loaded(modules, heavy_parts) == []


def test_logs_dumps_and_safetensors_load_no_torch(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_hostile_fixtures import LOGITS, f32, write_tensors  # type: ignore[import-not-found]

    scen = ROOT / "fixtures/scenarios/rename_only"
    for side, shift in (("baseline", 0.0), ("candidate", 1e-3)):
        shutil.copytree(scen / side, tmp_path / side)
        write_tensors(tmp_path / side, {"logits": ("F32", (4, 4), f32([x + shift for x in LOGITS]))})
        write_tensors(tmp_path / side, {"linear_2": ("BF16", (2, 8), bytes(32))}, name="nodes")
    code, out, modules = _run(tmp_path, tmp_path / "baseline", tmp_path / "candidate", "-f", "json")
    sections = json.loads(out)["sections"]
    assert code in (0, 1)
    # both analyses ran: the dumps were parsed and the safetensors files read (with numpy, not torch)
    assert "graph" in sections
    assert {c["name"] for c in sections["tensors"]["comparisons"]} >= {"logits"}
    assert "ad_diff.kinds.graph.parse" in modules
    assert "numpy" in modules
    assert _loaded(modules, NEVER) == []


def test_the_program_imports_the_cli_with_the_collector_off_and_frozen_out(tmp_path: Path) -> None:
    """``python -m ad_diff`` and the ``ad-diff`` script (``ad_diff.__main__:main``) import the CLI with the
    cyclic collector off and freeze what it built out of later collections; collection is on again after."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["ad-diff"] == "ad_diff.__main__:main"
    probe = ("import gc, json; import ad_diff.__main__ as m; "
             "print(json.dumps([gc.isenabled(), gc.get_freeze_count() > 1000, callable(m.main)]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert json.loads(proc.stdout) == [True, True, True], proc.stderr
