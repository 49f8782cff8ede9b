"""The GitHub Action's comment step: create or update one PR comment, never fail the job.

The job's result is the gate's verdict (``action.yml``'s last step), so nothing here can change it: a
comment GitHub refuses (a fork's read-only token: HTTP 403 "Resource not accessible by integration"), an API
error or no network at all becomes a warning annotation and a section of the step summary that quotes
GitHub's answer and says what to do; the step exits 0.

Two events post a comment:

* ``pull_request`` (and ``pull_request_target``): the PR of the event.
* ``workflow_run`` of a ``pull_request`` run: the safe pattern for pull requests from forks
  (docs/github-actions.md). The first workflow uploads the reports, with the PR's number in
  ``OUT_DIR/pr-number`` (written by the compare step); the second, trusted workflow downloads them and runs
  this step. The number comes from a run of untrusted code, so it is used only when GitHub confirms that
  the PR's head commit is the one that run tested.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ad_diff.core import jsonsafe, outfile
from ad_diff.core.escape import excerpt, md_code, md_escape
from ad_diff.errors import AdDiffError
from ad_diff.release import doc_url

MARKER_PREFIX = "<!-- ad-diff-report"
"""The hidden first line of the action's PR comment (with the ``comment-key`` input, one comment per key)."""
MAX_COMMENT = 65_536
"""GitHub's limit on a comment body, in characters."""
PAGE_LIMIT = 50
"""Pages of 100 comments read at most when looking for the action's comment (5,000 comments)."""
PR_NUMBER_FILE = "pr-number"
"""The file of the reports folder that names the PR (for a ``workflow_run`` workflow that posts it)."""
FORK_DOC = doc_url("github-actions.md", "pull-requests-from-forks")
"""Where the two-workflow pattern for fork pull requests is shown."""


class ActionError(Exception):
    """A missing or malformed input: printed as a workflow error annotation, exit 2."""


class GitHubError(Exception):
    """GitHub refused a call or could not be reached; ``status`` is the HTTP status (``None``: no answer)."""

    def __init__(self, call: str, status: int | None, message: str) -> None:
        self.call, self.status, self.message = call, status, message
        self.answer = f"HTTP {status} {message}" if status is not None else f"no answer ({message})"
        """What came back: ``HTTP 403 Resource not accessible by integration``, ``no answer (...)``."""
        super().__init__(f"GitHub API {call}: {self.answer}")


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get("INPUT_" + name.upper().replace(" ", "_"), default).strip()


def flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """A ``true``/``false`` input; anything else is an :class:`ActionError`."""
    value = _input(env, name, "true" if default else "false").lower()
    if value not in ("true", "false"):
        raise ActionError(f"input {name} must be true or false, not {value!r}")
    return value == "true"


def out_dir(env: Mapping[str, str]) -> Path:
    """The reports folder (input ``out-dir``)."""
    return Path(_input(env, "out-dir", "ad-diff-out") or "ad-diff-out")


def marker(key: str) -> str:
    """The hidden marker of the comment for ``key`` (several ad-diff comments can share one PR)."""
    safe = "".join(c for c in key if c.isalnum() or c in "-_.")[:64]
    return f"{MARKER_PREFIX}{':' + safe if safe else ''} -->"


def annotation(text: str) -> str:
    """``text`` as the message of a workflow command: %, CR and LF must be escaped or they end it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_message(e: urllib.error.HTTPError) -> str:
    """GitHub's own words for a refusal (the ``message`` of its JSON answer), else the HTTP reason."""
    try:
        data = jsonsafe.load_json(e.read(64 << 10) or b"null", "GitHub's answer", "a JSON error answer")
    except (AdDiffError, OSError):
        data = None
    message = data.get("message") if isinstance(data, dict) else None
    return excerpt(str(message if isinstance(message, str) and message else e.reason), 300)


