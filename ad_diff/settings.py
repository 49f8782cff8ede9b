"""ad-diff's own settings: every knob of one comparison, resolved from defaults < config file < CLI.

The config file is ``[tool.ad-diff]`` in ``pyproject.toml`` or an ``.ad-diff.yaml``. Only options the user
actually typed on the command line override the file (the CLI passes those alone to :func:`merge`).
Unknown keys are an error that names the key; every key of :data:`SCHEMA` is documented in docs/config.md
(a test keeps the two in sync). Keys use underscores or dashes interchangeably (``fail_on`` = ``fail-on``);
paths in a file are relative to the file's folder and must stay inside it: a config file found in a pull
request's checkout must not send reports to ``~/`` or read files elsewhere.

A config file is read like any untrusted input: a regular file (an auto-discovered one may not be a link
that leaves its folder), at most :data:`MAX_CONFIG_BYTES`, strict UTF-8, YAML through the bounded loader
and TOML only after :func:`_prescan_toml` (``tomllib`` is quadratic in the parts of a dotted key).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ad_diff.core import lazy, safepath
from ad_diff.core.escape import excerpt
from ad_diff.core.words import WordEnum
from ad_diff.errors import ConfigError, InputError


class FailOn(WordEnum):
    """The gate level (``--fail-on``). An incomplete run gates at every level but ``never``."""

    ERROR = "error"
    """Fail on any error-severity finding (every match loss is one)."""
    MATCH_LOSS = "match_loss"
    """Fail on match losses (and incomplete runs) only."""
    COLLAPSE = "collapse"
    """Fail on collapses (and incomplete runs) only."""
    NEVER = "never"
    """Report only."""

    @classmethod
    def _missing_(cls, value: object) -> FailOn:
        raise ValueError(f"unknown fail_on {value!r}: expected one of {', '.join(m.value for m in cls)}")


FAIL_ON_CHOICES = tuple(level.value for level in FailOn)
"""The gate levels' words, in the order the help lists them."""


@dataclass(frozen=True)
class Settings:
    """All options of one comparison. Built by the CLI (or a config file); read by the pipeline."""

    baseline: Path
    candidate: Path
    baseline_log: tuple[Path, ...] = ()
    """The baseline's log file(s) given on the command line (one per rank when several); default: found."""
    candidate_log: tuple[Path, ...] = ()
    log_options: tuple[str | None, str | None] = (None, None)
    """The command's options that name the baseline's and the candidate's log files (compare:
    ``--baseline-log``, ``--candidate-log``), which errors about a run's log suggest; ``None``: it has none
    (batch), and errors say how to leave one log in the folder instead."""
    rank: int | None = None
    """Compare only this rank; ``None`` compares every rank both runs have (rank 0 leads the reports)."""
    fail_on: FailOn = FailOn.ERROR
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
    tolerance_preset: str | None = None
    """A named set of tolerances (``--tolerance-preset``) under :attr:`tolerances`."""
    baseline_config: Path | None = None
    candidate_config: Path | None = None
    expected_changes: Path | None = None
    """Expected-changes file (ad_diff.expectations): matching findings become acknowledged, not gating."""
    progress: bool = False
    config_explained_gates: bool = False
    """Whether a state change of a transform that its own config change explains (toggled, moved) still
    gates. Downstream match losses always keep gating, with the config change shown as likely cause."""
    model: str | None = None
    """Model name of this pair (``ad-diff batch`` sets it); expected-change entries with ``model`` match
    it."""

    tensor_jobs: int = 1
    """Tensor comparisons run at once (threads; numpy releases the GIL). Results do not depend on it."""
    tensor_plots: bool = False
    """Collect samples/histograms of drifting tensors: for ``--plots`` PNGs (matplotlib) and ``--html``."""
    plots_dir: Path | None = None
    """Where ``--plots`` writes PNGs of drifting tensors (the markdown names the folder)."""
    reference_dir: Path | None = None
    """``--reference DIR``: reference tensors the user trusts; they judge instead of the runs' own."""

