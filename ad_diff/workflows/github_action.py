"""The logic behind the repository's GitHub Action (``action.yml``): compare, then comment.

The composite action installs ad-diff in a virtual environment of its own (never into the runner's
Python), then calls two steps of this module, with the upload of the reports between them so the comment
can link to the artifact, and ends with the Gate step, which runs whatever happened before it:

* ``python -m ad_diff.workflows.github_action compare`` runs ``ad-diff`` (the real command line, so the
  action gates exactly as the CLI does) with the reports written under ``out-dir``, and writes the step's
  outputs (``verdict``, ``exit-code``, ``headline``, the report paths) to ``$GITHUB_OUTPUT``. Every outcome
  reaches the step summary and the PR comment: a verdict as the report, an input error (exit 2) or a bug
  (exit 3) as an ``ERROR`` section naming it (ad-diff writes it into the reports it was asked for; this
  step writes it when ad-diff never got that far: a bad input of the action, a command-line error). It
  exits 0: the Gate step turns ``exit-code`` into the job's result.
* ``python -m ad_diff.workflows.github_action comment`` creates or updates one PR comment
  (:mod:`ad_diff.workflows.github_comment`); a comment GitHub refuses is a warning, never a failure.

Inputs arrive as ``INPUT_*`` environment variables (never interpolated into a shell line by the action),
GitHub's context as the usual ``GITHUB_*`` variables. tests/unit/workflows run action.yml's steps with
composite-action semantics against fixture runs and a fake GitHub API on the loopback interface.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from ad_diff.core import jsonsafe, outfile
from ad_diff.core.sinks import cut, job_log, one_line, visible
from ad_diff.errors import AdDiffError
from ad_diff.gate import VerdictWord
from ad_diff.report.markdown import render_error
from ad_diff.workflows.github_comment import (
    MARKER_PREFIX,
    MAX_COMMENT,
    PR_NUMBER_FILE,
    ActionError,
    annotation,
    comment_body,
    event,
    flag,
    marker,
    out_dir,
    pr_of_event,
    step,
)

ERROR_PREFIXES = ("ad-diff: error: ", "ad-diff: internal error: ", "Error: ")
"""How ad-diff (and click, for a command-line usage error) start the line that says what went wrong."""


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get("INPUT_" + name.upper().replace(" ", "_"), default).strip()


def set_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """Append ``outputs`` to ``$GITHUB_OUTPUT`` in the delimiter form (values may hold newlines)."""
    if not path:
        return
    text = ""
    for key, value in outputs.items():
        delim = f"ghadelim_{secrets.token_hex(8)}"
        text += f"{key}<<{delim}\n{value}\n{delim}\n"
    append(Path(path), text)


def compare_args(env: Mapping[str, str], out: Path) -> list[str]:
    """The ad-diff command line the inputs ask for."""
    base = _input(env, "golden") or _input(env, "baseline")
    cand = _input(env, "candidate")
    if not base or not cand:
        raise ActionError("inputs candidate and one of baseline or golden are required")
    if _input(env, "golden") and _input(env, "baseline"):
        raise ActionError("give baseline or golden, not both")
    args = [base, cand, "--fail-on", _input(env, "fail-on", "error") or "error",
            "--markdown", str(out / "comment.md"), "--comment-limit", str(MAX_COMMENT - 1000),
            "--json", str(out / "report.json"), "--junit", str(out / "junit.xml"),
            "--html", str(out / "report.html"), "--no-color"]
    if _input(env, "expected"):
        args += ["--expected", _input(env, "expected")]
    if summary_path(env):
        args += ["--step-summary", str(summary_path(env))]
    return args


def summary_path(env: Mapping[str, str]) -> str | None:
    """``$GITHUB_STEP_SUMMARY`` when the ``step-summary`` input is on."""
    summary = env.get("GITHUB_STEP_SUMMARY")
    return summary if summary and flag(env, "step-summary", True) else None


def error_message(stderr: str, code: int) -> str:
    """What went wrong, from ad-diff's error output: its ``ad-diff: error:`` line without that prefix (the
    reports add their own), else the last line it printed."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        for prefix in ERROR_PREFIXES:
            if ln.startswith(prefix):
                return ln[len(prefix):]
    return lines[-1] if lines else f"ad-diff exited {code} without a message"


