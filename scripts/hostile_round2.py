"""Hostile input, round two (issue 14): links out of the run folder, special files, YAML bombs, odd keys,
broken side files, a config file that takes over, credentials, mentions, huge messages.

Imported by make_hostile_fixtures.py, whose ``CASES`` and ``RUNTIME_ONLY`` these extend and whose helpers
(``write_run``, ``log_text``, ...) these use through :data:`h`; same contract:
``build(dest)`` writes ``dest/baseline`` and ``dest/candidate``. Two additions: ``dest/work/`` (when
present) is copied into the folder ad-diff runs in (an auto-discovered ``.ad-diff.yaml`` or
``pyproject.toml``), and ``dest/outside/`` holds files that lie outside both run folders (link targets).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

h: Any = None
"""make_hostile_fixtures itself (its run-folder helpers), set by it when it imports this module."""

TOKEN = "ghp_" + "Z9" * 18
"""A GitHub-token-shaped secret: it must never appear in any output."""
HF = "hf_" + "Q" * 34

_CONFIG = ("transforms:\n  export_to_gm: {stage: export}\n  match_rope_pattern: {stage: pattern_matcher}\n"
           "  compile_model: {stage: compile}\nworld_size: 1\n")


def _pair_with_config(d: Path, cand_config: dict[str, str | bytes] | None = None,
                      base_config: dict[str, str | bytes] | None = None) -> tuple[Path, Path]:
    b, c = h.write_run(d / "baseline"), h.write_run(d / "candidate")
    for run, files in ((b, base_config), (c, cand_config)):
        (run / "config").mkdir()
        for name, text in {"default.yaml": _CONFIG, **(files or {})}.items():
            (run / "config" / name).write_bytes(text.encode() if isinstance(text, str) else text)
    return b, c


def _outside(d: Path, name: str, text: str) -> Path:
    p = d / "outside" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def _link(link: Path, target: Path) -> None:
    link.unlink(missing_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))  # relative: the case can be copied


# ------------------------------------------------------------------------------- containment (runtime)


def config_symlink_outside(d: Path) -> None:
    """``config/zz_extra.yaml`` links to a CLI tool's hosts.yml holding an OAuth token."""
    _, c = _pair_with_config(d)
    _link(c / "config" / "zz_extra.yaml", _outside(d, "hosts.yml", f"github.com:\n  oauth_token: {TOKEN}\n"
                                                                  "  user: octocat\n"))


def cli_args_symlink_outside(d: Path) -> None:
    _, c = _pair_with_config(d)
    _link(c / "config" / "cli_args.txt", _outside(d, "secret.txt", f"--args.hf_token={TOKEN}\n"))


def layers_symlink_outside(d: Path) -> None:
    """``layers.txt`` links to a file whose first line is a secret (once echoed in the error)."""
    _, c = _pair_with_config(d)
    _link(c / "config" / "layers.txt", _outside(d, "secret.txt", f"{TOKEN}\n"))


def config_folder_symlink_outside(d: Path) -> None:
    """``config/overlays`` is a link to a folder of layers outside (one holds a token): never walked into,
    its layers were dropped without a word."""
    _, c = _pair_with_config(d)
    _outside(d, "overlays/zz_extra.yaml", f"hf_token: {TOKEN}\nworld_size: 8\n")
    _link(c / "config" / "overlays", d / "outside" / "overlays")


def config_fifo(d: Path) -> None:
    """A FIFO named like a config layer: opening it would block forever."""
    _, c = _pair_with_config(d)
    os.mkfifo(c / "config" / "zz.yaml")


CANARY = "outside_canary_7f3a"
"""A name that only files outside the run folders hold: if it shows up in any output, one was read."""


def graphs_symlink_outside(d: Path) -> None:
    """A dump links to a file outside the run folder (a dump whose node is named :data:`CANARY`), and the
    baseline's whole ``graphs/`` folder is a link to a copy outside."""
    b, c = h._pair(d)
    dump = h.dump_text("pattern_matcher", "match_rope_pattern", step=3).replace("%rope", f"%{CANARY}")
    _link(c / "graphs" / "003_pattern_matcher_match_rope_pattern.txt", _outside(d, "dump.txt", dump))
    (d / "outside" / "graphs").mkdir()
    for f in sorted((b / "graphs").iterdir()):
        (d / "outside" / "graphs" / f.name).write_text(f.read_text().replace("%mm", f"%{CANARY}"))
        f.unlink()
    (b / "graphs").rmdir()
    _link(b / "graphs", d / "outside" / "graphs")


