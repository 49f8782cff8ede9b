"""A small runner of GitHub composite actions, for the tests: action.yml's steps run as GitHub runs them.

It implements what the repository's actions use, and refuses the rest (an unknown function, operator or
context is an error, never a silent guess):

* expressions (``${{ ... }}`` in ``env``, ``with``, ``run``; ``if:`` with or without them): literals
  (``'str'`` with ``''`` escapes, numbers, ``true``/``false``/``null``), contexts (``inputs``, ``github``,
  ``runner``, ``env``, ``steps.<id>.outputs.<name>`` / ``.outcome`` / ``.conclusion``), ``!``, ``==``,
  ``!=``, ``&&``, ``||``, parentheses, and the status functions ``success()``, ``failure()``, ``always()``,
  ``cancelled()``, with GitHub's rules: string comparison ignores case, values of other types compare as
  numbers, ``&&``/``||`` return an operand, and an ``if:`` without a status function means
  ``success() && (...)``;
* steps: ``run:`` in ``bash`` (as ``bash --noprofile --norc -eo pipefail FILE``), with the variables a runner
  gives a step (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_ENV``, ``GITHUB_PATH`` fresh per step,
  ``GITHUB_ACTION_PATH``, ``RUNNER_TEMP``, ``GITHUB_EVENT_PATH``, ...) plus the step's evaluated ``env``;
  ``uses:`` steps by a fake the test supplies; ``id``, ``continue-on-error`` (outcome ``failure``,
  conclusion ``success``), step outputs in both of ``$GITHUB_OUTPUT``'s forms;
* the job: its summary is every step's summary file in order, it fails when a step's conclusion is
  ``failure``; the action's ``outputs`` are evaluated at the end.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Value = str | float | bool | None
Uses = Callable[[dict[str, str], dict[str, str]], tuple[int, dict[str, str]]]
"""A fake ``uses:`` action: ``(with, env) -> (exit code, outputs)``."""

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)"
                    r"|(?P<op>==|!=|<=|>=|&&|\|\||[!<>().,\[\]])|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")


class ExpressionError(Exception):
    """An expression this runner does not implement, or one GitHub would reject."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ExpressionError(f"cannot read {text[pos:]!r} in {text!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def _number(v: Value) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, float):
        return v
    s = v.strip()
    if not s:
        return 0.0
    try:
        return float(int(s, 0)) if re.fullmatch(r"0x[0-9a-fA-F]+", s) else float(s)
    except ValueError:
        return float("nan")


def equal(a: Value, b: Value) -> bool:
    """GitHub's ``==``: strings case-insensitively, other mixes as numbers (``null`` is 0, NaN equals
    nothing)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b) and not isinstance(a, str):
        return a == b
    return _number(a) == _number(b)


def truthy(v: Value) -> bool:
    """GitHub's coercion to a boolean: ``false``, ``0``, ``''`` and ``null`` are false (the string
    ``'false'`` is true)."""
    if v is None or v is False or v == "":
        return False
    if isinstance(v, float):
        return v != 0 and v == v
    return True


def text(v: Value) -> str:
    """A value as GitHub writes it into a string."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    return v


