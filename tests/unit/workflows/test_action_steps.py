"""action.yml run as GitHub runs it (tests/composite.py: ``if:``, ``continue-on-error``, step outputs,
status functions), against fixture runs and a fake GitHub API that answers 201, 403, 500 or nothing at all.

Whatever the API does, the job's result is the verdict's exit code, the step summary holds the verdict,
the job's log ends with the verdict, and the runner's own Python is never asked to install anything.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from ad_diff.workflows.github_comment import FORK_DOC, marker
from tests.composite import JobRun, condition, interpolate, python3_shim, run_action
from tests.conftest import FIXTURES, ROOT

ACTION = ROOT / "action.yml"
COMMENT_ACTION = ROOT / "comment" / "action.yml"
GITHUB_403 = "Resource not accessible by integration"


@dataclass
class Api:
    """A fake GitHub REST API for one PR's comments: ``mode`` is ``201`` (works), ``403``, ``500`` or
    ``refused`` (nothing listens)."""

    mode: str
    url: str = ""
    calls: list[tuple[str, str, Any]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)
    head_sha: str = "abc123"


@pytest.fixture
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    state = Api(request.param)
    if state.mode == "refused":
        with socket.socket() as s:  # a port that was free a moment ago: connecting is refused
            s.bind(("127.0.0.1", 0))
            state.url = f"http://127.0.0.1:{s.getsockname()[1]}"
        yield state
        return

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(size)) if size else None
            state.calls.append((method, self.path, body))
            if state.mode != "201":
                code = int(state.mode)
                msg = GITHUB_403 if code == 403 else "Server Error"
                return self._send(code, {"message": msg, "documentation_url": "https://docs.github.com"})
            if method == "GET" and self.path.startswith("/repos/o/r/pulls/"):
                return self._send(200, {"number": 7, "head": {"sha": state.head_sha}})
            if method == "GET":
                return self._send(200, state.comments)
            if method == "POST":
                state.comments.append({"id": len(state.comments) + 1, "body": body["body"]})
                return self._send(201, state.comments[-1])
            cid = int(self.path.rsplit("/", 1)[1])
            next(c for c in state.comments if c["id"] == cid)["body"] = body["body"]
            return self._send(200, {"id": cid})

        def _send(self, code: int, body: Any) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802 - http.server's names
            self._answer("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._answer("POST")

        def do_PATCH(self) -> None:  # noqa: N802
            self._answer("PATCH")

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def _pr_event(tmp_path: Path, fork: bool) -> Path:
    head = "someone/r" if fork else "o/r"
    ev = {"pull_request": {"number": 7, "head": {"sha": "abc123", "repo": {"full_name": head, "fork": fork}},
                           "base": {"repo": {"full_name": "o/r"}}},
          "repository": {"full_name": "o/r"}}
    path = tmp_path / "event.json"
    path.write_text(json.dumps(ev))
    return path


def _job(tmp_path: Path, api: Api, inputs: dict[str, str], event: Path, event_name: str = "pull_request",
         action: Path = ACTION, upload_code: int = 0, no_python: bool = False) -> tuple[JobRun, Path]:
    workspace, temp = tmp_path / "ws", tmp_path / "tmp"
    workspace.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    log = tmp_path / "python3.log"
    env = {"HOME": str(tmp_path), "LANG": "C.UTF-8", "AD_DIFF_NO_PROGRESS": "1",
           **python3_shim(tmp_path / "bin", log, sys.executable, ROOT)}
    if no_python:  # a runner whose python3 cannot make a virtual environment
        (tmp_path / "bin" / "python3").write_text("#!/bin/sh\necho 'no venv module' >&2\nexit 1\n")

    def upload(with_: dict[str, str], _env: dict[str, str]) -> tuple[int, dict[str, str]]:
        assert Path(workspace / with_["path"]).is_dir() or not upload_code
        return upload_code, ({} if upload_code else {"artifact-url": "https://example.invalid/artifact/1"})

    github = {"event_path": str(event), "event_name": event_name, "repository": "o/r", "api_url": api.url,
              "token": "tok123", "event": json.loads(event.read_text())}
    job = run_action(action, inputs=inputs, workspace=workspace, temp=temp, github=github, env=env,
                     uses={"actions/upload-artifact": upload})
    return job, log


SCENARIOS = {
    "pass": ({"baseline": "identical/baseline", "candidate": "identical/candidate"}, 0),
    "fail": ({"baseline": "metadata_loss/baseline", "candidate": "metadata_loss/candidate"}, 1),
    "error": ({"baseline": "metadata_loss/baseline", "candidate": "metadata_loss/no-such-run"}, 2),
}


def _inputs(name: str) -> tuple[dict[str, str], int]:
    paths, code = SCENARIOS[name]
    return {k: str(FIXTURES / "scenarios" / v) for k, v in paths.items()}, code


def _verdict_line(job: JobRun) -> str:
    return job.log.strip().splitlines()[-1]


@pytest.mark.parametrize("api", ["201", "403", "500", "refused"], indirect=True)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_jobs_result_is_the_verdict_whatever_the_api_does(api: Api, scenario: str,
                                                              tmp_path: Path) -> None:
    inputs, code = _inputs(scenario)
    job, log = _job(tmp_path, api, inputs, _pr_event(tmp_path, fork=True))
    gate = job.step("Gate")
    assert gate.exit_code == code
    assert job.outputs["exit-code"] == str(code)
    assert job.failed is (code != 0), job.log
    assert [s.conclusion for s in job.steps if s.name != "Gate"] == ["success"] * 4, job.log
    # the log ends with the verdict, the step summary holds it, once, without a doubled prefix
    headline = job.outputs["headline"]
    assert _verdict_line(job) == f"ad-diff: {headline} (exit {code})"
    assert headline
    assert "ad-diff:" not in headline
    if code == 2:
        assert headline.startswith("ERROR: ")
        assert "no-such-run" in headline
        shown = "ad-diff: ERROR (exit 2)"
        assert "no-such-run" in job.summary
    else:
        report = json.loads((tmp_path / "ws" / job.outputs["json"]).read_text())
        assert headline == report["headline"]
        shown = f"ad-diff: {report['verdict'].upper()}: "
    assert job.summary.count(shown) == 1
    # the comment: posted, or a warning that says why not (and, for a fork's 403, what to do)
    if api.mode == "201":
        posted = [body["body"] for method, _, body in api.calls if method == "POST"]
        assert len(posted) == 1
        assert posted[0].startswith(marker(""))
        assert shown in posted[0]
        assert "not posted" not in job.summary
    else:
        assert "the PR comment was not posted" in job.summary
        assert "::warning title=ad-diff comment not posted::" in job.step("Post or update the PR comment").log
        expected = {"403": f"HTTP 403 {GITHUB_403}", "500": "HTTP 500", "refused": "no answer"}[api.mode]
        assert expected in job.summary
        assert (FORK_DOC in job.summary) is (api.mode == "403")
    # ad-diff lives in its own environment: the runner's python3 only made it, and nothing was exported
    used = log.read_text().splitlines()
    assert [ln.split()[1] for ln in used if ln.startswith("runner-python3")] == ["-c", "-m"]
    assert any(ln.startswith("venv-pip -m pip install") and ln.endswith(str(ROOT)) for ln in used)
    assert job.env_written == ""


@pytest.mark.parametrize("api", ["403"], indirect=True)
def test_a_403_on_the_repositorys_own_pr_asks_for_the_permission(api: Api, tmp_path: Path) -> None:
    inputs, _ = _inputs("pass")
    job, _ = _job(tmp_path, api, inputs, _pr_event(tmp_path, fork=False))
    assert "pull-requests: write" in job.summary
    assert not job.failed


@pytest.mark.parametrize("api", ["201"], indirect=True)
def test_the_gate_runs_whatever_happened_before_it(api: Api, tmp_path: Path) -> None:
    inputs, _ = _inputs("fail")
    job, _ = _job(tmp_path, api, inputs, _pr_event(tmp_path, fork=False), upload_code=1)
    assert job.step("artifact").outcome == "failure"
    assert job.step("Gate").exit_code == 1
    job, _ = _job(tmp_path, api, inputs, _pr_event(tmp_path, fork=False), no_python=True)
    assert job.step("install").outcome == "failure"
    assert job.step("compare").outcome == "skipped"
    assert job.step("Gate").exit_code == 3
    assert "no verdict" in job.step("Gate").log
    assert job.failed


@pytest.mark.parametrize("api", ["201"], indirect=True)
def test_comment_and_upload_inputs_switch_them_off(api: Api, tmp_path: Path) -> None:
    inputs, _ = _inputs("pass")
    job, _ = _job(tmp_path, api, {**inputs, "comment": "false", "upload": "false"},
                  _pr_event(tmp_path, fork=False))
    assert job.step("artifact").outcome == "skipped"
    assert "skipped: the comment input is false" in job.step("Post or update the PR comment").log
    assert not api.calls
    assert not job.failed


@pytest.mark.parametrize("api", ["201", "403"], indirect=True)
def test_the_workflow_run_pattern_posts_a_forks_report(api: Api, tmp_path: Path) -> None:
    """docs/github-actions.md's two workflows: the fork's run uploads, a trusted workflow_run posts."""
    inputs, _ = _inputs("fail")
    (tmp_path / "pr").mkdir()
    first, _ = _job(tmp_path / "pr", api, {**inputs, "comment": "false"}, _pr_event(tmp_path, fork=True))
    assert first.step("Gate").exit_code == 1
    assert not api.calls
    # what the second workflow downloads
    reports = (tmp_path / "pr" / "ws" / first.outputs["markdown"]).parent
    assert (reports / "pr-number").read_text().strip() == "7"
    ev = tmp_path / "run.json"
    ev.write_text(json.dumps({"workflow_run": {"event": "pull_request", "head_sha": "abc123",
                                               "html_url": "https://example.invalid/run/1",
                                               "head_repository": {"full_name": "someone/r", "fork": True}},
                              "repository": {"full_name": "o/r"}}))
    second, _ = _job(tmp_path / "pr", api, {"reports": str(reports)}, ev, "workflow_run", COMMENT_ACTION)
    assert not second.failed, second.log
    if api.mode == "201":
        posted = [b["body"] for m, _, b in api.calls if m == "POST"]
        assert len(posted) == 1
        assert "ad-diff: FAIL: 1 root cause" in posted[0]
        # a report naming a PR whose head is not the commit the run tested is not posted
        api.head_sha = "other"
        third, _ = _job(tmp_path / "pr", api, {"reports": str(reports)}, ev, "workflow_run", COMMENT_ACTION)
        assert "is not the commit the workflow run tested" in third.log
        assert len([m for m, _, _ in api.calls if m == "POST"]) == 1
    else:
        assert "the PR comment was not posted" in second.summary


# --------------------------------------------------------------------------- the runner's own semantics

def test_if_and_expressions_follow_githubs_rules() -> None:
    ctx = {"inputs": {"upload": "true", "n": "0"}, "steps": {"a": {"outcome": "failure", "outputs": {}}},
           "github": {}}
    ok = {"success": True, "failure": False, "always": True, "cancelled": False}
    failed = {**ok, "success": False, "failure": True}
    assert condition(None, ctx, ok)
    assert not condition(None, ctx, failed)
    assert condition("always() && inputs.upload == 'TRUE'", ctx, failed)  # strings compare ignoring case
    assert not condition("inputs.upload == 'true'", ctx, failed)  # no status function: success() && (...)
    assert condition("${{ failure() }}", ctx, failed)
    assert not condition("failure()", ctx, ok)
    assert condition("steps.a.outcome == 'failure' && steps.a.outputs.x == ''", ctx, ok)
    assert condition("inputs.n == 0 && !inputs.missing", ctx, ok)  # '0' == 0 as numbers; null is false
    assert condition("'false'", ctx, ok)  # a non-empty string is true, whatever it says
    assert interpolate("a ${{ inputs.upload }} ${{ steps.a.outputs.x }}b", ctx, ok) == "a true b"
    with pytest.raises(Exception, match="not implemented"):
        condition("contains(inputs.upload, 'x')", ctx, ok)
