"""Find and load the AutoDeploy configuration a run used.

Where ad-diff looks (first hit wins, documented in docs/config-in-runs.md):

1. an explicit path (``--baseline-config`` / ``--candidate-config``): a file is taken as the whole
   effective config; a folder is searched like ``config/``;
2. ``<run>/config/`` (recursively): every ``*.yaml``/``*.yml``/``*.json``;
3. top-level ``<run>/*.yaml``/``*.yml``/``*.json`` that hold AD keys (``transforms`` or an LLM-args key).

A file whose name contains ``effective``, ``merged``, ``resolved`` or ``dry_run``/``dry-run`` is an
*effective* (already merged) config and is used as is. Otherwise the files are *layers*, deep-merged in
this order (later wins, as AD does, FORMATS.md 4.2):

* an order file ``layers.txt`` or ``ORDER`` beside them (one name per line, ``#`` comments) decides;
* else a registry ``models.yaml`` naming exactly one model: ``default.yaml``, then its ``ad_defaults``,
  ``yaml_extra`` and ``user_configs`` lists;
* else ``default.yaml`` first, the others by name, ``cli*.yaml`` last;
* ``cli_args.txt`` (the ``--args.<dotted.key>=<value>`` options of the command line) is applied last.

Only ``yaml.safe_load`` is used. Bad input raises :class:`~ad_diff.errors.InputError` with file and line.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the environment

from ad_diff.errors import InputError
from ad_diff.kinds.config.model import ConfigSource, EffectiveConfig, KeyPath, SourceKind

CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
ORDER_FILES = ("layers.txt", "ORDER")
CLI_ARGS_FILE = "cli_args.txt"
REGISTRY_NAME = "models.yaml"
_EFFECTIVE_NAME = re.compile(r"effective|merged|resolved|dry[_-]?run", re.IGNORECASE)

#: Top-level keys that mark a file as an AD config (LLM args of AD plus ``transforms``).
AD_KEYS = frozenset(
    {
        "transforms", "runtime", "compile_backend", "attn_backend", "world_size", "max_batch_size",
        "max_seq_len", "max_num_tokens", "cuda_graph_config", "model_kwargs", "model", "model_factory",
        "tokenizer", "kv_cache_config", "mla_backend", "attn_page_size", "skip_loading_weights",
        "free_mem_ratio", "simple_shard_only", "use_sharding_from_factory", "sharding_source",
        "enable_chunked_prefill", "pipeline_cache", "args",
    }
)


def discover_config_files(root: Path, explicit: Path | None = None) -> tuple[Path, ...]:
    """Return the config files of the run at ``root`` (see module doc), unordered semantics aside."""
    if explicit is not None:
        if not explicit.exists():
            raise InputError(explicit, "config path does not exist (expected a YAML/JSON file or a folder)")
        return (explicit,) if explicit.is_file() else _files_in(explicit)
    cfg_dir = root / "config"
    if cfg_dir.is_dir():
        return _files_in(cfg_dir)
    return tuple(sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in CONFIG_SUFFIXES))


def parse(root: Path, explicit: Path | None = None) -> EffectiveConfig | None:
    """Load the effective config of the run at ``root``; ``None`` when the run holds no config."""
    if explicit is not None and explicit.is_file():
        data, lines = load_file(explicit)
        _check_shape(explicit, data, lines)
        name = _display(explicit, root)
        rule = f"explicit file {name}, used as the effective config"
        source = ConfigSource(SourceKind.EFFECTIVE, (name,), rule, True)
        return EffectiveConfig(source, data, {p: f"{name}:{n}" for p, n in lines.items()
                                              if _is_leaf(data, p)})
    files = discover_config_files(root, explicit)
    top_level = explicit is None and not (root / "config").is_dir()
    base = explicit if explicit is not None else (root / "config" if not top_level else root)
    return load_config_files(files, root, base=base, top_level=top_level)


def load_config_files(
    files: tuple[Path, ...], root: Path, base: Path | None = None, top_level: bool = False
) -> EffectiveConfig | None:
    """Order, load and merge ``files`` (all from one run); ``base`` is the folder order files live in."""
    base = base or root
    notes: list[str] = []
    loaded: dict[Path, tuple[dict[str, Any], dict[KeyPath, int]]] = {}
    registry: Path | None = None
    for f in files:
        try:
            data, lines = load_file(f)
        except InputError as e:
            if not top_level:
                raise
            # A top-level *.json/*.yaml may be anything (a tool's output): only config/ must be valid.
            notes.append(f"ignored {_display(f, root)}: not a config ({e.detail})")
            continue
        if f.name == REGISTRY_NAME and isinstance(data, dict) and isinstance(data.get("models"), list):
            registry = f
            continue
        if top_level and not (isinstance(data, dict) and AD_KEYS & set(data)):
            notes.append(f"ignored {_display(f, root)}: no AutoDeploy config keys at its top level")
            continue
        _check_shape(f, data, lines)
        loaded[f] = (data, lines)
    cli_args = base / CLI_ARGS_FILE
    if not loaded and not cli_args.is_file():
        return None

    effective = [f for f in loaded if _EFFECTIVE_NAME.search(f.stem)]
    if len(effective) > 1:
        found = ", ".join(_display(f, root) for f in effective)
        raise InputError(base, f"several effective configs found ({found}); pass the one to use explicitly")
    if effective:
        eff = effective[0]
        name = _display(eff, root)
        others = [f for f in loaded if f != eff]
        # Layers next to an effective dump are only used to say which file set a value.
        _, origins, _ = _merge_layers(_order(others, base, registry, root, []), loaded, root)
        origins = {p: o for p, o in origins.items() if _is_leaf(loaded[eff][0], p)}
        for p, n in loaded[eff][1].items():
            if _is_leaf(loaded[eff][0], p):
                origins.setdefault(p, f"{name}:{n}")
        if others:
            notes.append(f"{len(others)} layer file(s) beside {name} were not merged; they only name the "
                         "file behind a value")
        rule = f"effective config file {name} (name marks it as merged)"
        src = ConfigSource(SourceKind.EFFECTIVE, (name,), rule, True, tuple(notes))
        return EffectiveConfig(src, loaded[eff][0], origins)

    ordered = _order(list(loaded), base, registry, root, notes)
    rule = notes.pop(0)
    merged, origins, names = _merge_layers(ordered, loaded, root)
    if cli_args.is_file():
        overrides = parse_cli_args(cli_args)
        cli_name = _display(cli_args, root)
        for path, (value, line) in overrides.items():
            _set_path(merged, path, value)
            _drop(origins, path)
            origins[path] = f"{cli_name}:{line}"
        names.append(cli_name)
        rule += f"; then the command-line overrides in {cli_name}"
    complete = any(f.name == "default.yaml" for f in ordered)
    if not complete:
        notes.append("no default.yaml among the layers: transforms it would define are unknown")
    src = ConfigSource(SourceKind.LAYERED, tuple(names), rule, complete, tuple(notes))
    return EffectiveConfig(src, merged, origins)


def load_file(path: Path) -> tuple[dict[str, Any], dict[KeyPath, int]]:
    """Load one YAML/JSON file; return its data (``{}`` if empty) and the 1-based line of every key."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, f"cannot read config file ({e}); expected UTF-8 YAML or JSON") from e
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as e:
            raise InputError(path, f"invalid JSON: {e.msg}", line=e.lineno) from e
        lines: dict[KeyPath, int] = {}
    else:
        try:
            data = yaml.safe_load(text)
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark is not None else None
            raise InputError(path, f"invalid YAML: {e.problem or e.context}", line=line) from e
        except yaml.YAMLError as e:
            raise InputError(path, f"invalid YAML: {e}") from e
        lines = {}
        if node is not None:
            _key_lines(node, (), lines)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping of AutoDeploy settings at the top level, got "
                               f"{type(data).__name__}", line=1)
    return data, lines


