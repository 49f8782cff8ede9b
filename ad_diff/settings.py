"""ad-diff's own settings: every knob of one comparison, resolved from defaults < config file < CLI.

The config file is ``[tool.ad-diff]`` in ``pyproject.toml`` or an ``.ad-diff.yaml``. Only options the user
actually typed on the command line override the file (the CLI passes those alone to :func:`merge`).
Unknown keys are an error that names the key; every key of :data:`SCHEMA` is documented in docs/config.md
(a test keeps the two in sync). Keys use underscores or dashes interchangeably (``fail_on`` = ``fail-on``);
paths in a file are relative to the file's folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ad_diff.errors import ConfigError

FAIL_ON_CHOICES = ("error", "match_loss", "collapse", "never")
"""Gate levels: ``error`` fails on any error-severity finding (every match loss is one); ``match_loss``
fails on match losses and incomplete runs only; ``collapse`` on collapses and incomplete runs only;
``never`` reports only."""


@dataclass(frozen=True)
class Settings:
    """All options of one comparison. Built by the CLI (or a config file); read by the pipeline."""

    baseline: Path
    candidate: Path
    baseline_log: tuple[Path, ...] = ()
    """The baseline's log file(s) given on the command line (one per rank when several); default: found."""
    candidate_log: tuple[Path, ...] = ()
    rank: int | None = None
    """Compare only this rank; ``None`` compares every rank both runs have (rank 0 leads the reports)."""
    fail_on: str = "error"
    collapse_fraction: float = 0.5
    """A loss of at least this share of the baseline matches is a collapse (a drop to 0 always is)."""
    ignore_transforms: tuple[str, ...] = ()
    """Transform keys (fnmatch globs) left out of the comparison entirely."""
    ignore_codes: tuple[str, ...] = ()
    """Finding codes dropped from the result."""
    graphs: bool = True
    """Analyse graph dumps when both runs have them."""
    tensors: bool = True
    """Compare recorded tensors when both runs have them."""
    tolerances: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``{"default": {...}, "<glob>": {"atol": .., "rtol": .., "statistic": ..}}``; see docs/config.md."""
    tensor_device: str = "cpu"
    baseline_config: Path | None = None
    candidate_config: Path | None = None
    expected_changes: Path | None = None
    """Expected-changes file (ad_diff.expectations): matching findings become acknowledged, not gating."""
    progress: bool = False
    config_explained_gates: bool = False
    """Whether a state change of a transform that its own config change explains (toggled, moved) still
    gates. Downstream match losses always keep gating, with the config change shown as likely cause."""
    model: str | None = None
    """Model name of this pair (``ad-diff batch`` sets it); expected-change entries with ``model`` match it."""

    tensor_jobs: int = 1
    """Tensor comparisons run at once (threads; numpy releases the GIL). Results do not depend on it."""
    tensor_plots: bool = False
    """Collect samples/histograms of drifting tensors: for ``--plots`` PNGs (matplotlib) and ``--html``."""
    plots_dir: Path | None = None
    """Where ``--plots`` writes PNGs of drifting tensors (the markdown names the folder)."""

FORMAT_CHOICES = ("terminal", "markdown", "json")


@dataclass(frozen=True)
class Key:
    """One configuration key: its type check and a one-line description (also shown in errors)."""

    kind: str
    """``str``, ``float``, ``int``, ``bool``, ``path``, ``globs`` (list of strings), ``table`` (mapping)."""
    help: str
    choices: tuple[str, ...] = ()


SCHEMA: dict[str, Key] = {
    # gate
    "fail_on": Key("str", "Gate level.", FAIL_ON_CHOICES),
    "collapse_fraction": Key("float", "Loss share (0-1] that counts as a collapse."),
    # what is compared
    "rank": Key("int", "Compare only this rank (default: every rank both runs have)."),
    "ignore_transforms": Key("globs", "Transform keys (globs) left out of the comparison."),
    "ignore_codes": Key("globs", "Finding codes (globs) dropped from the result."),
    "graphs": Key("bool", "Analyse graph dumps when both runs have them."),
    "tensors": Key("bool", "Compare recorded tensors when both runs have them."),
    "tolerances": Key("table", "Tensor tolerances: {default: {...}, '<glob>': {atol, rtol, statistic}}."),
    "tensor_device": Key("str", "Device used to compare tensors (cpu, cuda)."),
    "config_explained_gates": Key("bool", "Let a finding explained by a config change (the toggled transform's own state change) still gate."),
    "expected": Key("path", "Expected-changes file (docs/expected-changes.md)."),
    # output
    "format": Key("str", "Report printed on stdout.", FORMAT_CHOICES),
    "markdown": Key("path", "Also write the markdown report here."),
    "json": Key("path", "Also write the JSON report here."),
    "junit": Key("path", "Also write a JUnit XML report here."),
    "step_summary": Key("path", "Append the markdown report (up to 1 MiB) to this file."),
    "html": Key("path", "Also write the self-contained HTML report here (batch: a folder of reports)."),
    "comment_limit": Key("int", "Maximum characters of the markdown report (PR comment)."),
    "color": Key("bool", "Colour the terminal report."),
    "progress": Key("bool", "Show progress bars (default: on a terminal outside CI)."),
    "jobs": Key("int", "Parallel processes for `ad-diff batch` (default: CPU count)."),
}
"""Every key a config file may hold (underscore form)."""

_PYPROJECT_TABLE = ("tool", "ad-diff")
AUTO_FILES = (".ad-diff.yaml", ".ad-diff.yml", "pyproject.toml")
"""Looked up in the current folder when ``--config`` is not given (first one that applies wins)."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError as e:
            raise ConfigError(f"{path}: reading TOML needs Python >= 3.11 or the tomli package") from e
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from e


