"""Documentation stays in sync with the code: rule codes, categories, CLI commands and options."""

from __future__ import annotations

import re
import subprocess
import sys

from ad_diff.catalog import RULES
from ad_diff.cli.app import app
from ad_diff.core.rules import CATEGORIES
from tests.conftest import ROOT, run_cli


def test_rules_doc_is_generated_from_catalog() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_rules_doc.py", "--check"], cwd=ROOT)
    assert proc.returncode == 0, "docs/rules.md is stale: run python scripts/gen_rules_doc.py"


def test_rule_codes_unique_and_categories_known() -> None:
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"AD[A-Z]\d{3}", c) for c in codes)
    assert {r.category for r in RULES} <= set(CATEGORIES)
    assert all(len(r.doc) > 40 for r in RULES)


def test_every_command_has_help_and_is_in_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for cmd in app.registered_commands:
        name = cmd.name or cmd.callback.__name__
        res = run_cli(name, "--help")
        assert res.code == 0 and "Usage" in res.out, name
        assert f"ad-diff {name}" in readme or name == "compare", f"command {name} is not documented in README.md"


def test_compare_options_are_documented() -> None:
    doc = (ROOT / "docs/cli.md").read_text()
    out = run_cli("compare", "--help").out
    for opt in sorted(set(re.findall(r"(--[a-z][a-z-]+)", out))):
        if opt == "--help" or (opt.startswith("--no-") and f"--{opt[5:]}" in doc):
            continue  # boolean flags document their positive form
        assert opt in doc, f"{opt} missing from docs/cli.md"


def test_every_config_key_is_documented() -> None:
    from ad_diff.settings import SCHEMA

    doc = (ROOT / "docs/config.md").read_text()
    for key in SCHEMA:
        assert f"| `{key}` |" in doc, f"config key {key} missing from docs/config.md"


def test_example_workflow_uses_only_real_options() -> None:
    import yaml

    wf = (ROOT / "examples/github-workflow.yml").read_text()
    steps = yaml.safe_load(wf)["jobs"]["ad-diff"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    assert "ad-diff record" in runs and "--step-summary" in runs
    compare_help = run_cli("compare", "--help").out
    compare_line = next(s["run"] for s in steps if s.get("name") == "Compare")
    for opt in re.findall(r"(--[a-z][a-z-]+)", compare_line):
        assert opt in compare_help, f"workflow uses unknown option {opt}"
    assert (ROOT / "docs/github-actions.md").read_text().count("examples/github-workflow.yml") >= 1
