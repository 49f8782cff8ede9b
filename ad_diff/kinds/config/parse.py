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

Files are read by :mod:`ad_diff.kinds.config.load`: only regular files inside the run folder (a link that
leaves it, or a FIFO, is refused), through the bounded YAML loader, with credentials redacted. Bad input
raises :class:`~ad_diff.errors.InputError` with file and line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ad_diff.core.escape import excerpt
from ad_diff.core.redact import redact_text
from ad_diff.errors import InputError
from ad_diff.kinds.config.find import discover, discover_config_files
from ad_diff.kinds.config.load import Layer, check_shape, load_file, parse_cli_args, read_order_file
from ad_diff.kinds.config.model import ConfigSource, EffectiveConfig, KeyPath, SourceKind

# yaml is imported by the functions of config.load that read YAML: looking for a config in a run that has
# none (every log-only comparison) must not pay its ~15 ms of start-up.

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


def parse(root: Path, explicit: Path | None = None) -> EffectiveConfig | None:
    """Load the effective config of the run at ``root``; ``None`` when the run holds no config."""
    files, inside, notes = discover(root, explicit)
    if explicit is not None and not explicit.is_dir():
        layer = load_file(explicit, inside)
        check_shape(explicit, layer.data, layer.lines)
        name = _display(explicit, root)
        rule = f"explicit file {name}, used as the effective config"
        source = ConfigSource(SourceKind.EFFECTIVE, (name,), rule, True, tuple(_redaction_notes([layer])))
        return EffectiveConfig(source, layer.data, {p: f"{name}:{n}" for p, n in layer.lines.items()
                                                    if _is_leaf(layer.data, p)})
    top_level = explicit is None and not (root / "config").is_dir()
    base = explicit if explicit is not None else (root if top_level else root / "config")
    return load_config_files(files, root, base=base, top_level=top_level, inside=inside, notes=notes)


def load_config_files(
    files: tuple[Path, ...], root: Path, base: Path | None = None, top_level: bool = False,
    inside: Path | None = None, notes: list[str] | None = None,
) -> EffectiveConfig | None:
    """Order, load and merge ``files`` (all from one run); ``base`` is the folder order files live in,
    ``inside`` the folder no file may leave (default ``root``)."""
    base = base or root
    inside = inside or root
    notes = list(notes or ())
    loaded: dict[Path, Layer] = {}
    registry: Path | None = None
    for f in files:
        try:
            layer = load_file(f, inside)
        except InputError as e:
            if not top_level:
                raise
            # A top-level *.json/*.yaml may be anything (a tool's output): only config/ must be valid.
            notes.append(f"ignored {_display(f, root)}: not a config ({redact_text(e.detail)})")
            continue
        data = layer.data
        if f.name == REGISTRY_NAME and isinstance(data.get("models"), list):
            registry = f
            continue
        if top_level and not AD_KEYS & set(data):
            notes.append(f"ignored {_display(f, root)}: no AutoDeploy config keys at its top level")
            continue
        check_shape(f, data, layer.lines)
        loaded[f] = layer
    cli_args = base / CLI_ARGS_FILE
    has_cli_args = cli_args.exists() or cli_args.is_symlink()
    if not loaded and not has_cli_args:
        return None
    notes += _redaction_notes(list(loaded.values()))

    effective = [f for f in loaded if _EFFECTIVE_NAME.search(f.stem)]
    if len(effective) > 1:
        found = ", ".join(_display(f, root) for f in effective)
        raise InputError(base, f"several effective configs found ({found}); pass the one to use explicitly")
    if effective:
        eff = effective[0]
        name = _display(eff, root)
        others = [f for f in loaded if f != eff]
        # Layers next to an effective dump are only used to say which file set a value.
        _, origins, _ = _merge_layers(_order(others, base, registry, root, inside, []), loaded, root)
        eff_data = loaded[eff].data
        origins = {p: o for p, o in origins.items() if _is_leaf(eff_data, p)}
        for p, n in loaded[eff].lines.items():
            if _is_leaf(eff_data, p):
                origins.setdefault(p, f"{name}:{n}")
        if others:
            notes.append(f"{len(others)} layer file(s) beside {name} were not merged; they only name the "
                         "file behind a value")
        rule = f"effective config file {name} (name marks it as merged)"
        src = ConfigSource(SourceKind.EFFECTIVE, (name,), rule, True, tuple(notes))
        return EffectiveConfig(src, eff_data, origins)

    ordered = _order(list(loaded), base, registry, root, inside, notes)
    rule = notes.pop(0)
    merged, origins, names = _merge_layers(ordered, loaded, root)
    if has_cli_args:
        overrides = parse_cli_args(cli_args, inside)
        cli_name = _display(cli_args, root)
        for path, (value, line) in overrides.items():
            _set_path(merged, path, value, origins, f"{cli_name}:{line}")
        names.append(cli_name)
        rule += f"; then the command-line overrides in {cli_name}"
    complete = any(f.name == "default.yaml" for f in ordered)
    if not complete:
        notes.append("no default.yaml among the layers: transforms it would define are unknown")
    src = ConfigSource(SourceKind.LAYERED, tuple(names), rule, complete, tuple(notes))
    return EffectiveConfig(src, merged, origins)