FORMAT_CHOICES = ("terminal", "markdown", "json")
MIN_COMMENT_LIMIT = 1000
"""Smallest ``comment_limit`` accepted: room for the verdict, the counts and the note of what was folded."""
MAX_CONFIG_BYTES = 1 << 20
"""Largest config file read (a pyproject.toml is a few KiB)."""
MAX_TOML_DEPTH = 64
"""Deepest TOML nesting accepted: the YAML loader's limit (``core.yamlsafe.MAX_DEPTH``, not imported here:
it brings yaml into every start-up)."""


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
    "tolerance_preset": Key("str", "Named tensor tolerances applied below `tolerances` (ad-onboarding: AD's "
                            "model-onboarding rmse ratios).", ("ad-onboarding",)),
    "config_explained_gates": Key("bool", "Let a finding explained by a config change (the toggled "
                                  "transform's own state change) still gate."),
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


MAX_TOML_DOTS_PER_LINE = 256
"""Most dots (outside strings and comments) on one TOML line: dotted keys cost tomllib quadratic time."""
MAX_TOML_DOTS = 20_000
"""Most dots (outside strings and comments) in one TOML file."""
_TOML_TOKEN = lazy.pattern(r'"""|' r"'''" r'|["\'#\n\[\]{}.]')


def _prescan_toml(text: str, path: Path) -> None:
    """Refuse TOML that would make ``tomllib`` slow or recurse deeply, before it sees the text: many dots
    outside strings (dotted keys) on a line or in the file, or brackets nested beyond the YAML limit."""
    line, line_dots, dots, depth = 1, 0, 0, 0
    pos = 0
    while (m := _TOML_TOKEN.search(text, pos)) is not None:
        tok, pos = m.group(0), m.end()
        if tok == "\n":
            line, line_dots = line + 1, 0
        elif tok == "#":
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif tok[0] in "\"'":
            pos = _string_end(text, pos, tok)
            line += text.count("\n", m.start(), pos)
        elif tok in "[{":
            depth += 1
            if depth > MAX_TOML_DEPTH:
                raise ConfigError(f"{path}:{line}: TOML nested more than {MAX_TOML_DEPTH} levels deep")
        elif tok in "]}":
            depth = max(depth - 1, 0)
        else:  # a dot
            line_dots, dots = line_dots + 1, dots + 1
            if line_dots > MAX_TOML_DOTS_PER_LINE or dots > MAX_TOML_DOTS:
                raise ConfigError(f"{path}:{line}: too many dotted-key parts (more than "
                                  f"{MAX_TOML_DOTS_PER_LINE} on a line or {MAX_TOML_DOTS:,} in the file); "
                                  "refusing to parse it")


def _string_end(text: str, pos: int, quote: str) -> int:
    """The index just after the string opened by ``quote`` (ending before ``pos``); an unterminated
    single-line string ends at its line's end (tomllib then reports it)."""
    line_end = text.find("\n", pos)
    stop = len(text) if len(quote) == 3 or line_end < 0 else line_end
    while True:
        end = text.find(quote, pos, stop)
        if end < 0:
            return stop
        if quote[0] == '"' and _escaped(text, end):
            pos = end + 1
            continue
        return end + len(quote)


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd run of backslashes."""
    n = 0
    while at - n - 1 >= 0 and text[at - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _read_toml(path: Path, text: str) -> dict[str, Any]:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef,import-not-found]
        except ModuleNotFoundError as e:
            raise ConfigError(f"{path}: reading TOML needs Python >= 3.11 or the tomli package") from e
    _prescan_toml(text, path)
    try:
        return tomllib.loads(text)  # bounded: _prescan_toml refused what makes tomllib slow or deep
    except (ValueError, RecursionError) as e:  # TOMLDecodeError, and int() beyond 4,300 digits
        raise ConfigError(f"{path}: not valid TOML ({excerpt(str(e), 200)})") from None


def _read_text(path: Path, auto: bool) -> str:
    """The text of a config file; an auto-discovered one may not lead out of its folder."""
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{path}: config file does not exist")
    root = path.parent if auto else path.resolve().parent
    try:
        return safepath.read_text(path, root, "an ad-diff config file (UTF-8 YAML or TOML)", MAX_CONFIG_BYTES)
    except InputError as e:
        raise ConfigError(str(e)) from None


def _raw(path: Path, auto: bool = False) -> dict[str, Any] | None:
    """The ad-diff table of ``path``; ``None`` for a pyproject.toml without ``[tool.ad-diff]``."""
    text = _read_text(path, auto)
    if path.suffix == ".toml":
        data: Any = _read_toml(path, text)
        for part in _PYPROJECT_TABLE:
            if not isinstance(data, dict) or part not in data:
                return None
            data = data[part]
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [tool.ad-diff] must be a table")
        return data
    from ad_diff.core.yamlsafe import load_yaml  # only a YAML config file needs yaml (~15 ms of start-up)

    try:
        data = load_yaml(text, path)
    except InputError as e:
        where = f"{path}:{e.line}" if e.line is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML ({e.detail.removeprefix('invalid YAML: ')})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level, got "
                          f"{type(data).__name__}")
    return data


def broken_rule(key: str, value: Any) -> str | None:
    """The rule a setting's value breaks, as ``must be ...`` (``None`` when it keeps them): the one check of
    a value's range or choice, for the config file (:func:`validate`) and the command line alike."""
    spec = SCHEMA[key]
    if spec.choices and value not in spec.choices:
        return f"must be one of {', '.join(spec.choices)}"
    if key == "collapse_fraction" and not 0 < value <= 1:
        return "must be in (0, 1]"
    if key == "jobs" and value < 1:
        return "must be at least 1"
    if key == "comment_limit" and value < MIN_COMMENT_LIMIT:
        return f"must be at least {MIN_COMMENT_LIMIT} characters (room for the verdict)"
    return None


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
    shown = excerpt(repr(value), 100)
    if not ok(value):
        expected = {"globs": "a list of strings", "table": "a mapping", "path": "a non-empty path string"}
        raise ConfigError(f"{where}: expected {expected.get(spec.kind, spec.kind)}, got {shown}")
    broken = broken_rule(key, value)
    if broken is not None:
        raise ConfigError(f"{where}: {broken}, not {shown}")
    if spec.kind == "path":
        return _contained(path, where, value)
    if spec.kind == "globs":
        return tuple(value)
    if key == "collapse_fraction":
        return float(value)
    return value


