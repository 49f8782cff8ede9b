"""Which files of a run folder hold its AutoDeploy configuration (paths only: nothing is parsed here).

Kept apart from :mod:`ad_diff.kinds.config.parse` so that a comparison can learn that a run holds no config
(every log-only comparison, most runs) without importing the config model, the loader and YAML. The places
looked at are listed in :mod:`ad_diff.kinds.config.parse`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ad_diff.core import safepath
from ad_diff.errors import InputError

CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


def discover_config_files(root: Path, explicit: Path | None = None) -> tuple[Path, ...]:
    """The config files of the run at ``root`` (see :mod:`ad_diff.kinds.config.parse`), sorted; a refused
    ``config/`` entry (a link leaving the run folder, a FIFO) is an :class:`InputError`, a refused top-level
    file is left out."""
    return discover(root, explicit)[0]


def has_config(root: Path, explicit: Path | None = None) -> bool:
    """Whether the run at ``root`` holds a config to load (an explicit path always counts: its errors are the
    loader's to report)."""
    return explicit is not None or (root.is_dir() and bool(discover(root, None)[0]))


def discover(root: Path, explicit: Path | None) -> tuple[tuple[Path, ...], Path, list[str]]:
    """``(files, containment root, notes)``: the folder every file must stay inside is the run folder, or
    the folder given explicitly."""
    if explicit is not None:
        if not explicit.exists() and not explicit.is_symlink():
            raise InputError(explicit, "config path does not exist (expected a YAML/JSON file or a folder)")
        if not explicit.is_dir():  # a file the user named: read it wherever it is, if it is a regular file
            real = safepath.check_file(explicit, explicit.resolve().parent, "a YAML or JSON AD config")
            return (explicit,), real.parent, []
        return _walk(explicit, explicit), explicit, []
    cfg_dir = root / "config"
    if cfg_dir.is_dir():
        return _walk(cfg_dir, root), root, []
    files, notes = [], []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        p = Path(root, entry.name)
        if p.suffix.lower() not in CONFIG_SUFFIXES:
            continue
        try:
            safepath.check_file(p, root, "a YAML or JSON file")
        except InputError as e:
            notes.append(f"ignored {entry.name}: {e.detail}")
            continue
        files.append(p)
    return tuple(files), root, notes


def _walk(folder: Path, root: Path) -> tuple[Path, ...]:
    found, refused = safepath.walk_files(folder, root, CONFIG_SUFFIXES)
    if refused:
        path, why = refused[0]
        raise InputError(path, f"{why}; expected an AD config file")
    return tuple(found)


__all__ = ["CONFIG_SUFFIXES", "discover", "discover_config_files", "has_config"]