def tensors_symlink_outside(d: Path) -> None:
    """``tensors/outputs.safetensors`` links outside (a tensor named :data:`CANARY`) and a FIFO is named like
    a tensor file (opening it would block)."""
    b, c = h._pair(d)
    h.write_tensors(b, {"logits": ("F32", (4, 4), h.f32(h.LOGITS))})
    (c / "tensors").mkdir()
    raw = h.safetensors_bytes({CANARY: ("F32", (4, 4), h.f32(h.LOGITS))})
    (d / "outside").mkdir(exist_ok=True)
    (d / "outside" / "outputs.safetensors").write_bytes(raw)
    _link(c / "tensors" / "outputs.safetensors", d / "outside" / "outputs.safetensors")
    os.mkfifo(c / "tensors" / "nodes.safetensors")


# ---------------------------------------------------------------------------------------------- bombs

_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def config_alias_bomb(d: Path) -> None:
    """About 600 bytes of nested aliases: 9**9 nodes once expanded."""
    _pair_with_config(d, {"zz_bomb.yaml": _LAUGHS})


def config_deep_nesting(d: Path) -> None:
    _pair_with_config(d, {"zz_deep.yaml": "a: " + "[" * 10_000 + "]" * 10_000 + "\n"})


def config_huge_int(d: Path) -> None:
    _pair_with_config(d, {"zz_int.yaml": "world_size: " + "9" * 5000 + "\n"})


def graphs_huge_counter(d: Path) -> None:
    """One extra dump numbered 999999999999: the gap check once built ``set(range(1, 10**12))``."""
    _, c = h._pair(d)
    dump = h.dump_text("compile", "compile_model")
    (c / "graphs" / "999999999999_compile_compile_model.txt").write_text(dump)


def pyproject_dotted_key_bomb(d: Path) -> None:
    """An auto-discovered pyproject.toml with a 160 KB dotted key (tomllib is quadratic in its parts)."""
    h._pair(d)
    (d / "work").mkdir()
    (d / "work" / "pyproject.toml").write_text("[tool.ad-diff]\n" + "a" + ".a" * 80_000 + " = 1\n")


# ------------------------------------------------------------------------------------------- odd YAML


def config_int_key(d: Path) -> None:
    _pair_with_config(d, {"zz.yaml": "transforms:\n  1: {stage: compile}\n"})


def config_null_key(d: Path) -> None:
    _pair_with_config(d, {"zz.yaml": "transforms:\n  ~: {stage: compile}\n"})


def config_binary_key(d: Path) -> None:
    _pair_with_config(d, {"zz.yaml": "? !!binary aGVsbG8=\n: 1\n"})


def config_null_transform_entry(d: Path) -> None:
    """``transforms: {compile_model: }``: a transform key with no settings (AD's defaults)."""
    entry = {"zz.yaml": "transforms:\n  compile_model:\n"}
    _pair_with_config(d, entry, entry)


def config_duplicate_key(d: Path) -> None:
    _pair_with_config(d, {"zz.yaml": "transforms:\n  compile_model: {enabled: false}\ntransforms: {}\n"})


def expected_duplicate_key(d: Path) -> None:
    """An expected-changes file with ``expected:`` twice (the second silently replaced the first)."""
    h._pair(d)
    (d / "expected.yaml").write_text("expected:\n  - transform: fuse_gemms\n    reason: on purpose\n"
                                     "expected:\n  - transform: x\n    reason: y\n")


def cli_args_bad_transform(d: Path) -> None:
    _pair_with_config(d, {"cli_args.txt": "--args.world_size=2 --args.transforms.match_rope_pattern=oops\n"})


def cli_args_non_utf8(d: Path) -> None:
    _pair_with_config(d, {"cli_args.txt": b"--args.world_size=2\n--args.note=caf\xe9\n"})


def layers_non_utf8(d: Path) -> None:
    _pair_with_config(d, {"zz.yaml": "world_size: 2\n", "layers.txt": b"default.yaml\nzz\xff.yaml\n"})


def pyproject_non_utf8(d: Path) -> None:
    """A pyproject.toml in the working folder that is not UTF-8 (once a crash of every run there)."""
    h._pair(d)
    (d / "work").mkdir()
    (d / "work" / "pyproject.toml").write_bytes(b'[project]\nname = "caf\xe9"\n')


