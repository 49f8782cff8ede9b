"""Read the files of one run's AD config: a YAML/JSON layer, ``cli_args.txt``, an order file.

Every file is read through :mod:`ad_diff.core.safepath` (regular files inside the run folder only, size
capped, strict UTF-8 with the line of a bad byte) and parsed by :mod:`ad_diff.core.yamlsafe` (aliases,
depth, integers and keys bounded, duplicate keys refused). Values that look like credentials are redacted
here, when loaded, so no report can show them (:mod:`ad_diff.core.redact`). Bad input raises
:class:`~ad_diff.errors.InputError` with file and line; no message quotes more than a short excerpt.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ad_diff.core import safepath
from ad_diff.core.escape import excerpt
from ad_diff.core.redact import REDACTED
from ad_diff.core.redactwalk import redact_tree
from ad_diff.errors import InputError
from ad_diff.kinds.config.model import KeyPath

CONFIG_LIMIT = 256 << 10
"""Largest config file read (bytes); AD's own default.yaml is a few KiB."""
SIDE_FILE_LIMIT = 1 << 20
"""Largest ``cli_args.txt`` or order file read (bytes)."""


@dataclass(frozen=True)
class Layer:
    """One loaded config file."""

    data: dict[str, Any]
    lines: dict[KeyPath, int]
    """1-based line of every key (empty for JSON)."""
    redacted: int = 0
    """How many values were redacted as credentials."""


def load_file(path: Path, root: Path) -> Layer:
    """Load one YAML/JSON config file of the run at ``root`` (``{}`` when empty)."""
    # imported here: a run without a config must not pay yaml's start-up
    from ad_diff.core.yamlsafe import key_lines, load_json, load_yaml_node

    text = safepath.read_text(path, root, "a YAML or JSON AutoDeploy config", CONFIG_LIMIT)
    if path.suffix.lower() == ".json":
        data = load_json(text, path) if text.strip() else None
        lines: dict[KeyPath, int] = {}
    else:
        data, node = load_yaml_node(text, path)
        lines = key_lines(node)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping of AutoDeploy settings at the top level, got "
                               f"{type(data).__name__}", line=1)
    data, redacted = redact_tree(data)
    return Layer(data, lines, redacted)


def check_shape(path: Path, data: dict[str, Any], lines: dict[KeyPath, int], line: int | None = None) -> None:
    """Reject configs whose ``transforms`` section AD itself would reject (wrong types); ``line`` is used
    where ``lines`` has none (a command-line override)."""
    transforms = data.get("transforms")
    if transforms is None:
        return
    if not isinstance(transforms, dict):
        raise InputError(path, "expected 'transforms' to be a mapping of transform key -> settings",
                         line=lines.get(("transforms",), line))
    for key, entry in transforms.items():
        where = lines.get(("transforms", key), line)
        name = excerpt(key, 100)
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise InputError(path, f"expected transforms.{name} to be a mapping (stage, enabled, ...), got "
                                   f"{_kind(entry)}", line=where)
        if "enabled" in entry and not isinstance(entry["enabled"], bool):
            raise InputError(path, f"expected transforms.{name}.enabled to be true or false, got "
                                   f"{_kind(entry['enabled'])}",
                             line=lines.get(("transforms", key, "enabled"), where))
        if "stage" in entry and not isinstance(entry["stage"], str):
            raise InputError(path, f"expected transforms.{name}.stage to be a stage name, got "
                                   f"{_kind(entry['stage'])}",
                             line=lines.get(("transforms", key, "stage"), where))


def _kind(value: Any) -> str:
    """A short description of a wrong value: its type, and the value itself when it is short."""
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    shown = repr(value) if isinstance(value, str) else str(value)
    return f"{type(value).__name__} {excerpt(shown, 60)}"


def parse_cli_args(path: Path, root: Path) -> dict[KeyPath, tuple[Any, int]]:
    """Read ``--args.<dotted.key>=<value>`` (or ``--args.<key> <value>``) overrides, in order; values are
    typed like YAML scalars (``false``, ``2``). Other options are ignored (they are not AD config)."""
    text = safepath.read_text(path, root, "the command-line overrides (cli_args.txt)", SIDE_FILE_LIMIT)
    out: dict[KeyPath, tuple[Any, int]] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().rstrip("\\").strip()
        if not line or line.startswith("#"):
            continue
        try:
            tokens = shlex.split(line)
        except ValueError as e:
            raise InputError(path, f"cannot split command line ({e})", line=n) from None
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            i += 1
            if not tok.startswith("--args."):
                continue
            key, eq, value = tok[len("--args."):].partition("=")
            shown = excerpt(key, 100)
            if not eq:
                if i >= len(tokens) or tokens[i].startswith("--"):
                    raise InputError(path, f"option --args.{shown} has no value", line=n)
                value, i = tokens[i], i + 1
            parts = tuple(key.split("."))
            if not all(parts):
                raise InputError(path, f"option --args.{shown} has an empty key (expected --args.a.b=value)",
                                 line=n)
            typed = _typed(value, path, n, shown)
            check_shape(path, _nest(parts, typed), {}, line=n)
            redacted, count = redact_tree(_nest(parts, typed))
            out[parts] = (_leaf(redacted, parts) if count else typed, n)
    return out


def _typed(value: str, path: Path, line: int, key: str) -> Any:
    """A command-line value typed like a YAML scalar; text that is not YAML stays text."""
    if not value:
        return ""
    try:
        from ad_diff.core.yamlsafe import load_yaml  # lazy: yaml loads only where a YAML text is read

        return load_yaml(value, path)
    except InputError as e:
        if e.detail.startswith("invalid YAML"):
            return value
        raise InputError(path, f"option --args.{key}: {e.detail}", line=line) from None


def _nest(path: KeyPath, value: Any) -> dict[str, Any]:
    for k in reversed(path[1:]):
        value = {k: value}
    return {path[0]: value}


def _leaf(data: dict[str, Any], path: KeyPath) -> Any:
    node: Any = data
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return REDACTED  # the key itself was redacted
        node = node[k]
    return node


def read_order_file(path: Path, root: Path) -> list[tuple[int, str]]:
    """``(line, name)`` of every entry of an order file (one name per line, ``#`` comments)."""
    text = safepath.read_text(path, root, "an order file (one config file name per line)", SIDE_FILE_LIMIT)
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        name = raw.split("#", 1)[0].strip()
        if name:
            out.append((n, name))
    return out


__all__ = ["CONFIG_LIMIT", "Layer", "check_shape", "load_file", "parse_cli_args", "read_order_file"]