@dataclass
class GitHub:
    """The few REST calls the comment needs."""

    api: str
    repo: str
    token: str

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One API call; raise :class:`GitHubError` with GitHub's answer on failure."""
        req = urllib.request.Request(
            f"{self.api.rstrip('/')}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json",
                     "User-Agent": "ad-diff-action"},
        )
        where = f"{method} {path.split('?', 1)[0]}"
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read(16 << 20)
        except urllib.error.HTTPError as e:
            raise GitHubError(where, e.code, _github_message(e)) from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            reason = getattr(e, "reason", None) or e
            raise GitHubError(where, None, excerpt(str(reason), 300)) from None
        try:
            return jsonsafe.load_json(raw, f"GitHub API {where}", "a JSON answer") if raw else None
        except AdDiffError:
            raise GitHubError(where, None, "the answer is not JSON (or not within bounds)") from None

    def find_comment(self, number: int, mark: str) -> int | None:
        """The id of the PR's comment that starts with ``mark``."""
        for page in range(1, PAGE_LIMIT + 1):
            batch = self.call("GET", f"/repos/{self.repo}/issues/{number}/comments?per_page=100&page={page}")
            if not isinstance(batch, list):
                raise GitHubError("GET comments", None, "the comment list is not a list")
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


def event(env: Mapping[str, str]) -> dict[str, Any]:
    """The event payload (``$GITHUB_EVENT_PATH``), ``{}`` when there is none."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        raw = Path(path).read_bytes()  # not a run path: the event file the runner wrote
        data = jsonsafe.load_json(raw, path, "the GitHub event file")
    except OSError:
        return {}
    except AdDiffError as e:
        raise ActionError(str(e)) from None
    return data if isinstance(data, dict) else {}


def _dig(data: Any, *keys: str) -> Any:
    for k in keys:
        data = data.get(k) if isinstance(data, dict) else None
    return data


def pr_of_event(ev: Mapping[str, Any]) -> int | None:
    """The PR number of a ``pull_request``/``pull_request_target`` event, else ``None``."""
    number = _dig(ev, "pull_request", "number")
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def fork_of(ev: Mapping[str, Any]) -> str | None:
    """The fork a pull request comes from (``owner/repo``), ``None`` when it comes from the repository."""
    pr = ev.get("pull_request") or _dig(ev, "workflow_run")
    head = _dig(pr, "head", "repo", "full_name") or _dig(pr, "head_repository", "full_name")
    base = _dig(pr, "base", "repo", "full_name") or _dig(ev, "repository", "full_name")
    fork = _dig(pr, "head", "repo", "fork") or _dig(pr, "head_repository", "fork")
    if isinstance(head, str) and (fork is True or (isinstance(base, str) and head != base)):
        return head
    return None


def _reported_pr(env: Mapping[str, str], ev: Mapping[str, Any], gh: GitHub) -> int | None:
    """The PR a ``workflow_run`` event's reports name, once GitHub confirms its head is the run's commit."""
    run = ev.get("workflow_run")
    if not isinstance(run, dict) or run.get("event") not in ("pull_request", "pull_request_target"):
        return None
    path = out_dir(env) / PR_NUMBER_FILE
    try:
        text = path.read_bytes()[:64].decode("utf-8", "replace").strip()[:20]  # not a run path: our own file
    except OSError:
        text = ""
    if not re.fullmatch(r"[1-9]\d{0,9}", text):
        raise ActionError(f"{path}: expected the pull request's number (written by the compare step), "
                          f"found {text!r}")
    number = int(text)
    head = _dig(gh.call("GET", f"/repos/{gh.repo}/pulls/{number}"), "head", "sha")
    if not head or head != run.get("head_sha"):
        raise ActionError(f"{path} names pull request #{number}, whose head ({head}) is not the commit the "
                          f"workflow run tested ({run.get('head_sha')}); not commenting")
    return number


def post(env: Mapping[str, str]) -> str:
    """Create or update the action's PR comment; returns what was done (``created``, ``updated``,
    ``skipped: why``). Raises :class:`GitHubError` when GitHub refuses or cannot be reached."""
    if not flag(env, "comment", True):
        return "skipped: the comment input is false"
    ev = event(env)
    number = pr_of_event(ev)
    if number is None and "workflow_run" not in ev:
        return "skipped: not a pull_request or workflow_run event"
    md = out_dir(env) / "comment.md"
    if not md.is_file():  # not a run path: the report the comparison wrote into out-dir
        return f"skipped: no report at {md} (the comparison did not run)"
    token = env.get("INPUT_GITHUB-TOKEN") or env.get("INPUT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN", "")
    repo = env.get("GITHUB_REPOSITORY", "")
    if not token or not repo:
        raise ActionError("posting the comment needs GITHUB_REPOSITORY and a token (input github-token)")
    gh = GitHub(env.get("GITHUB_API_URL", "https://api.github.com"), repo, token)
    if number is None:
        number = _reported_pr(env, ev, gh)
        if number is None:
            return "skipped: the workflow run was not a pull request's"
    mark = marker(_input(env, "comment-key"))
    text = md.read_text(encoding="utf-8", errors="replace")  # not a run path: the report ad-diff wrote
    body = comment_body(text, mark, env.get("ARTIFACT_URL", ""))
    existing = gh.find_comment(number, mark)
    if existing is None:
        gh.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
        return "created"
    gh.call("PATCH", f"/repos/{repo}/issues/comments/{existing}", {"body": body})
    return "updated"


def advice(e: GitHubError, ev: Mapping[str, Any]) -> str:
    """What to do about a comment GitHub did not take, in a sentence or two (markdown)."""
    fork = fork_of(ev)
    if e.status == 403 and fork:
        return (f"This pull request comes from a fork ({md_code(fork)}): GitHub gives the workflows of fork "
                "pull requests a read-only token, so no `pull_request` workflow can comment on them. Post "
                "the comment from a second workflow, triggered by `workflow_run`, that downloads the "
                f"reports this run uploaded: see [pull requests from forks]({FORK_DOC}).")
    if e.status in (401, 403, 404):
        return ("The token cannot write to this pull request: give the job `permissions: pull-requests: "
                "write` (or pass a token that has it as `github-token`); on a pull request from a fork, "
                f"see [pull requests from forks]({FORK_DOC}).")
    return "GitHub could not take the comment now; the next run of the workflow updates it."


def warning(e: GitHubError, ev: Mapping[str, Any]) -> str:
    """The step summary's section about a comment that was not posted (the verdict above it stands)."""
    return (f"\n### \u26a0\ufe0f ad-diff: the PR comment was not posted\n\n"
            f"GitHub answered {md_code(e.call)}: {md_escape(e.answer)}.\n\n"
            f"{advice(e, ev)} The verdict above stands: the job's result is the gate's, and the reports "
            "are in the workflow's artifact.\n")


def step(env: Mapping[str, str], summary: str | None) -> tuple[str, list[str]]:
    """Run the comment step: what was done, and the workflow commands to print. A refused or failed post is a
    warning (annotation and a section appended to the step summary ``summary``), never an error."""
    try:
        return post(env), []
    except GitHubError as e:
        ev = event(env)
        if summary:
            try:  # the one writer: appended, never through a link or into a file a run was read from
                outfile.write_file(Path(summary), warning(e, ev).encode("utf-8", "backslashreplace"),
                                   append=True)
            except AdDiffError as err:
                raise ActionError(str(err)) from None
        hint = " (pull request from a fork: see the step summary)" if e.status == 403 and fork_of(ev) else ""
        command = f"::warning title=ad-diff comment not posted::{annotation(str(e) + hint)}"
        return f"not posted: {e}", [command]


__all__ = ["MARKER_PREFIX", "MAX_COMMENT", "ActionError", "GitHub", "GitHubError", "advice", "comment_body",
           "event", "flag", "fork_of", "marker", "post", "pr_of_event", "step", "warning"]
