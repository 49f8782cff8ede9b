"""The logic behind the repository's GitHub Action (``action.yml``): compare, then comment.

The composite action calls two steps of this module, with the upload of the reports between them so the
comment can link to the artifact:

* ``python -m ad_diff.workflows.github_action compare`` runs ``ad-diff`` (the real command line, so the
  action gates exactly as the CLI does) with the reports written under ``out-dir``, and writes the step's
  outputs (``verdict``, ``exit-code``, ``headline``, the report paths) to ``$GITHUB_OUTPUT``. It always
  exits 0: the last step of the action fails the job, after the comment is posted.
* ``python -m ad_diff.workflows.github_action comment`` creates or updates one PR comment, found again by a
  hidden marker, through GitHub's REST API (``$GITHUB_API_URL``, ``$GITHUB_TOKEN``), on pull-request
  events; elsewhere it does nothing and says so.

Inputs arrive as ``INPUT_*`` environment variables (never interpolated into a shell line by the action),
GitHub's context as the usual ``GITHUB_*`` variables. The tests run both steps against fixture runs, a fake
event file and a fake API server on the loopback interface.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ad_diff.core import jsonsafe, outfile
from ad_diff.core.sinks import cut, job_log, one_line, visible
from ad_diff.errors import AdDiffError

MARKER_PREFIX = "<!-- ad-diff-report"
"""The hidden first line of the action's PR comment (with the ``comment-key`` input, one comment per key)."""
MAX_COMMENT = 65_536
"""GitHub's limit on a comment body, in characters."""
PAGE_LIMIT = 50
"""Pages of 100 comments read at most when looking for the action's comment (5,000 comments)."""


class ActionError(Exception):
    """A missing input or a failed API call: printed as a workflow error annotation, exit 2."""


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get("INPUT_" + name.upper().replace(" ", "_"), default).strip()


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = _input(env, name, "true" if default else "false").lower()
    if value not in ("true", "false"):
        raise ActionError(f"input {name} must be true or false, not {value!r}")
    return value == "true"


def marker(key: str) -> str:
    """The hidden marker of the comment for ``key`` (several ad-diff comments can share one PR)."""
    safe = "".join(c for c in key if c.isalnum() or c in "-_.")[:64]
    return f"{MARKER_PREFIX}{':' + safe if safe else ''} -->"


def set_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """Append ``outputs`` to ``$GITHUB_OUTPUT`` in the delimiter form (values may hold newlines)."""
    if not path:
        return
    text = ""
    for key, value in outputs.items():
        delim = f"ghadelim_{secrets.token_hex(8)}"
        text += f"{key}<<{delim}\n{value}\n{delim}\n"
    try:  # the one writer: appended, never through a link
        outfile.write_file(Path(path), text.encode("utf-8", "backslashreplace"), append=True)
    except AdDiffError as e:
        raise ActionError(str(e)) from None


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
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary and _flag(env, "step-summary", True):
        args += ["--step-summary", summary]
    return args


def compare(env: Mapping[str, str]) -> dict[str, str]:
    """Run the comparison; returns (and writes to ``$GITHUB_OUTPUT``) the step's outputs."""
    out = Path(_input(env, "out-dir", "ad-diff-out") or "ad-diff-out")
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "ad_diff", *compare_args(env, out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(env))
    sys.stdout.write(job_log(proc.stdout))  # copied to the job log: no line may act on the runner
    sys.stderr.write(job_log(proc.stderr))
    verdict, headline = "error", ""
    report = out / "report.json"
    data = _report(report) if proc.returncode in (0, 1) else None
    if isinstance(data, dict):
        # the Gate step echoes the headline into the job log: one line, no workflow command, bounded
        verdict, headline = str(data.get("verdict", "error")), _log_line(str(data.get("headline", "")))
    else:
        last = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        headline = _log_line(last[-1]) if last else f"ad-diff exited {proc.returncode}"
        sys.stdout.write(f"::error title=ad-diff::{_annotation(headline)}\n")
    outputs = {
        "verdict": verdict,
        "exit-code": str(proc.returncode),
        "headline": headline,
        "markdown": str(out / "comment.md"),
        "json": str(report),
        "junit": str(out / "junit.xml"),
        "html": str(out / "report.html"),
        "out-dir": str(out),
    }
    set_outputs(env.get("GITHUB_OUTPUT"), outputs)
    return outputs


def _report(path: Path) -> Any:
    """The JSON report the comparison just wrote into the action's out-dir (``None`` when there is none),
    through the one bounded JSON reader."""
    try:
        raw = path.read_bytes()  # not a run path: the report ad-diff itself wrote into out-dir
    except OSError:
        return None
    return _json(raw, path, "the JSON report ad-diff wrote")


