"""Every error names a way out that exists: each option an error message of ad-diff names is an option of the
typer app (of the command that raises it, where the module belongs to one command).

The messages are collected from the code, not listed by hand: every call of an error class (``*Error``,
``BadParameter``) and every error print (``_err``, ``typer.echo(..., err=True)``), anywhere in the package,
with the literal text of its arguments (f-strings' fixed parts too). An option name is always written out
in the source, never assembled from a variable (``f"--{run_id}-log"`` named ``--history-log``, which does
not exist), so these literals are all the options any message can name; the last test keeps it that way.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ad_diff.errors import AdDiffError, InputError
from tests.conftest import ROOT

PKG = ROOT / "ad_diff"
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
FOREIGN = {
    "--args": "AutoDeploy's build_and_run_ad.py (`--args.key=value` in a run's config)",
    "--log-dir": "torchrun", "--tee": "torchrun", "--output-filename": "mpirun", "--tag-output": "mpirun",
    "--label": "srun", "--timestamps": "kubectl logs / docker logs", "--porcelain": "git status",
    "--untracked-files": "git status", "--model": "AutoDeploy's build_and_run_ad.py",
    "--use-registry": "AutoDeploy's build_and_run_ad.py",
}
"""Options of other tools that ad-diff's text names (how a log was captured, AD's own command line)."""
OWNERS = {"history": {"history"}, "candidates": {"candidates"}, "workflows/note.py": {"note"},
          "workflows/record.py": {"record"}, "workflows/batch.py": {"batch"}, "cli/history.py": {"history"},
          "cli/fusion.py": {"candidates", "note"}, "cli/compare.py": {"compare"}}
"""Parts of the package that serve one command (or a few): their messages may name only its options."""


@dataclass(frozen=True)
class Message:
    """The literal text of one error message in the source."""

    path: Path
    line: int
    text: str
    printed: bool = False
    """An error print (``_err``, ``typer.echo(..., err=True)``) rather than an error raised."""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _literal(node: ast.AST) -> str:
    """The fixed text of an expression: string constants and f-strings' fixed parts, joined by a gap."""
    parts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return " \u2026 ".join(parts)


def _is_error_call(call: ast.Call) -> bool:
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name.endswith("Error") or name in ("BadParameter", "_err", "Refused"):
        return True
    return name == "echo" and any(k.arg == "err" for k in call.keywords)


def messages() -> Iterator[Message]:
    """Every error message of the package, as its literal text."""
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _is_error_call(node):
                text = " \u2026 ".join(_literal(a) for a in [*node.args, *(k.value for k in node.keywords)])
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if text.strip():
                    yield Message(path, node.lineno, text, printed=name in ("_err", "echo"))


def app_options() -> dict[str, set[str]]:
    """Command name -> its long options (``--help`` and the root's ``--version`` count for every one)."""
    import typer.main

    from ad_diff.cli.app import app, load_commands

    load_commands()
    root = typer.main.get_command(app)
    common = {"--help", "--version"}
    out = {}
    for name, cmd in root.commands.items():  # type: ignore[attr-defined]
        opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
        out[name] = opts | common
    return out


def _allowed(path: Path, options: dict[str, set[str]]) -> tuple[set[str], str]:
    rel = path.relative_to(PKG).as_posix()
    for part, commands in OWNERS.items():
        if rel == part or rel.startswith(part + "/"):
            return set().union(*(options[c] for c in commands)), "/".join(sorted(commands))
    return set().union(*options.values()), "any command"


def test_every_option_an_error_names_exists() -> None:
    options = app_options()
    found = list(messages())
    naming = [m for m in found if OPTION.search(m.text)]
    assert len(found) > 200, "the collector lost the package's error messages"
    assert len(naming) > 20, "the collector lost the messages that name options"
    wrong = []
    for m in naming:
        allowed, owner = _allowed(m.path, options)
        for opt in OPTION.findall(m.text):
            if opt not in allowed and opt not in FOREIGN:
                wrong.append(f"{m.where}: {opt} is no option of {owner}: {m.text[:120]}")
    assert not wrong, "\n".join(wrong)


