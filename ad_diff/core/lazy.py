"""Heavy third-party modules, imported when first used, and named when they are missing.

ad-diff keeps heavy modules off the common path (start-up is measured: docs/benchmark.md): torch (only
``.pt`` tensor files and ``--tensor-device cuda`` need it; the ``pt`` extra), numpy (tensors), pandas
(``history``), rich's tables (the terminal report), deepdiff (two configs), PyYAML's dumper, matplotlib
(plots; the ``plots`` extra), pyarrow (Parquet tables), safetensors' writer. This is the one place that
imports such a module on demand. A module that uses one binds it at its top, typed for the checker and lazy
at run time::

    if TYPE_CHECKING:
        import numpy as np
    else:
        np = lazy.module("numpy")

so every name it uses is checked as the real module's, and nothing is imported until the first attribute
is read (``np.float32``). Where a feature needs an optional module (torch, matplotlib, pyarrow), it calls
:func:`require` (or :func:`available`) before the first use, so a missing one is a
:class:`MissingDependency` naming the extra that installs it rather than a ``ModuleNotFoundError``.
tests/unit/test_layout.py fails on any other import of these modules inside a function. Internal modules are
never imported through it (a lazy import must not hide a cycle between ad-diff's own modules).

:func:`pattern` does the same for a regular expression: compiled where it is first used, not when its module
is imported. Compiling one costs 0.05 to 1 ms (the parser and compiler of ``re`` run in Python), and a
comparison's modules define about a hundred, half of which most runs never use (a log-only comparison:
the credential families that its text does not hold, the capture prefixes it does not carry, markdown's
escapes in a JSON run). A pattern every run uses gains nothing from it: compile it at import.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from types import ModuleType
from typing import Any, AnyStr, cast

from ad_diff.errors import UsageError

EXTRAS: dict[str, str] = {"torch": "pt", "matplotlib": "plots", "pyarrow": "parquet"}
"""Module -> the extra of ad-diff that installs it."""


class MissingDependency(UsageError):
    """An optional module that the input or option at hand needs is not installed (exit 2: the install, not
    the runs, is what must change, so it is never a finding of the comparison)."""


def available(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def install_hint(module: str) -> str:
    """The command that installs ``module`` for ad-diff."""
    extra = EXTRAS.get(module)
    return f"pip install 'ad-diff[{extra}]'" if extra else f"pip install {module}"


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module``; raise :class:`MissingDependency` naming ``purpose`` and the extra when absent."""
    if not available(module):
        raise MissingDependency(f"{purpose} needs {module}, which is not installed: {install_hint(module)}")
    return importlib.import_module(module)


HEAVY = frozenset({"torch", "numpy", "pandas", "rich", "deepdiff", "yaml", "matplotlib", "pyarrow",
                   "safetensors"})
"""Top-level packages imported through :func:`module` wherever they are not imported at a module's top."""


class LazyModule(ModuleType):
    """A stand-in for module ``name`` that imports it when an attribute is first read, and from then on
    answers from its own copy of each attribute read (a plain dictionary lookup, as for a module)."""

    def __getattr__(self, attr: str) -> Any:  # called only for an attribute not copied yet
        value = getattr(importlib.import_module(self.__name__), attr)
        self.__dict__[attr] = value
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def module(name: str) -> ModuleType:
    """Module ``name``, imported when its first attribute is read (see the module docstring)."""
    if name.split(".")[0] not in HEAVY:
        raise ValueError(f"{name} is not one of the heavy modules lazy.module is for: {sorted(HEAVY)}")
    loaded = sys.modules.get(name)  # imported already: nothing to put off
    return loaded if loaded is not None else LazyModule(name)


class LazyPattern:
    """A stand-in for ``re.compile(source, flags)`` that compiles it when an attribute other than ``pattern``
    is first read (``search``, ``sub``, ``flags``...), and from then on answers from its own copy of each
    attribute read (a plain instance lookup, as fast as on the compiled pattern).

    It is not a ``re.Pattern`` instance: ``isinstance`` says no and ``re.sub(p, ...)`` refuses it. Use its
    methods, as every caller of a module-level pattern does."""

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self.pattern = source
        self._flags = flags

    def __getattr__(self, attr: str) -> Any:  # called only for an attribute not copied yet
        if attr.startswith("__") or attr in ("pattern", "_flags", "_compiled"):  # copy's probes, no __init__
            raise AttributeError(attr)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(self.pattern, self._flags)
        value = getattr(compiled, attr)
        self.__dict__[attr] = value
        return value

    def __repr__(self) -> str:
        return f"<lazy pattern {self.pattern!r}>"


def pattern(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(source, flags)``, compiled when first used (see the module docstring); typed as the
    pattern it stands for, as :func:`module` is typed as its module."""
    return cast("re.Pattern[AnyStr]", LazyPattern(source, flags))