class Expression:
    """One parsed expression, evaluated against a context and the job's status."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.toks = _tokens(source)
        self.i = 0
        self.calls: set[str] = set()
        self.tree = self._or()
        if self.i != len(self.toks):
            raise ExpressionError(f"unexpected {self.toks[self.i][1]!r} in {source!r}")

    # -- parsing (precedence as GitHub documents it: ! > comparison > && > ||)
    def _peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def _take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise ExpressionError(f"unexpected end of {self.source!r}")
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise ExpressionError(f"expected {want!r}, got {tok[1]!r} in {self.source!r}")
        self.i += 1
        return tok

    def _or(self) -> Any:
        node = self._and()
        while self._peek() == "||":
            self._take()
            node = ("||", node, self._and())
        return node

    def _and(self) -> Any:
        node = self._cmp()
        while self._peek() == "&&":
            self._take()
            node = ("&&", node, self._cmp())
        return node

    def _cmp(self) -> Any:
        node = self._not()
        if self._peek() in ("==", "!=", "<", ">", "<=", ">="):
            op = self._take()[1]
            node = (op, node, self._not())
        return node

    def _not(self) -> Any:
        if self._peek() == "!":
            self._take()
            return ("!", self._not())
        return self._primary()

    def _primary(self) -> Any:
        kind, tok = self._take()
        if tok == "(":
            node = self._or()
            self._take(")")
            return node
        if kind == "str":
            return ("lit", tok[1:-1].replace("''", "'"))
        if kind == "num":
            return ("lit", float(tok))
        if kind != "name":
            raise ExpressionError(f"unexpected {tok!r} in {self.source!r}")
        if tok in ("true", "false"):
            return ("lit", tok == "true")
        if tok == "null":
            return ("lit", None)
        if self._peek() == "(":
            self._take("(")
            if tok not in STATUS_FUNCTIONS:
                raise ExpressionError(f"function {tok}() is not implemented here ({self.source!r})")
            self._take(")")
            self.calls.add(tok)
            return ("call", tok)
        path = [tok]
        while self._peek() in (".", "["):
            if self._take()[1] == ".":
                path.append(self._take()[1])
            else:
                k, key = self._take()
                if k != "str":
                    raise ExpressionError(f"only string indexes are implemented ({self.source!r})")
                path.append(key[1:-1])
                self._take("]")
        return ("ctx", path)

    # -- evaluation
    def evaluate(self, ctx: Mapping[str, Any], status: Mapping[str, bool]) -> Value:
        """The expression's value; ``status`` holds ``success``/``failure``/``always``/``cancelled``."""
        return self._eval(self.tree, ctx, status)

    def _eval(self, node: Any, ctx: Mapping[str, Any], status: Mapping[str, bool]) -> Value:
        op = node[0]
        if op == "lit":
            return node[1]  # type: ignore[no-any-return]
        if op == "call":
            return status[node[1]]
        if op == "ctx":
            if node[1][0] not in ctx:
                raise ExpressionError(f"unknown context {node[1][0]!r} in {self.source!r}")
            value: Any = ctx
            for key in node[1]:
                value = value.get(key) if isinstance(value, Mapping) else None
            return value if isinstance(value, (str, float, bool)) or value is None else text(str(value))
        if op == "!":
            return not truthy(self._eval(node[1], ctx, status))
        left = self._eval(node[1], ctx, status)
        if op == "&&":
            return self._eval(node[2], ctx, status) if truthy(left) else left
        if op == "||":
            return left if truthy(left) else self._eval(node[2], ctx, status)
        right = self._eval(node[2], ctx, status)
        if op == "==":
            return equal(left, right)
        if op == "!=":
            return not equal(left, right)
        a, b = _number(left), _number(right)
        return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def interpolate(value: Any, ctx: Mapping[str, Any], status: Mapping[str, bool]) -> str:
    """A YAML scalar with its ``${{ }}`` parts evaluated (a bool or number as GitHub writes it)."""
    if isinstance(value, bool):
        return text(value)
    if isinstance(value, (int, float)):
        return text(float(value))
    return _TEMPLATE.sub(lambda m: text(Expression(m.group(1)).evaluate(ctx, status)), str(value))


def condition(source: Any, ctx: Mapping[str, Any], status: Mapping[str, bool]) -> bool:
    """An ``if:``: ``${{ }}`` optional, ``success() && (...)`` unless it calls a status function."""
    if source is None:
        source = "success()"
    if isinstance(source, bool):
        return source and status["success"]
    s = str(source).strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", s, re.S)
    expr = Expression(m.group(1) if m else s)
    value = truthy(expr.evaluate(ctx, status))
    return value if expr.calls & set(STATUS_FUNCTIONS) else value and status["success"]


def _flag(source: Any, ctx: Mapping[str, Any], status: Mapping[str, bool]) -> bool:
    """A boolean key such as ``continue-on-error``: a YAML boolean or an expression."""
    if isinstance(source, bool):
        return source
    m = re.fullmatch(r"\$\{\{(.*)\}\}", str(source).strip(), re.S)
    return truthy(Expression(m.group(1) if m else str(source)).evaluate(ctx, status))


