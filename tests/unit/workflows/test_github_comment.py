"""The action's comment step (ad_diff/workflows/github_comment.py) against a fake event and a fake REST API
served on the loopback interface: one comment per key, created then updated; a refused or failed post is a
warning. action.yml's steps around it run in test_action_steps.py."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from ad_diff.workflows import github_comment as gc

# ------------------------------------------------------------------------------------- fake GitHub API

class FakeGitHub:
    """Issue comments of one PR, served like GitHub's REST API (pagination by 100)."""

    def __init__(self, comments: list[dict[str, Any]]) -> None:
        self.comments = comments
        self.calls: list[tuple[str, str, Any]] = []
        self.auth: set[str] = set()


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    state = FakeGitHub([{"id": 10 + i, "body": f"other comment {i}"} for i in range(150)])

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: Any) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _body(self) -> Any:
            return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            state.auth.add(self.headers["Authorization"])
            m = re.fullmatch(r"/repos/o/r/issues/7/comments\?per_page=100&page=(\d+)", self.path)
            assert m, self.path
            page = int(m.group(1))
            state.calls.append(("GET", self.path, None))
            self._send(200, state.comments[(page - 1) * 100 : page * 100])

        def do_POST(self) -> None:  # noqa: N802
            body = self._body()
            state.calls.append(("POST", self.path, body))
            assert self.path == "/repos/o/r/issues/7/comments"
            state.comments.append({"id": 999, "body": body["body"]})
            self._send(201, state.comments[-1])

        def do_PATCH(self) -> None:  # noqa: N802
            body = self._body()
            state.calls.append(("PATCH", self.path, body))
            cid = int(self.path.rsplit("/", 1)[1])
            next(c for c in state.comments if c["id"] == cid)["body"] = body["body"]
            self._send(200, {"id": cid})

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _env(tmp_path: Path, **inputs: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env |= {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "INPUT_OUT-DIR": str(tmp_path / "out")}
    return env | {"INPUT_" + k.upper().replace("_", "-"): v for k, v in inputs.items()}


def _comment_env(tmp_path: Path, api: str, **inputs: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    (tmp_path / "out").mkdir(exist_ok=True)
    (tmp_path / "out" / "comment.md").write_text("## ❌ ad-diff: FAIL: 1 root cause\n")
    return _env(tmp_path, **inputs) | {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r",
                                       "GITHUB_API_URL": api, "INPUT_GITHUB-TOKEN": "tok123",
                                       "ARTIFACT_URL": "https://example.invalid/artifact/1"}


def test_comment_created_then_updated_not_duplicated(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    state, api = github
    env = _comment_env(tmp_path, api)
    assert gc.post(env) == "created"
    assert gc.post(env) == "updated"
    mine = [c for c in state.comments if c["body"].startswith(gc.marker(""))]
    assert len(mine) == 1
    assert "FAIL: 1 root cause" in mine[0]["body"]
    assert "https://example.invalid/artifact/1" in mine[0]["body"]
    assert [m for m, _, _ in state.calls].count("POST") == 1
    assert state.auth == {"Bearer tok123"}
    # the second run paged past the 150 other comments to find its own
    assert ("GET", "/repos/o/r/issues/7/comments?per_page=100&page=2", None) in state.calls


def test_comment_keys_keep_comments_apart(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    state, api = github
    assert gc.post(_comment_env(tmp_path, api, comment_key="llama")) == "created"
    assert gc.post(_comment_env(tmp_path, api, comment_key="mixtral")) == "created"
    assert gc.post(_comment_env(tmp_path, api, comment_key="llama")) == "updated"


def test_comment_skipped_off_pull_requests_and_when_disabled(tmp_path: Path) -> None:
    env = _comment_env(tmp_path, "http://127.0.0.1:9")
    assert gc.post(env | {"INPUT_COMMENT": "false"}).startswith("skipped")
    (tmp_path / "event.json").write_text(json.dumps({"push": {}}))
    assert gc.post(env) == "skipped: not a pull_request or workflow_run event"


def test_no_answer_is_a_warning_in_the_summary_never_a_failure(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from ad_diff.workflows import github_action as ga

    env = _comment_env(tmp_path, "http://127.0.0.1:9")  # nothing listens there
    assert ga.main(["comment"], env) == 0
    printed = capsys.readouterr().out
    assert "::warning title=ad-diff comment not posted::GitHub API GET" in printed
    assert "::error" not in printed
    summary = (tmp_path / "summary.md").read_text()
    assert "the PR comment was not posted" in summary
    assert "no answer" in summary


def _pr(head: str, fork: bool) -> dict[str, Any]:
    return {"pull_request": {"head": {"repo": {"full_name": head, "fork": fork}},
                             "base": {"repo": {"full_name": "o/r"}}}}


@pytest.mark.parametrize(("event", "fork"), [
    (_pr("a/r", True), "a/r"),
    (_pr("o/r", False), None),
    ({"workflow_run": {"head_repository": {"full_name": "a/r", "fork": True}},
      "repository": {"full_name": "o/r"}}, "a/r"),
    ({"push": {}}, None),
])
def test_fork_of(event: dict[str, Any], fork: str | None) -> None:
    assert gc.fork_of(event) == fork


@pytest.mark.parametrize("text", ["", "7x", "0", "-1", "12345678901", "7; rm -rf /"])
def test_a_workflow_runs_reported_pr_number_must_be_a_number(text: str, tmp_path: Path) -> None:
    env = _comment_env(tmp_path, "http://127.0.0.1:9")
    run = {"workflow_run": {"event": "pull_request", "head_sha": "a"}}
    (tmp_path / "event.json").write_text(json.dumps(run))
    (tmp_path / "out" / "pr-number").write_text(text)
    with pytest.raises(gc.ActionError, match="expected the pull request's number"):
        gc.post(env)


def test_comment_body_stays_within_githubs_limit() -> None:
    body = gc.comment_body("x" * 100_000, gc.marker("k"), "https://a.invalid/x")
    assert len(body) <= gc.MAX_COMMENT
    assert body.startswith(gc.marker("k"))
    assert body.rstrip().endswith("(https://a.invalid/x)")