def _raw(path: Path) -> dict[str, Any] | None:
    """The ad-diff table of ``path``; ``None`` for a pyproject.toml without ``[tool.ad-diff]``."""
    if not path.is_file():
        raise ConfigError(f"{path}: config file does not exist")
    if path.suffix == ".toml":
        data: Any = _read_toml(path)
        for part in _PYPROJECT_TABLE:
            if not isinstance(data, dict) or part not in data:
                return None
            data = data[part]
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [tool.ad-diff] must be a table")
        return data
    import yaml  # only a YAML config file needs it (~15 ms of start-up otherwise)

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid YAML ({e})") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level, got {type(data).__name__}")
    return data


def _check(path: Path, key: str, value: Any) -> Any:
    spec = SCHEMA[key]
    where = f"{path}: key {key!r}"
    ok: Callable[[Any], bool] = {
        "str": lambda v: isinstance(v, str),
        "path": lambda v: isinstance(v, str) and v != "",
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "globs": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "table": lambda v: isinstance(v, dict),
    }[spec.kind]
    if not ok(value):
        expected = {"globs": "a list of strings", "table": "a mapping", "path": "a non-empty path string"}
        raise ConfigError(f"{where}: expected {expected.get(spec.kind, spec.kind)}, got {value!r}")
    if spec.choices and value not in spec.choices:
        raise ConfigError(f"{where}: must be one of {', '.join(spec.choices)}, not {value!r}")
    if key == "collapse_fraction" and not 0 < value <= 1:
        raise ConfigError(f"{where}: must be in (0, 1], not {value}")
    if key in ("jobs", "comment_limit") and value < 1:
        raise ConfigError(f"{where}: must be at least 1, not {value}")
    if spec.kind == "path":
        p = Path(value).expanduser()
        return p if p.is_absolute() else path.parent / p
    if spec.kind == "globs":
        return tuple(value)
    if key == "collapse_fraction":
        return float(value)
    return value


def validate(path: Path, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``raw`` against :data:`SCHEMA`; return values keyed by underscore names (paths resolved)."""
    out: dict[str, Any] = {}
    for k in sorted(raw):
        key = str(k).replace("-", "_")
        if key not in SCHEMA:
            import difflib

            close = difflib.get_close_matches(key, SCHEMA, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{path}: unknown key {k!r}{hint} (known keys: {', '.join(sorted(SCHEMA))}; see docs/config.md)"
            )
        if key in out:
            raise ConfigError(f"{path}: key {key!r} given twice (with '-' and '_')")
        out[key] = _check(path, key, raw[k])
    return out


def load_config(path: Path) -> dict[str, Any]:
    """Read and validate one config file (``*.toml`` -> ``[tool.ad-diff]``, else YAML).

    A ``pyproject.toml`` without ``[tool.ad-diff]`` yields ``{}``.
    """
    raw = _raw(path)
    return {} if raw is None else validate(path, raw)


def find_config(explicit: Path | None, cwd: Path | None = None) -> Path | None:
    """The config file to use: ``explicit``, else the first of :data:`AUTO_FILES` in ``cwd`` that applies."""
    if explicit is not None:
        return explicit
    base = cwd or Path.cwd()
    for name in AUTO_FILES:
        p = base / name
        if p.is_file() and (p.suffix != ".toml" or _raw(p) is not None):
            return p
    return None


def merge(defaults: Mapping[str, Any], file_values: Mapping[str, Any], cli_values: Mapping[str, Any]) -> dict[str, Any]:
    """defaults < file < CLI. ``cli_values`` must hold only options the user actually passed."""
    return {**defaults, **file_values, **cli_values}
