"""Documentation stays in sync with the code: rule codes, categories, CLI commands and options, formats."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ad_diff.catalog import RULES
from ad_diff.cli.app import app, load_commands
from ad_diff.core.rules import CATEGORIES
from tests.conftest import ROOT, run_cli

load_commands()  # every command registered, as `ad-diff --help` has them

#: Where each command is documented: its own page, or its section (`## \`ad-diff NAME\``) of docs/cli.md.
COMMAND_PAGES = {"candidates": "docs/candidates.md", "note": "docs/note.md", "history": "docs/history.md"}
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


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
        assert res.code == 0, name
        assert "Usage" in res.out, name
        assert f"ad-diff {name}" in readme or name == "compare", f"command {name} is not in README.md"


def _command_doc(name: str) -> str:
    if name in COMMAND_PAGES:
        return (ROOT / COMMAND_PAGES[name]).read_text()
    doc = (ROOT / "docs/cli.md").read_text()
    head = f"## `ad-diff {name}`"
    assert head in doc, f"docs/cli.md has no section {head}"
    return doc.split(head, 1)[1].split("\n## ", 1)[0]


def _commands() -> dict[str, object]:
    import typer.main

    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(c.name or c.callback.__name__ for c in app.registered_commands))
def test_every_option_of_every_command_is_documented_where_the_command_is(name: str) -> None:
    section = _command_doc(name)
    for param in _commands()[name].params:  # type: ignore[attr-defined]
        if param.param_type_name != "option" or param.name == "help":
            continue
        # A boolean flag documents its positive form; an option with a short form may use either.
        assert any(o in section for o in param.opts), f"{name}: {'/'.join(param.opts)} is not documented"


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
    assert "ad-diff record" in runs
    assert "--step-summary" in runs
    compare_help = run_cli("compare", "--help").out
    compare_line = next(s["run"] for s in steps if s.get("name") == "Compare")
    for opt in re.findall(r"(--[a-z][a-z-]+)", compare_line):
        assert opt in compare_help, f"workflow uses unknown option {opt}"
    assert (ROOT / "docs/github-actions.md").read_text().count("examples/github-workflow.yml") >= 1


def test_example_workflows_verdict_step_runs_whatever_happened_before_it() -> None:
    """The job's result is the verdict: the comment cannot fail the job, and the step that turns the verdict
    into the job's result runs after any failure (GitHub's `if:` semantics, tests/composite.py)."""
    import yaml

    from tests.composite import condition

    steps = {s.get("name"): s for s in
             yaml.safe_load((ROOT / "examples/github-workflow.yml").read_text())["jobs"]["ad-diff"]["steps"]}
    assert steps["Post or update the PR comment"].get("continue-on-error") is True
    gate = steps["Fail on regression"]["if"]
    ok = {"success": True, "failure": False, "always": True, "cancelled": False}
    for status in (ok, {**ok, "success": False, "failure": True}):
        for outcome in ("success", "failure"):
            ctx = {"steps": {"compare": {"outcome": outcome}}}
            assert condition(gate, ctx, status) is (outcome == "failure")


def test_formats_page_explains_every_code_the_reports_show() -> None:
    from ad_diff.core.model import State
    from ad_diff.kinds.log.model import LogEnd

    doc = (ROOT / "docs/formats.md").read_text()
    for code in ("V0", "V1", "V2", "V3", "L1", "L2", "L3", "bare", "D1", "D2", "D3"):
        assert f"| `{code}` |" in doc, f"docs/formats.md has no table row for {code}"
    for value in [s.value for s in State] + [e.value for e in LogEnd]:
        assert f"| `{value}` |" in doc, f"docs/formats.md does not explain `{value}`"
    for code in re.findall(r"`(AD[A-Z]\d{3})`", doc):
        assert code in {r.code for r in RULES}, f"docs/formats.md names unknown rule {code}"
    assert "Capture forms" in doc
    assert "Restored AutoDeploy pipeline snapshot" in doc


def test_no_doc_points_at_the_missing_formats_file() -> None:
    for path in DOCS:
        assert "FORMATS.md" not in path.read_text(), f"{path.name} cites FORMATS.md; link docs/formats.md"
    for path in (ROOT / "README.md", ROOT / "docs/cli.md", ROOT / "docs/config-in-runs.md"):
        assert "formats.md" in path.read_text(), f"{path.name} does not link docs/formats.md"


def _slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_relative_links_in_docs_resolve() -> None:
    for path in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file) if file else path
            assert dest.exists(), f"{path.name}: link to missing {target}"
            if anchor and dest.suffix == ".md":
                heads = {_slug(h) for h in re.findall(r"^#+ (.*)$", dest.read_text(), re.M)}
                assert anchor in heads, f"{path.name}: link to missing anchor {target}"


def _pip_installs(text: str) -> list[list[str]]:
    """The requirement words of each ``pip install`` command in ``text`` (up to ``&&``, ``;`` or line end)."""
    out = []
    for args in re.findall(r"pip install ([^\n;&`]*)", text):
        out.append([w.strip("\"'") for w in args.split() if not w.startswith("-")])
    return out


@pytest.mark.parametrize("path", ["examples/github-workflow.yml", "docs/github-actions.md", "README.md"])
def test_installs_from_the_repository_not_from_pypi(path: str) -> None:
    import yaml

    text = (ROOT / path).read_text()
    if path.endswith(".yml"):
        steps = yaml.safe_load(text)["jobs"]["ad-diff"]["steps"]
        commands = "\n".join(s.get("run", "") for s in steps)
        install = next(s["run"] for s in steps if s.get("name") == "Install ad-diff")
        assert "git+https://" in install or re.search(r"pip install (-e )?\.{0,2}/", install), install
    else:  # what a reader copies: the code blocks (prose may say that `pip install ad-diff` fails)
        commands = "\n".join(re.findall(r"```[a-z]*\n(.*?)```", text, re.S))
    for words in _pip_installs(commands):
        # ad-diff is not on PyPI: a bare `ad-diff` (or `ad-diff[extra]`) requirement can never install.
        bare = [w for w in words if re.fullmatch(r"ad-diff(\[[\w,]+\])?", w)]
        assert not bare or "@" in words, f"{path}: `pip install {' '.join(words)}` asks PyPI for ad-diff"


def test_readme_setup_commands_run_on_a_fresh_clone() -> None:
    setup = (ROOT / "README.md").read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n```", setup, re.S)
    assert len(blocks) == 2, "README's Set up keeps exactly two commands"
    assert all(b.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install") for b in blocks)
    # The example pair the first command runs is committed, and the second command runs the tests.
    pair = re.search(r"ad-diff (\S+) (\S+)$", blocks[0])
    assert pair is not None
    assert all((ROOT / p / "ad.log").is_file() for p in pair.groups())
    assert blocks[1].endswith("python -m pytest")
    assert "this machine" not in setup, "the set-up is described for any user, not one machine"
    tracked = subprocess.run(["git", "ls-files", "--error-unmatch", *pair.groups()], cwd=ROOT,
                             capture_output=True)
    assert tracked.returncode == 0, "the README's example pair is not committed"
