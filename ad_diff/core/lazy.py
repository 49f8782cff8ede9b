"""Optional third-party modules, imported where they are used and named when they are missing.

ad-diff keeps heavy modules off the common path: torch (only ``.pt`` tensor files and ``--tensor-device
cuda`` need it; the ``pt`` extra), pandas (``history``), matplotlib (plots; the ``plots`` extra), pyarrow
(Parquet tables). This is the one place that imports such a module on demand: it says which extra brings
it, so a missing one is a clear error rather than a ``ModuleNotFoundError``. Internal modules are never
imported through it (a lazy import must not hide a cycle between ad-diff's own modules).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

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