def test_no_message_carries_the_prefix_the_printer_adds() -> None:
    """``ad-diff: error:`` is added once, where errors are printed (``_err``): an error whose message starts
    with ``ad-diff:`` would read ``ad-diff: error: ad-diff: ...`` (and ``ad-diff: ad-diff:`` in the Action's
    log)."""
    raised = [m for m in messages() if not m.printed]
    assert len(raised) > 200
    assert not [m.where for m in raised if m.text.lstrip(" \u2026").startswith("ad-diff")]


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def test_every_option_the_package_writes_out_exists() -> None:
    """Options handed to messages as data (``log_options=("--baseline-log", ...)``) are literals too; the
    package's docstrings may name other tools' options (they are documentation, not messages)."""
    everything = set().union(*app_options().values())
    wrong = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                wrong += [f"{path.relative_to(ROOT)}:{node.lineno}: {o}" for o in OPTION.findall(node.value)
                          if o not in everything and o not in FOREIGN]
    assert not wrong, "\n".join(wrong)


def _assembled(tree: ast.AST) -> list[int]:
    """Lines of f-strings that build an option name from a value (``f"--{key}"``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for a, b in zip(node.values, node.values[1:], strict=False):
                fixed = a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else ""
                if isinstance(b, ast.FormattedValue) and re.search(r"(?<![\w-])--[\w-]*$", fixed):
                    out.append(node.lineno)
    return out


def test_no_option_name_is_assembled_from_a_variable() -> None:
    bad = [f"{path.relative_to(ROOT)}:{line}" for path in sorted(PKG.rglob("*.py"))
           for line in _assembled(ast.parse(path.read_text(encoding="utf-8")))]
    assert not bad, f"option names built from variables (write them out): {bad}"


def test_the_checks_catch_a_made_up_option() -> None:
    src = 'raise InputError(p, f"several logs; pass --history-log FILE to pick one")\n'
    call = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call))
    assert _is_error_call(call)
    assert OPTION.findall(_literal(call)) == ["--history-log"]
    assert "--history-log" not in set().union(*app_options().values())
    assert _assembled(ast.parse('x = f"pass --{run_id}-log FILE"\ny = f"--tol {spec!r}"\n')) == [1]


# ------------------------------------------------------------------ the errors the issue met, end to end

@pytest.mark.parametrize(("args", "want", "unwanted"), [
    # two log files: the way to compare logs, with options that exist; no literal asterisks
    (["{b}/ad.log", "{c}/ad.log"],
     r"are log files; ad-diff compares run folders.*--baseline-log .*--candidate-log", "*folder*"),
    # a golden snapshot given second: it can only be the baseline
    (["{c}", "{golden}"], r"is a snapshot file \(`ad-diff snapshot`\), not the candidate run folder; a "
     r"snapshot stands only for the baseline, given first", "is not a folder"),
    # both folders missing: both named
    (["{tmp}/nope1", "{tmp}/nope2"],
     r"nope1: baseline run folder does not exist; and .*nope2: candidate run folder does not exist", None),
])
def test_errors_that_pointed_the_wrong_way(args: list[str], want: str, unwanted: str | None,
                                           tmp_path: Path) -> None:
    from tests.conftest import FIXTURES, run_cli

    pair = FIXTURES / "scenarios/metadata_loss"
    golden = tmp_path / "golden.yaml"
    assert run_cli("snapshot", pair / "baseline", "-o", golden).code == 0
    fill = {"b": pair / "baseline", "c": pair / "candidate", "golden": golden, "tmp": tmp_path}
    res = run_cli(*(a.format(**fill) for a in args))
    assert res.code == 2
    assert re.search(want, res.err), res.err
    assert res.err.startswith("ad-diff: error: ")
    assert res.err.count("ad-diff:") == 1
    if unwanted:
        assert unwanted not in res.err


def test_history_never_suggests_an_option_it_lacks(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES, run_cli

    run = tmp_path / "nightly" / "run-1"
    run.mkdir(parents=True)
    for name in ("a.log", "b.log"):
        (run / name).write_bytes((FIXTURES / "scenarios/identical/baseline/ad.log").read_bytes())
    res = run_cli("history", tmp_path / "nightly")
    text = res.out + res.err
    assert "several *.log files (a.log, b.log)" in text
    for opt in OPTION.findall(text):
        assert opt in app_options()["history"] or opt in FOREIGN, opt


def test_input_error_is_an_ad_diff_error() -> None:
    e = InputError("x.log", "bad", 3)
    assert isinstance(e, AdDiffError)
    assert str(e) == "x.log:3: bad"