def append(path: Path, text: str) -> None:
    """Append ``text`` to a file of the runner's (``$GITHUB_OUTPUT``, the step summary) through the one
    writer (never through a link, never into a file a run was read from)."""
    try:
        outfile.write_file(path, text.encode("utf-8", "backslashreplace"), append=True)
    except AdDiffError as e:
        raise ActionError(str(e)) from None


def _report(out: Path, code: int) -> tuple[str, str] | None:
    """``(verdict, headline)`` of a finished comparison's JSON report, ``None`` when there is none; the
    headline as one line of the job log (the Gate step echoes it)."""
    report = out / "report.json"
    if code not in (0, 1):
        return None
    try:
        raw = report.read_bytes()  # not a run path: the report ad-diff itself wrote into out-dir
        data = jsonsafe.load_json(raw, report, "the JSON report ad-diff wrote")
    except (OSError, AdDiffError):
        return None
    if not isinstance(data, dict):
        return None
    return str(data.get("verdict", VerdictWord.ERROR.value)), log_line(str(data.get("headline", "")))


def log_line(text: str) -> str:
    """``text`` as one line of the job log: visible escapes, line breaks as ``\\n``, no workflow command,
    at most :data:`ad_diff.core.sinks.VALUE_CHARS` characters."""
    return job_log(one_line(visible(cut(text))))


def compare(env: Mapping[str, str]) -> dict[str, str]:
    """Run the comparison; returns (and writes to ``$GITHUB_OUTPUT``) the step's outputs. A bad input of the
    action itself is an input error like any other: verdict ``error``, exit code 2, reported everywhere."""
    out = out_dir(env)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("comment.md", "report.json"):  # an earlier run's reports must not stand for this one
        (out / stale).unlink(missing_ok=True)
    number = pr_of_event(event(env))
    if number is not None:  # for a workflow_run workflow that posts the comment (docs/github-actions.md)
        outfile.write_file(out / PR_NUMBER_FILE, f"{number}\n".encode())
    try:
        cmd = [sys.executable, "-m", "ad_diff", *compare_args(env, out)]
    except ActionError as e:
        code, stderr = 2, f"ad-diff: error: action input: {e}"
    else:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(env))
        sys.stdout.write(job_log(proc.stdout))  # copied to the job log: no line may act on the runner
        sys.stderr.write(job_log(proc.stderr))
        code, stderr = proc.returncode, proc.stderr
    done = _report(out, code)
    if done is not None:
        verdict, headline = done
    else:
        message = log_line(error_message(stderr, code))
        verdict, headline = VerdictWord.ERROR.value, f"{VerdictWord.ERROR.headline_word}: {message}"
        sys.stdout.write(f"::error title=ad-diff::{annotation(message)}\n")
        if not (out / "comment.md").is_file():  # not a run path: ad-diff writes it, unless it never got there
            text = render_error(message, code)
            outfile.write_file(out / "comment.md", text.encode("utf-8", "backslashreplace"))
            wanted = _input(env, "step-summary").lower() != "false"
            summary = env.get("GITHUB_STEP_SUMMARY") if wanted else None
            if summary:
                append(Path(summary), text)
    outputs = {
        "verdict": verdict,
        "exit-code": str(code),
        "headline": headline,
        "markdown": str(out / "comment.md"),
        "json": str(out / "report.json"),
        "junit": str(out / "junit.xml"),
        "html": str(out / "report.html"),
        "out-dir": str(out),
    }
    set_outputs(env.get("GITHUB_OUTPUT"), outputs)
    return outputs


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """``compare`` or ``comment``: 0 whatever the verdict or the comment's fate; 2 (with an error annotation)
    only for a malformed input of the comment step or a wrong command line."""
    args = sys.argv[1:] if argv is None else argv
    environ = os.environ if env is None else env
    try:
        if args == ["compare"]:
            compare(environ)
        elif args == ["comment"]:
            done, commands = step(environ, environ.get("GITHUB_STEP_SUMMARY"))
            for line in commands:
                sys.stdout.write(line + "\n")
            sys.stdout.write(f"ad-diff comment: {done}\n")
        else:
            raise ActionError("usage: python -m ad_diff.workflows.github_action compare|comment")
    except ActionError as e:
        sys.stdout.write(f"::error title=ad-diff action::{annotation(str(e))}\n")
        return 2
    return 0


__all__ = ["MARKER_PREFIX", "MAX_COMMENT", "ActionError", "comment_body", "compare", "compare_args",
           "error_message", "main", "marker", "set_outputs"]


if __name__ == "__main__":
    raise SystemExit(main())