def _contained(path: Path, where: str, value: str) -> Path:
    """``value`` resolved against the config file's folder; refused when it leaves that folder."""
    folder = path.parent
    target = folder / value
    lexical = Path(os.path.normpath(folder.absolute() / value))
    escapes = value.startswith("~") or not safepath.is_inside(lexical, folder)
    if escapes or (os.path.lexists(target) and not safepath.is_inside(target, folder)):
        raise ConfigError(f"{where}: {excerpt(value, 100)!r} leaves the folder of the config file "
                          f"({folder}); paths in a config file must stay inside its folder (give other paths "
                          "on the command line)")
    return target


def validate(path: Path, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``raw`` against :data:`SCHEMA`; return values keyed by underscore names (paths resolved)."""
    out: dict[str, Any] = {}
    for k in sorted(raw):
        key = str(k).replace("-", "_")
        if key not in SCHEMA:
            import difflib

            close = difflib.get_close_matches(key, SCHEMA, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{path}: unknown key {excerpt(str(k), 100)!r}{hint} (known keys: "
                              f"{', '.join(sorted(SCHEMA))}; see docs/config.md)")
        if key in out:
            raise ConfigError(f"{path}: key {key!r} given twice (with '-' and '_')")
        out[key] = _check(path, key, raw[k])
    return out


def load_config(path: Path, auto: bool = False) -> dict[str, Any]:
    """Read and validate one config file (``*.toml`` -> ``[tool.ad-diff]``, else YAML); ``auto`` for one
    found in the current folder rather than named by ``--config``.

    A ``pyproject.toml`` without ``[tool.ad-diff]`` yields ``{}``.
    """
    raw = _raw(path, auto)
    return {} if raw is None else validate(path, raw)


def find_config(explicit: Path | None, cwd: Path | None = None) -> Path | None:
    """The config file to use: ``explicit``, else the first of :data:`AUTO_FILES` in ``cwd`` that applies."""
    if explicit is not None:
        return explicit
    base = cwd or Path.cwd()
    for name in AUTO_FILES:
        p = base / name
        if (p.exists() or p.is_symlink()) and (p.suffix != ".toml" or _raw(p, auto=True) is not None):
            return p
    return None


def merge(defaults: Mapping[str, Any], file_values: Mapping[str, Any],
          cli_values: Mapping[str, Any]) -> dict[str, Any]:
    """defaults < file < CLI. ``cli_values`` must hold only options the user actually passed."""
    return {**defaults, **file_values, **cli_values}