def _redaction_notes(layers: list[Layer]) -> list[str]:
    n = sum(layer.redacted for layer in layers)
    return [f"{n} value(s) that look like credentials are shown as [redacted]"] if n else []


def _display(path: Path, root: Path) -> str:
    for p, r in ((path, root), (path.absolute(), root.absolute())):
        try:
            return p.relative_to(r).as_posix()
        except ValueError:
            continue
    return str(path)


def _is_leaf(data: Any, path: KeyPath) -> bool:
    for k in path:
        if not isinstance(data, dict) or k not in data:
            return False
        data = data[k]
    return not isinstance(data, dict) or not data


def _order(files: list[Path], base: Path, registry: Path | None, root: Path, inside: Path,
           notes: list[str]) -> list[Path]:
    """Order layers; the first sentence appended to ``notes`` states the rule used."""
    by_rel = {f.relative_to(base).as_posix() if f.is_relative_to(base) else f.name: f for f in files}
    by_name: dict[str, Path] = {}
    for f in files:
        by_name.setdefault(f.name, f)
    for order_name in ORDER_FILES:
        order_file = base / order_name
        if order_file.exists() or order_file.is_symlink():
            listed: list[Path] = []
            for n, name in read_order_file(order_file, inside):
                match = by_rel.get(name) or by_name.get(name)
                if match is None:
                    raise InputError(order_file, f"lists {excerpt(name, 100)!r}, which is not a config file "
                                                 f"in {base}", line=n)
                if match not in listed:
                    listed.append(match)
            rest = _default_order([f for f in files if f not in listed])
            notes.insert(0, f"order file {_display(order_file, root)}")
            if rest:
                notes.append("not in the order file, merged after it by the default rule: "
                             + ", ".join(_display(f, root) for f in rest))
            return listed + rest
    if registry is not None:
        chain = _registry_chain(registry, inside)
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


def _registry_chain(registry: Path, inside: Path) -> list[str] | None:
    data = load_file(registry, inside).data
    models = data.get("models")
    if not isinstance(models, list) or len(models) != 1 or not isinstance(models[0], dict):
        return None
    entry = models[0]
    chain: list[str] = []
    for key in ("ad_defaults", "yaml_extra", "user_configs"):
        value = entry.get(key) or []
        if isinstance(value, list):
            chain.extend(Path(str(v)).name for v in value)
    return chain


def _merge_layers(
    ordered: list[Path], loaded: dict[Path, Layer], root: Path
) -> tuple[dict[str, Any], dict[KeyPath, str], list[str]]:
    merged: dict[str, Any] = {}
    origins: dict[KeyPath, str] = {}
    names: list[str] = []
    for f in ordered:
        name = _display(f, root)
        names.append(name)
        _deep_merge(merged, loaded[f].data, (), origins, name, loaded[f].lines)
    return merged, origins, names


def _deep_merge(dst: dict[str, Any], src: dict[str, Any], prefix: KeyPath, origins: dict[KeyPath, str],
                name: str, lines: dict[KeyPath, int]) -> None:
    """Merge ``src`` into ``dst``: mappings merge key by key, anything else (lists too) replaces.
    ``origins`` keeps, for every leaf, the ``file:line`` of the layer that set it last."""
    for key, value in src.items():
        path = (*prefix, key)
        line = lines.get(path)
        where = f"{name}:{line}" if line else name
        if isinstance(value, dict):
            if not isinstance(dst.get(key), dict):
                _replace(origins, path, dst.get(key))
                dst[key] = {}
                if not value:
                    origins[path] = where
            _deep_merge(dst[key], value, path, origins, name, lines)
            continue
        _replace(origins, path, dst.get(key))
        dst[key] = _copy(value)
        origins[path] = where


def _replace(origins: dict[KeyPath, str], path: KeyPath, old: Any) -> None:
    """Forget the origins a value at ``path`` replaces: the old value's own (and its subtree's) and the
    ancestors' (an empty mapping that now gets content). Work is bounded by the old value's size."""
    for n in range(1, len(path)):
        origins.pop(path[:n], None)
    origins.pop(path, None)
    stack = [(path, old)]
    while stack:
        p, v = stack.pop()
        if isinstance(v, dict):
            for k, sub in v.items():
                origins.pop((*p, k), None)
                stack.append(((*p, k), sub))


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _set_path(data: dict[str, Any], path: KeyPath, value: Any, origins: dict[KeyPath, str],
              where: str) -> None:
    """Set ``path`` to ``value`` (a command-line override), creating mappings on the way; ``where`` becomes
    its origin."""
    for i, k in enumerate(path[:-1]):
        nxt = data.get(k)
        if not isinstance(nxt, dict):
            _replace(origins, path[: i + 1], nxt)
            nxt = data[k] = {}
        data = nxt
    _replace(origins, path, data.get(path[-1]))
    data[path[-1]] = value
    origins[path] = where


__all__ = ["AD_KEYS", "discover_config_files", "load_config_files", "parse"]
