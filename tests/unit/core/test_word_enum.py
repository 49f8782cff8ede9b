"""Enums of words read as their value wherever a string is made of them: one base class (``WordEnum``) holds
that rule, and no enum of the package writes its own ``__str__`` or ``__format__``."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import ad_diff
from ad_diff.core.words import WordEnum

PKG = Path(ad_diff.__file__).parent


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def test_every_word_enum_member_reads_as_its_value() -> None:
    for mod in ("gate", "settings", "kinds.base", "explain.model", "explain.accounting.model",
                "kinds.config.model"):
        importlib.import_module(f"ad_diff.{mod}")
    enums = _all_subclasses(WordEnum)
    assert {e.__name__ for e in enums} >= {"Category", "VerdictWord", "FailOn", "SkipReason", "CauseKind",
                                           "Item", "SourceKind", "ChangeKind", "CheckKind"}
    for enum in enums:
        for member in enum:
            assert str(member) == f"{member}" == f"{member:s}" == member.value, member
            assert member == member.value


def test_no_enum_writes_its_own_string_form() -> None:
    offenders = []
    for info in pkgutil.walk_packages([str(PKG)], "ad_diff."):
        path = PKG.joinpath(*info.name.split(".")[1:])
        file = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
        for node in ast.walk(ast.parse(file.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name != "WordEnum":
                if not {ast.unparse(b) for b in node.bases} & {"Enum", "WordEnum"}:
                    continue
                # both spellings: ``def __str__(self)`` and ``__format__ = str.__format__``
                defined = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
                defined |= {t.id for f in node.body if isinstance(f, ast.Assign)
                            for t in f.targets if isinstance(t, ast.Name)}
                own = sorted(defined & {"__str__", "__format__"})
                if own:
                    offenders.append(f"{info.name}.{node.name}: {own}")
    assert offenders == []
