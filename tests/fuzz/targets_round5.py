"""Fuzz targets of issue 45: the one bounded JSON reader and the escapers of every sink.

Registered into :data:`tests.fuzz.targets.TARGETS` (so ``scripts/fuzz_long.py`` and the CI profile run
them). A crash is any exception but the reader's own refusal; each output is checked for what its sink
promises: no raw control, bidi or zero-width character, markdown and HTML on one line, no line of a job
log that a CI runner would act on, no credential shape left, every value within its bound. A hang (an
escaper that is not linear) is the long run's CPU limit per input.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.conftest import FIXTURES
from tests.fuzz.targets import JSON_TOKENS, SINK_TOKENS, Seed, check_leaks, check_visible

JSON_SEEDS: list[Seed] = [
    ("run.json", b'{"schema_version": 1, "exit_code": 0, "git": {"commit": "abc", "dirty": false}, '
                 b'"env": {"AD_X": "1"}, "command": ["python", "-c", "x"], "started": "2026-12-07"}'),
    ("cache.json", b'{"ad_diff_history_cache": 1, "blobs": ["AAAA"], "entries": {"a": {"rows": 0}}}'),
    ("event.json", b'{"pull_request": {"number": 12, "head": {"sha": "abc"}}, "repository": {"id": 1}}'),
]
TEXT_SEEDS: list[Seed] = [
    ("text", b"see @octocat and bob@example.com #12 http://x.y/z www.a.b GH-3 o/r#4 " * 3),
    ("text", b"a" * 3000 + b"@b.c " + b"pass." * 300 + b"eyJ" * 200),
    ("text", b"x\nad-diff: PASS\n::notice title=t::forged\r\n  ::error::e ##[error]y"),
    ("text", b"password=hunter2&more ghp_" + b"a1" * 18 + b"hf_" + b"Ab" * 17 + b" nvapi-" + b"x" * 40),
    ("text", b"eyJhbGciOiJIUzI1NiJ9\x1b[0m.eyJzdWIiOiIxMjM0In0.sig machine h login u password p"),
]
TEXT_TOKENS = (*SINK_TOKENS, b"@", b"#1", b"://", b"www.", b"eyJ", b".", b"pass", b"token=", b"::", b"##[",
               b"\n::notice::", b"ghp_", b"hf_", b"nvapi-", b"ya29.", b"hvs.", b" " * 40, b"a" * 400)


def run_json_reader(seed: Seed, data: bytes, scratch: Path) -> None:
    """The one bounded JSON reader, alone and through the run-folder opener (run.json as the accounting
    and history read it): a result or its own refusal, never another exception."""
    from ad_diff.core import jsonsafe
    from ad_diff.explain.accounting.inventory import run_info
    from ad_diff.history.load import run_json

    with contextlib.suppress(jsonsafe.JsonProblem):
        jsonsafe.parse(data)
    run = scratch / "run"
    run.mkdir(exist_ok=True)
    (run / "run.json").write_bytes(data)
    run_info(run)
    run_json(run)


def run_escapers(seed: Seed, data: bytes, scratch: Path) -> None:
    """Every escaper on one text: markdown, HTML, the value pass, the job-log rule, redaction."""
    from ad_diff.core import sinks
    from ad_diff.core.escape import fence_block, html_code, html_text, md_code, md_escape, md_inline
    from ad_diff.core.redact import redact_text

    text = data.decode("utf-8", "surrogateescape")
    for fn in (md_escape, md_inline, md_code, html_text, html_code):
        out = fn(text)
        check_visible(out)
        assert "\n" not in out, fn.__name__
    check_visible(fence_block(text))
    one = sinks.values((text,))[0]
    assert "\n" not in one
    assert len(one) <= sinks.VALUE_CHARS
    for line in sinks.job_log(sinks.output(text)).split("\n"):
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line
    check_leaks(sinks.output(redact_text(text)))


def _corpus_texts() -> list[Seed]:
    names = sorted((FIXTURES / "hostile" / "markup_names" / "candidate" / "graphs").glob("*.txt"))[:2]
    return [*TEXT_SEEDS, *[("text", p.read_bytes()[:4000]) for p in names]]


TARGETS_ROUND5 = {
    "json_reader": (lambda: JSON_SEEDS, (*JSON_TOKENS, b'"a": 1, "a": 2', b"NaN", b'\\"' * 50),
                    run_json_reader, 12),
    "escapers": (_corpus_texts, TEXT_TOKENS, run_escapers, 12),
}
"""Name -> (seeds, tokens, run, weight): what :mod:`tests.fuzz.targets` registers."""