def read_outputs(path: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` in both forms the runner reads: ``key=value`` and ``key<<DELIM``...``DELIM``."""
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)
            out[key] = "\n".join(lines[i + 1 : end])
            i = end + 1
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
            i += 1
        elif line.strip():
            raise ValueError(f"{path}: malformed output line {line!r}")
        else:
            i += 1
    return out


@dataclass
class StepRun:
    """What one step did."""

    name: str
    id: str | None
    outcome: str
    """``success``, ``failure`` or ``skipped``."""
    conclusion: str
    """The outcome after ``continue-on-error``."""
    outputs: dict[str, str] = field(default_factory=dict)
    log: str = ""
    exit_code: int | None = None


@dataclass
class JobRun:
    """The job of one action use: its steps, its result, its summary, the action's outputs."""

    steps: list[StepRun]
    outputs: dict[str, str]
    summary: str
    env_written: str
    """What steps appended to ``$GITHUB_ENV`` and ``$GITHUB_PATH`` (changes to later steps of the job)."""

    @property
    def failed(self) -> bool:
        """Whether the job ends red: a step's conclusion is ``failure``."""
        return any(s.conclusion == "failure" for s in self.steps)

    @property
    def log(self) -> str:
        """Every step's output, in order."""
        return "".join(f"--- {s.name} ({s.outcome})\n{s.log}" for s in self.steps)

    def step(self, name_or_id: str) -> StepRun:
        """The step with that id or name."""
        return next(s for s in self.steps if name_or_id in (s.id, s.name))


def run_action(action: Path, *, inputs: Mapping[str, str], workspace: Path, temp: Path,
               github: Mapping[str, Any], env: Mapping[str, str], uses: Mapping[str, Uses]) -> JobRun:
    """Run ``action`` (an action.yml) as the only step of a job in ``workspace``.

    ``github``: the ``github`` context (``event_path``, ``event_name``, ``repository``, ``api_url``,
    ``token``, ...); ``env``: the runner's environment (``PATH`` decides which ``python3`` the steps find);
    ``uses``: fakes for ``uses:`` steps by action name (``actions/upload-artifact``).
    """
    spec = yaml.safe_load(action.read_text(encoding="utf-8"))
    if spec["runs"]["using"] != "composite":
        raise ValueError(f"{action}: not a composite action")
    gh = {**github, "action_path": str(action.parent), "workspace": str(workspace)}
    ctx: dict[str, Any] = {"github": gh, "runner": {"temp": str(temp), "os": "Linux"}, "steps": {},
                           "env": {}, "inputs": {}}
    status = {"success": True, "failure": False, "always": True, "cancelled": False}
    for name, decl in (spec.get("inputs") or {}).items():
        given = inputs.get(name)
        if given is None and decl.get("required"):
            raise ValueError(f"input {name} is required")
        default = interpolate(decl.get("default", ""), ctx, status)
        ctx["inputs"][name] = given if given is not None else default
    unknown = set(inputs) - set(ctx["inputs"])
    if unknown:
        raise ValueError(f"inputs not declared by {action.name}: {sorted(unknown)}")
    runner_env = {**env, "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(workspace),
                  "GITHUB_ACTION_PATH": str(action.parent), "RUNNER_TEMP": str(temp),
                  "GITHUB_EVENT_PATH": str(github.get("event_path", "")),
                  "GITHUB_EVENT_NAME": str(github.get("event_name", "")),
                  "GITHUB_REPOSITORY": str(github.get("repository", "")),
                  "GITHUB_API_URL": str(github.get("api_url", "")),
                  "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "1"}
    steps: list[StepRun] = []
    summary: list[str] = []
    written: list[str] = []
    for n, spec_step in enumerate(spec["runs"]["steps"]):
        name = spec_step.get("name") or spec_step.get("id") or f"step {n}"
        sid = spec_step.get("id")
        if not condition(spec_step.get("if"), ctx, status):
            run = StepRun(name, sid, "skipped", "skipped")
        else:
            files = {k: temp / f"step{n}_{k.lower()}" for k in
                     ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")}
            for f in files.values():
                f.write_text("")
            step_env = {k: interpolate(v, ctx, status) for k, v in (spec_step.get("env") or {}).items()}
            full = {**runner_env, **{k: str(v) for k, v in files.items()}, **step_env}
            if "uses" in spec_step:
                fake = uses.get(str(spec_step["uses"]).split("@", 1)[0])
                if fake is None:
                    raise ValueError(f"no fake for `uses: {spec_step['uses']}`")
                with_ = {k: interpolate(v, ctx, status) for k, v in (spec_step.get("with") or {}).items()}
                code, outputs = fake(with_, full)
                log = ""
            else:
                if spec_step.get("shell") != "bash":
                    raise ValueError(f"step {name!r}: a composite run step needs `shell: bash` here")
                script = temp / f"step{n}.sh"
                script.write_text(interpolate(spec_step["run"], ctx, status))
                proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                      cwd=workspace, env=full, capture_output=True, text=True, timeout=600)
                code, log = proc.returncode, proc.stdout + proc.stderr
                outputs = read_outputs(files["GITHUB_OUTPUT"])
            summary.append(files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"))
            written.append(files["GITHUB_ENV"].read_text() + files["GITHUB_PATH"].read_text())
            outcome = "success" if code == 0 else "failure"
            keep_going = _flag(spec_step.get("continue-on-error", False), ctx, status)
            conclusion = "success" if outcome == "success" or keep_going else "failure"
            run = StepRun(name, sid, outcome, conclusion, outputs, log, code)
            if conclusion == "failure":
                status.update(success=False, failure=True)
        steps.append(run)
        if sid:
            ctx["steps"][sid] = {"outputs": run.outputs, "outcome": run.outcome, "conclusion": run.conclusion}
    declared = spec.get("outputs") or {}
    outputs = {k: interpolate(v.get("value", ""), ctx, status) for k, v in declared.items()}
    return JobRun(steps, outputs, "".join(summary), "".join(written))


def python3_shim(bin_dir: Path, log: Path, python: str, root: Path) -> dict[str, str]:
    """A machine whose ``python3`` (a runner's, or a TensorRT-LLM environment's) must never install
    anything: ``python3 -m pip`` is logged and fails; ``python3 -m venv DIR`` makes a stand-in environment
    (there is no network here) whose ``pip install`` is logged and whose ``python`` and ``ad-diff`` run this
    checkout of ad-diff; anything else runs the real interpreter, as does ``python``. Every use is logged.
    Returns the environment variables of such a machine (``PATH``)."""
    venv = bin_dir.parent / "venv-template" / "bin"
    venv.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    pip = f'echo "venv-pip $*" >> {_q(log)}; exit 0'
    scripts = {
        venv / "python": f'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then {pip}; fi\n'
                         f'PYTHONPATH={_q(root)} exec {_q(python)} "$@"',
        venv / "pip": pip,
        venv / "ad-diff": f'PYTHONPATH={_q(root)} exec {_q(python)} -m ad_diff "$@"',
        bin_dir / "python": f'exec {_q(python)} "$@"',
        bin_dir / "python3": (
            f'echo "runner-python3 $*" >> {_q(log)}\n'
            'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
            '  echo "the machine\'s own python3 was asked to install: $*" >&2; exit 1\n'
            'fi\n'
            'if [ "$1" = "-m" ] && [ "$2" = "venv" ] && [ $# = 3 ]; then\n'
            f'  mkdir -p "$3" && cp -r {_q(venv)} "$3/" && exit 0\n'
            'fi\n'
            f'exec {_q(python)} "$@"'),
    }
    for path, body in scripts.items():
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def _q(s: str | Path) -> str:
    return "'" + str(s).replace("'", "'\\''") + "'"


__all__ = ["Expression", "ExpressionError", "JobRun", "StepRun", "condition", "equal", "interpolate",
           "python3_shim", "read_outputs", "run_action", "truthy"]