def parse_cli_args(path: Path) -> dict[KeyPath, tuple[Any, int]]:
    """Read ``--args.<dotted.key>=<value>`` (or ``--args.<key> <value>``) overrides, in order; values are
    typed like YAML scalars (``false``, ``2``). Other options are ignored (they are not AD config)."""
    out: dict[KeyPath, tuple[Any, int]] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip().rstrip("\\").strip()
        if not line or line.startswith("#"):
            continue
        try:
            tokens = shlex.split(line)
        except ValueError as e:
            raise InputError(path, f"cannot split command line ({e})", line=n) from e
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            i += 1
            if not tok.startswith("--args."):
                continue
            key, eq, value = tok[len("--args."):].partition("=")
            if not eq:
                if i >= len(tokens) or tokens[i].startswith("--"):
                    raise InputError(path, f"option --args.{key} has no value", line=n)
                value, i = tokens[i], i + 1
            try:
                typed = yaml.safe_load(value) if value else ""
            except yaml.YAMLError:
                typed = value
            out[tuple(key.split("."))] = (typed, n)
    return out


def _files_in(folder: Path) -> tuple[Path, ...]:
    return tuple(sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in CONFIG_SUFFIXES))


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _key_lines(node: yaml.Node, prefix: KeyPath, out: dict[KeyPath, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                path = (*prefix, str(key_node.value))
                out[path] = key_node.start_mark.line + 1
                _key_lines(value_node, path, out)


def _is_leaf(data: Any, path: KeyPath) -> bool:
    for k in path:
        if not isinstance(data, dict) or k not in data:
            return False
        data = data[k]
    return not isinstance(data, dict) or not data


def _check_shape(path: Path, data: dict[str, Any], lines: dict[KeyPath, int]) -> None:
    """Reject configs whose ``transforms`` section AD itself would reject (wrong types)."""
    transforms = data.get("transforms")
    if transforms is None:
        return
    if not isinstance(transforms, dict):
        raise InputError(path, "expected 'transforms' to be a mapping of transform key -> settings",
                         line=lines.get(("transforms",)))
    for key, entry in transforms.items():
        where = lines.get(("transforms", str(key)))
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise InputError(path, f"expected transforms.{key} to be a mapping (stage, enabled, ...)",
                             line=where)
        if "enabled" in entry and not isinstance(entry["enabled"], bool):
            raise InputError(path, f"expected transforms.{key}.enabled to be true or false, "
                                   f"got {entry['enabled']!r}",
                             line=lines.get(("transforms", str(key), "enabled"), where))
        if "stage" in entry and not isinstance(entry["stage"], str):
            raise InputError(path, f"expected transforms.{key}.stage to be a stage name",
                             line=lines.get(("transforms", str(key), "stage"), where))


def _order(files: list[Path], base: Path, registry: Path | None, root: Path, notes: list[str]) -> list[Path]:
    """Order layers; the first sentence appended to ``notes`` states the rule used."""
    by_rel = {f.relative_to(base).as_posix() if f.is_relative_to(base) else f.name: f for f in files}
    for order_name in ORDER_FILES:
        order_file = base / order_name
        if order_file.is_file():
            listed: list[Path] = []
            for n, raw in enumerate(order_file.read_text(encoding="utf-8").splitlines(), start=1):
                name = raw.split("#", 1)[0].strip()
                if not name:
                    continue
                match = by_rel.get(name) or next((f for f in files if f.name == name), None)
                if match is None:
                    raise InputError(order_file, f"lists {name!r}, which is not a config file in {base}",
                                     line=n)
                listed.append(match)
            rest = _default_order([f for f in files if f not in listed])
            notes.insert(0, f"order file {_display(order_file, root)}")
            if rest:
                notes.append("not in the order file, merged after it by the default rule: "
                             + ", ".join(_display(f, root) for f in rest))
            return listed + rest
    if registry is not None:
        chain = _registry_chain(registry)
        if chain is not None:
            listed = [f for name in chain for f in files if f.name == name]
            default = [f for f in files if f.name == "default.yaml" and f not in listed]
            rest = _default_order([f for f in files if f not in listed and f not in default])
            notes.insert(0, f"registry {_display(registry, root)}: default.yaml, then ad_defaults, "
                            "yaml_extra, user_configs in listed order")
            if rest:
                notes.append("not named by the registry, merged after it: "
                             + ", ".join(_display(f, root) for f in rest))
            return default + listed + rest
        notes.append(f"registry {_display(registry, root)} names several models; its order was not used")
    notes.insert(0, "default rule: default.yaml first, then by name, cli*.yaml last")
    return _default_order(files)


def _default_order(files: list[Path]) -> list[Path]:
    def key(f: Path) -> tuple[int, str]:
        rank = 0 if f.name == "default.yaml" else 2 if f.stem.lower().startswith("cli") else 1
        return (rank, f.as_posix())

    return sorted(files, key=key)


def _registry_chain(registry: Path) -> list[str] | None:
    data, _ = load_file(registry)
    models = data.get("models")
    if not isinstance(models, list) or len(models) != 1 or not isinstance(models[0], dict):
        return None
    entry = models[0]
    chain: list[str] = []
    for key in ("ad_defaults", "yaml_extra", "user_configs"):
        value = entry.get(key) or []
        chain.extend(Path(str(v)).name for v in value if isinstance(value, list))
    return chain


def _merge_layers(
    ordered: list[Path], loaded: dict[Path, tuple[dict[str, Any], dict[KeyPath, int]]], root: Path
) -> tuple[dict[str, Any], dict[KeyPath, str], list[str]]:
    merged: dict[str, Any] = {}
    origins: dict[KeyPath, str] = {}
    names: list[str] = []
    for f in ordered:
        data, lines = loaded[f]
        name = _display(f, root)
        names.append(name)
        _deep_merge(merged, data, (), origins, name, lines)
    return merged, origins, names


def _deep_merge(dst: dict[str, Any], src: dict[str, Any], prefix: KeyPath, origins: dict[KeyPath, str],
                name: str, lines: dict[KeyPath, int]) -> None:
    """Merge ``src`` into ``dst``: mappings merge key by key, anything else (lists too) replaces.
    ``origins`` keeps, for every leaf, the ``file:line`` of the layer that set it last."""
    for key, value in src.items():
        path = (*prefix, str(key))
        line = lines.get(path)
        if isinstance(value, dict):
            if not isinstance(dst.get(key), dict):
                _drop(origins, path)
                dst[key] = {}
                if not value:
                    origins[path] = f"{name}:{line}" if line else name
            _deep_merge(dst[key], value, path, origins, name, lines)
            continue
        dst[key] = _copy(value)
        _drop(origins, path)
        origins[path] = f"{name}:{line}" if line else name


def _drop(origins: dict[KeyPath, str], path: KeyPath) -> None:
    for p in [p for p in origins if p[: len(path)] == path or path[: len(p)] == p]:
        del origins[p]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _set_path(data: dict[str, Any], path: KeyPath, value: Any) -> None:
    for k in path[:-1]:
        nxt = data.get(k)
        if not isinstance(nxt, dict):
            nxt = data[k] = {}
        data = nxt
    data[path[-1]] = value
