"""Size limits of the package (issue 29, STYLE.md): a module holds at most 400 lines, a function at most 80.

Read from the source with ``ast`` (nothing is imported), so an offender is named as ``path:line`` whatever it
does at import time. A function's size runs from its ``def`` (decorators included) to its last line, nested
functions counted inside their parent and on their own.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "ad_diff"
MODULE_LINES = 400
FUNCTION_LINES = 80

def module_offenders(root: Path = PKG) -> list[str]:
    """``path:1: N lines`` for every module of ``root`` longer than the module limit."""
    out = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text("utf-8").splitlines())
        if n > MODULE_LINES:
            out.append(f"{path.relative_to(root.parent)}:1: {n} lines (limit {MODULE_LINES})")
    return out


def function_offenders(root: Path = PKG) -> list[str]:
    """``path:line: name N lines`` for every function or method of ``root`` longer than the function limit."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                n = (node.end_lineno or node.lineno) - first + 1
                if n > FUNCTION_LINES:
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.name} {n} lines")
    return sorted(out)


def test_the_limits_see_an_offender(tmp_path: Path) -> None:
    """The two checks report a long module and a long function, and pass on short ones."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))  # def line + 80 = 81 lines
    (pkg / "long_fn.py").write_text(f"@staticmethod\ndef f():\n{body}\n", "utf-8")
    (pkg / "short.py").write_text("def g():\n    return 1\n", "utf-8")
    (pkg / "long_mod.py").write_text("x = 1\n" * (MODULE_LINES + 1), "utf-8")
    (pkg / "at_limit.py").write_text("x = 1\n" * MODULE_LINES, "utf-8")
    assert module_offenders(pkg) == [f"pkg/long_mod.py:1: {MODULE_LINES + 1} lines (limit {MODULE_LINES})"]
    assert function_offenders(pkg) == [f"pkg/long_fn.py:2: f {FUNCTION_LINES + 2} lines"]


def test_modules_at_most_400_lines() -> None:
    offenders = module_offenders()
    assert offenders == [], "\n".join(offenders)


def test_functions_at_most_80_lines() -> None:
    offenders = function_offenders()
    assert offenders == [], "\n".join(offenders)