# ------------------------------------------------------------------------------- a config takes over

def _regressed_log() -> str:
    """The usual log with match_rope_pattern collapsed 4 -> 0 (a real, gating regression)."""
    rows = tuple((s, t, "matches=0" if t == "match_rope_pattern" else r) for s, t, r in h.TRANSFORMS)
    return h.log_text(rows)


def config_takeover_paths(d: Path) -> None:
    """``./.ad-diff.yaml`` from a PR checkout sends the step summary outside its folder."""
    h._pair(d, _regressed_log())
    (d / "work").mkdir()
    (d / "work" / ".ad-diff.yaml").write_text("fail_on: never\nstep_summary: ../escaped.md\n")


def config_takeover_gate(d: Path) -> None:
    """``./.ad-diff.yaml`` sets ``fail_on: never`` over a real regression: allowed, but said out loud."""
    h._pair(d, _regressed_log())
    (d / "work").mkdir()
    (d / "work" / ".ad-diff.yaml").write_text("fail_on: never\n")


# --------------------------------------------------------------------------------------- output safety


def config_secrets(d: Path) -> None:
    """Credentials in both runs' configs (and a changed one): every report shows them redacted."""
    base = {"zz.yaml": f"hf_token: {HF}\nmodel_kwargs: {{api_key: sk-{'k' * 30}}}\n"}
    cand = {"zz.yaml": f"hf_token: {HF[:-1]}R\nmodel_kwargs: {{api_key: sk-{'j' * 30}}}\n"
                       f"github.com: {{oauth_token: {TOKEN}, user: octocat}}\n",
            "cli_args.txt": f"--args.repo_url=https://octocat:{TOKEN}@github.com/x/y.git\n"}
    _pair_with_config(d, cand, base)


def _failed(text: str) -> str:
    """A log whose match_rope_pattern fails with ``text`` (it matched 4 in the baseline)."""
    head = "[AUTO-DEPLOY] [WARNING] [RANK 0] [stage=pattern_matcher, transform=match_rope_pattern] [APPLY] "
    lines = h.log_text().splitlines(True)
    rope = next(i for i, ln in enumerate(lines) if "match_rope_pattern" in ln)
    lines[rope] = (f"{head}Transform match_rope_pattern failed: {text}\n"
                   + h.v3("pattern_matcher", "match_rope_pattern", "skipped"))
    return "".join(lines)


def mention_names(d: Path) -> None:
    """Log text that would ping people and link out if rendered as markdown prose."""
    h._pair(d, _failed("ValueError: ping @octocat and @acme/reviewers, see https://evil.example/x and #1"))


def long_failure_line(d: Path) -> None:
    """A failure message of 100,000 characters (once: "FAIL" over an empty findings table)."""
    h._pair(d, _failed("RuntimeError: " + "overflow " * 11_000 + "THE END"))


def secret_in_failure(d: Path) -> None:
    """A failure line quoting a token and a URL with a password (a crash that printed its environment):
    the raw log text reaches the JSON rows and the root cause's evidence, not only finding messages."""
    h._pair(d, _failed(f"HTTPError: 401 for https://bob:hunter2@hub.example/x (token {TOKEN})"))


def comment_limit_small(d: Path) -> None:
    """Run with ``--comment-limit 100`` (too small for the verdict): a usage error."""
    h._pair(d)


CASES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    config_symlink_outside, cli_args_symlink_outside, layers_symlink_outside, config_folder_symlink_outside,
    config_fifo,
    graphs_symlink_outside, tensors_symlink_outside, config_alias_bomb,
    config_deep_nesting, config_huge_int, graphs_huge_counter, pyproject_dotted_key_bomb, config_int_key,
    config_null_key, config_binary_key, config_null_transform_entry, config_duplicate_key,
    expected_duplicate_key, cli_args_bad_transform, cli_args_non_utf8, layers_non_utf8, pyproject_non_utf8,
    config_takeover_paths, config_takeover_gate, config_secrets, mention_names, long_failure_line,
    secret_in_failure,
    comment_limit_small,
)}
#: Links and FIFOs: git cannot hold them meaningfully, the test builds them.
RUNTIME_ONLY = frozenset(
    {
        "config_symlink_outside",
        "cli_args_symlink_outside",
        "layers_symlink_outside",
        "config_folder_symlink_outside",
        "config_fifo",
        "graphs_symlink_outside",
        "tensors_symlink_outside",
    }
)
