"""The GitHub Action's logic (ad_diff/workflows/github_action.py) run as the action runs it: the compare step
on fixture runs with GitHub's environment, the comment step against a fake event and a fake REST API
served on the loopback interface. action.yml's wiring is checked against the module."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from ad_diff.workflows import github_action as ga
from tests.conftest import FIXTURES, ROOT


def _outputs(path: Path) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT's delimiter form as the runner does."""
    out: dict[str, str] = {}
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        key, delim = lines[i].split("<<", 1)
        end = lines.index(delim, i + 1)
        out[key] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return out


def _env(tmp_path: Path, **inputs: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env |= {"PYTHONPATH": str(ROOT), "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "INPUT_OUT-DIR": str(tmp_path / "out")}
    env |= {"INPUT_" + k.upper().replace("_", "-"): v for k, v in inputs.items()}
    return env


@pytest.mark.parametrize(("scenario", "verdict", "code"), [("metadata_loss", "fail", "1"),
                                                           ("identical", "pass", "0")])
def test_compare_step(scenario: str, verdict: str, code: str, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    pair = FIXTURES / "scenarios" / scenario
    env = _env(tmp_path, baseline=str(pair / "baseline"), candidate=str(pair / "candidate"))
    assert ga.main(["compare"], env) == 0  # the step never fails: the Gate step does, after the comment
    out = _outputs(tmp_path / "output")
    assert (out["verdict"], out["exit-code"]) == (verdict, code)
    report = json.loads(Path(out["json"]).read_text())
    assert out["headline"] == report["headline"]
    for key in ("markdown", "junit", "html"):
        assert Path(out[key]).is_file()
    assert (tmp_path / "summary.md").read_text().startswith("## ")


def test_compare_step_against_a_golden_and_with_fail_on(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    pair = FIXTURES / "scenarios/metadata_loss"
    golden = tmp_path / "golden.yaml"
    assert run_cli("snapshot", pair / "baseline", "-o", golden).code == 0
    env = _env(tmp_path, golden=str(golden), candidate=str(pair / "candidate"), fail_on="never")
    assert ga.main(["compare"], env) == 0
    assert _outputs(tmp_path / "output")["exit-code"] == "0"


def test_an_input_error_is_verdict_error_with_an_annotation(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    env = _env(tmp_path, baseline=str(tmp_path / "nope"), candidate=str(tmp_path / "nope2"))
    assert ga.main(["compare"], env) == 0
    out = _outputs(tmp_path / "output")
    assert (out["verdict"], out["exit-code"]) == ("error", "2")
    assert "::error title=ad-diff::" in capsys.readouterr().out


@pytest.mark.parametrize("inputs", [{"candidate": "x"}, {"baseline": "a"},
                                    {"baseline": "a", "golden": "g", "candidate": "c"},
                                    {"baseline": "a", "candidate": "c", "step_summary": "yes"}])
def test_bad_inputs_exit_2(inputs: dict[str, str], tmp_path: Path) -> None:
    assert ga.main(["compare"], _env(tmp_path, **inputs)) == 2


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
    assert ga.comment(env) == "created"
    assert ga.comment(env) == "updated"
    mine = [c for c in state.comments if c["body"].startswith(ga.marker(""))]
    assert len(mine) == 1
    assert "FAIL: 1 root cause" in mine[0]["body"]
    assert "https://example.invalid/artifact/1" in mine[0]["body"]
    assert [m for m, _, _ in state.calls].count("POST") == 1
    assert state.auth == {"Bearer tok123"}
    # the second run paged past the 150 other comments to find its own
    assert ("GET", "/repos/o/r/issues/7/comments?per_page=100&page=2", None) in state.calls


def test_comment_keys_keep_comments_apart(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    state, api = github
    assert ga.comment(_comment_env(tmp_path, api, comment_key="llama")) == "created"
    assert ga.comment(_comment_env(tmp_path, api, comment_key="mixtral")) == "created"
    assert ga.comment(_comment_env(tmp_path, api, comment_key="llama")) == "updated"


def test_comment_skipped_off_pull_requests_and_when_disabled(tmp_path: Path) -> None:
    env = _comment_env(tmp_path, "http://127.0.0.1:9")
    assert ga.comment(env | {"INPUT_COMMENT": "false"}).startswith("skipped")
    (tmp_path / "event.json").write_text(json.dumps({"push": {}}))
    assert ga.comment(env) == "skipped: not a pull_request event"


def test_api_failure_is_exit_2_with_an_annotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = _comment_env(tmp_path, "http://127.0.0.1:9")  # nothing listens there
    assert ga.main(["comment"], env) == 2
    assert "::error title=ad-diff action::GitHub API GET" in capsys.readouterr().out


def test_comment_body_stays_within_githubs_limit() -> None:
    body = ga.comment_body("x" * 100_000, ga.marker("k"), "https://a.invalid/x")
    assert len(body) <= ga.MAX_COMMENT
    assert body.startswith(ga.marker("k"))
    assert body.rstrip().endswith("(https://a.invalid/x)")


def test_outputs_with_newlines_survive_the_output_file(tmp_path: Path) -> None:
    ga.set_outputs(str(tmp_path / "o"), {"headline": "line one\nline two", "verdict": "fail"})
    assert _outputs(tmp_path / "o") == {"headline": "line one\nline two", "verdict": "fail"}


def test_action_yml_wires_every_input_the_module_reads() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = set(action["inputs"])
    source = (ROOT / "ad_diff/workflows/github_action.py").read_text()
    read = set(re.findall(r'_(?:input|flag)\(env, "([a-z-]+)"', source))
    assert read <= inputs, f"inputs read but not declared: {read - inputs}"
    steps = {s.get("id") or s["name"]: s for s in action["runs"]["steps"]}
    wired = {k[len("INPUT_"):].lower() for s in steps.values() for k in s.get("env", {})
             if k.startswith("INPUT_")}
    assert read <= wired, f"inputs declared but not passed to the script: {read - wired}"
    assert {"verdict", "exit-code", "headline", "json", "html"} <= set(action["outputs"])
    gate = action["runs"]["steps"][-1]
    assert 'exit "${CODE' in gate["run"]