def _json(raw: bytes, where: Path | str, what: str, **bounds: Any) -> Any:
    """``raw`` through the one bounded JSON reader (:mod:`ad_diff.core.jsonsafe`); a refusal is an
    :class:`ActionError` (an annotation and exit 2, never a traceback)."""
    try:
        return jsonsafe.load_json(raw, where, what, **bounds)
    except AdDiffError as e:
        raise ActionError(str(e)) from None


def _log_line(text: str) -> str:
    """``text`` as one line of the job log: visible escapes, line breaks as ``\\n``, no workflow command,
    at most :data:`ad_diff.core.sinks.VALUE_CHARS` characters."""
    return job_log(one_line(visible(cut(text))))


def _annotation(text: str) -> str:
    # workflow commands: %, CR and LF must be escaped or they end the command
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


@dataclass
class GitHub:
    """The few REST calls the comment needs."""

    api: str
    repo: str
    token: str

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One API call; raise :class:`ActionError` naming the status on failure."""
        req = urllib.request.Request(
            f"{self.api.rstrip('/')}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json",
                     "User-Agent": "ad-diff-action"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read(16 << 20)
        except urllib.error.HTTPError as e:
            raise ActionError(f"GitHub API {method} {path}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise ActionError(f"GitHub API {method} {path}: {e}") from None
        return _json(raw, f"GitHub API {method} {path}", "a JSON answer") if raw else None

    def find_comment(self, number: int, mark: str) -> int | None:
        """The id of the PR's comment that starts with ``mark``."""
        for page in range(1, PAGE_LIMIT + 1):
            batch = self.call("GET", f"/repos/{self.repo}/issues/{number}/comments?per_page=100&page={page}")
            if not isinstance(batch, list):
                raise ActionError("GitHub API: the comment list is not a list")
            for c in batch:
                if isinstance(c, dict) and str(c.get("body", "")).startswith(mark):
                    return int(c["id"])
            if len(batch) < 100:
                return None
        return None


def comment_body(markdown: str, mark: str, artifact_url: str) -> str:
    """The comment: the marker, the markdown report, the link to the artifact; within GitHub's limit."""
    tail = f"\n\nFull reports (HTML, JSON, JUnit): [artifact]({artifact_url})\n" if artifact_url else "\n"
    room = MAX_COMMENT - len(mark) - 1 - len(tail)
    text = markdown if len(markdown) <= room else markdown[: room - 40] + "\n\n(report cut to fit a comment)"
    return f"{mark}\n{text}{tail}"


def pull_number(env: Mapping[str, str]) -> int | None:
    """The PR number of a ``pull_request``/``pull_request_target`` event, else ``None``."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        raw = Path(path).read_bytes()  # not a run path: the event file the runner wrote
    except OSError:
        return None
    event = _json(raw, path, "the GitHub event file")
    pr = event.get("pull_request") if isinstance(event, dict) else None
    number = pr.get("number") if isinstance(pr, dict) else None
    return number if isinstance(number, int) else None


def comment(env: Mapping[str, str]) -> str:
    """Create or update the action's PR comment; returns what was done (``created``, ``updated``,
    ``skipped: why``)."""
    if not _flag(env, "comment", True):
        return "skipped: the comment input is false"
    number = pull_number(env)
    if number is None:
        return "skipped: not a pull_request event"
    md = Path(_input(env, "out-dir", "ad-diff-out") or "ad-diff-out") / "comment.md"
    if not md.is_file():  # not a run path: the report the comparison wrote into out-dir
        return f"skipped: no report at {md} (the comparison did not run)"
    token = env.get("INPUT_GITHUB-TOKEN") or env.get("INPUT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN", "")
    repo = env.get("GITHUB_REPOSITORY", "")
    if not token or not repo:
        raise ActionError("posting the comment needs GITHUB_REPOSITORY and a token (input github-token)")
    gh = GitHub(env.get("GITHUB_API_URL", "https://api.github.com"), repo, token)
    mark = marker(_input(env, "comment-key"))
    text = md.read_text(encoding="utf-8")  # not a run path: the report the comparison wrote into out-dir
    body = comment_body(text, mark, env.get("ARTIFACT_URL", ""))
    existing = gh.find_comment(number, mark)
    if existing is None:
        gh.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
        return "created"
    gh.call("PATCH", f"/repos/{repo}/issues/comments/{existing}", {"body": body})
    return "updated"


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """``compare`` or ``comment``: 0 on success, 2 (with an error annotation) on a bad input or API error."""
    args = sys.argv[1:] if argv is None else argv
    environ = os.environ if env is None else env
    try:
        if args == ["compare"]:
            compare(environ)
        elif args == ["comment"]:
            sys.stdout.write(f"ad-diff comment: {comment(environ)}\n")
        else:
            raise ActionError("usage: python -m ad_diff.workflows.github_action compare|comment")
    except ActionError as e:
        sys.stdout.write(f"::error title=ad-diff action::{_annotation(str(e))}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
