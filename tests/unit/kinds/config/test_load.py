"""Hostile config input (ad_diff.kinds.config.load and parse): containment, bounds, odd YAML, broken side
files and credential redaction, each an InputError naming the file and line, or a redacted value."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest

from ad_diff.core.redact import REDACTED
from ad_diff.errors import InputError
from ad_diff.kinds.config.load import load_file, parse_cli_args
from ad_diff.kinds.config.model import ConfigSource, EffectiveConfig, SourceKind
from ad_diff.kinds.config.parse import parse

TOKEN = "ghp_" + "T0k3n" * 8


def _run(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    run = tmp_path / "run"
    for name, text in files.items():
        p = run / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode() if isinstance(text, str) else text)
    return run


def _error(run: Path) -> InputError:
    with pytest.raises(InputError) as e:
        parse(run)
    return e.value


def test_a_layer_linked_outside_the_run_is_refused_and_not_read(tmp_path: Path) -> None:
    hosts = tmp_path / "home" / "hosts.yml"
    hosts.parent.mkdir()
    hosts.write_text(f"github.com:\n  oauth_token: {TOKEN}\n  user: bob\n")
    run = _run(tmp_path, {"config/default.yaml": "transforms: {}\n"})
    (run / "config" / "zz_extra.yaml").symlink_to(hosts)
    e = _error(run)
    assert str(e).startswith(f"{run / 'config' / 'zz_extra.yaml'}: is a symbolic link to a file outside")
    assert TOKEN not in str(e)
    assert "bob" not in str(e)


@pytest.mark.parametrize("name", ["cli_args.txt", "layers.txt"])
def test_side_files_linked_outside_are_refused_without_echo(tmp_path: Path, name: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{TOKEN}\n")
    run = _run(tmp_path, {"config/default.yaml": "transforms: {}\n"})
    (run / "config" / name).symlink_to(secret)
    e = _error(run)
    assert str(e).startswith(f"{run / 'config' / name}: is a symbolic link to a file outside the run folder")
    assert TOKEN not in str(e)


def test_a_fifo_layer_is_refused_without_blocking(tmp_path: Path) -> None:
    run = _run(tmp_path, {"config/default.yaml": "transforms: {}\n"})
    os.mkfifo(run / "config" / "zz.yaml")
    assert "is not a regular file" in _error(run).detail


def test_a_top_level_link_outside_is_ignored_with_a_note(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(f"transforms: {{}}\ntoken: {TOKEN}\n")
    run = _run(tmp_path, {"ad.yaml": "transforms: {fuse: {stage: compile}}\n"})
    (run / "zz.yaml").symlink_to(other)
    cfg = parse(run)
    assert cfg is not None
    assert cfg.source.files == ("ad.yaml",)
    assert any(n.startswith("ignored zz.yaml: is a symbolic link to a file outside")
               for n in cfg.source.notes)


@pytest.mark.parametrize(
    ("files", "where", "message"),
    [
        ({"config/default.yaml": "expected:\n  a: 1\nexpected:\n  b: 2\n"}, "config/default.yaml:3",
         "duplicate key 'expected' (first at line 1)"),
        ({"config/default.yaml": "transforms:\n  1: {stage: compile}\n"}, "config/default.yaml:2",
         "expected a string as mapping key, got int"),
        ({"config/default.yaml": "transforms:\n  ~: {stage: compile}\n"}, "config/default.yaml:2",
         "got null"),
        ({"config/default.yaml": "? !!binary aGk=\n: 1\n"}, "config/default.yaml:1", "got binary"),
        ({"config/default.yaml": "a: " + "[" * 200 + "]" * 200 + "\n"}, "config/default.yaml:1",
         "nested more than"),
        ({"config/default.yaml": "a: " + "7" * 4301 + "\n"}, "config/default.yaml:1", "4,301 digits"),
        ({"config/default.yaml": "{}\n", "config/cli_args.txt": "--args.transforms.fuse_x=oops\n"},
         "config/cli_args.txt:1",
         "expected transforms.fuse_x to be a mapping (stage, enabled, ...), got str"),
        ({"config/default.yaml": "{}\n", "config/cli_args.txt": "--args.a..b=1\n"}, "config/cli_args.txt:1",
         "has an empty key"),
        ({"config/default.yaml": "{}\n",
          "config/cli_args.txt": "--args.x=1\n--args.y=caf\xe9\n".encode("latin-1")},
         "config/cli_args.txt:2", "expected UTF-8 text"),
        ({"config/default.yaml": "{}\n", "config/layers.txt": b"default.yaml\n\xff\xfe\n"},
         "config/layers.txt:2", "expected UTF-8 text"),
        ({"config/default.yaml": "{}\n", "config/cli_args.txt": "--args.n=" + "9" * 5000 + "\n"},
         "config/cli_args.txt:1", "digits is too long"),
        ({"config/default.json": '{"a": 1, "a": 2}'}, "config/default.json", "duplicate key 'a'"),
    ],
)
def test_odd_input_is_an_error_naming_file_and_line(tmp_path: Path, files: dict[str, str | bytes], where: str,
                                                     message: str) -> None:
    run = _run(tmp_path, files)
    e = _error(run)
    assert str(e).startswith(f"{run / where}: ")
    assert message in e.detail


def test_order_file_does_not_echo_long_lines(tmp_path: Path) -> None:
    run = _run(tmp_path, {"config/default.yaml": "{}\n", "config/layers.txt": "x" * 100_000 + "\n"})
    e = _error(run)
    assert e.line == 1
    assert len(str(e)) < 500


def test_credentials_are_redacted_when_loaded(tmp_path: Path) -> None:
    run = _run(tmp_path, {
        "config/default.yaml": f"transforms: {{}}\nhf_token: hf_{'a' * 34}\nmodel: meta/llama\n",
        "config/cli_args.txt": f"--args.model_kwargs.api_key=abc123 --args.note='use {TOKEN} here'\n",
    })
    cfg = parse(run)
    assert cfg is not None
    assert cfg.data["hf_token"] == REDACTED
    assert cfg.data["model_kwargs"]["api_key"] == REDACTED
    assert cfg.data["note"] == f"use {REDACTED} here"
    assert cfg.data["model"] == "meta/llama"
    assert any("look like credentials" in n for n in cfg.source.notes)
    assert TOKEN not in repr(cfg)
    assert "abc123" not in repr(cfg)


def test_cli_value_parse_error_stays_text(tmp_path: Path) -> None:
    run = _run(tmp_path, {"config/cli_args.txt": "--args.a=[1,\n"})
    assert parse_cli_args(run / "config" / "cli_args.txt", run) == {("a",): ("[1,", 1)}


def test_load_file_caps_size(tmp_path: Path) -> None:
    run = _run(tmp_path, {"config/default.yaml": "a: 1\n" * 100_000})
    with pytest.raises(InputError, match="bytes accepted for a YAML or JSON AutoDeploy config"):
        load_file(run / "config" / "default.yaml", run)


def _origin_brute_force(origins: dict[tuple[str, ...], str], path: tuple[str, ...]) -> str | None:
    """The former linear-scan definition of EffectiveConfig.origin, kept as the reference."""
    if path in origins:
        return origins[path]
    below = [p for p in origins if p[: len(path)] == path]
    if below:
        return origins[max(below)]
    for n in range(len(path) - 1, 0, -1):
        if path[:n] in origins:
            return origins[path[:n]]
        siblings = sorted(p for p in origins if p[:n] == path[:n])
        if siblings and n >= 2:
            first = min(siblings, key=lambda p: (p[-1] != "stage", p))
            return f"{origins[first]} (implicit default)"
    return None


def test_indexed_origin_lookup_equals_the_linear_definition() -> None:
    rng = random.Random(7)
    words = ["transforms", "a", "b", "stage", "enabled", "x"]
    origins = {tuple(rng.choice(words) for _ in range(rng.randint(1, 4))): f"f{i}.yaml:{i}"
               for i in range(60)}
    cfg = EffectiveConfig(ConfigSource(SourceKind.LAYERED, (), "t", True), {}, origins)
    for n in range(1, 5):
        for path in itertools.product(words, repeat=n):
            assert cfg.origin(path) == _origin_brute_force(origins, path), path


def test_a_linked_folder_of_layers_is_refused_not_dropped(tmp_path: Path) -> None:
    """``config/overlays`` linked elsewhere: its layers were never read, and the config compared without
    them."""
    away = tmp_path / "shared" / "overlays"
    away.mkdir(parents=True)
    (away / "zz.yaml").write_text("transforms: {fuse: {enabled: false}}\n")
    run = _run(tmp_path, {"config/default.yaml": "transforms: {fuse: {stage: compile}}\n"})
    (run / "config" / "overlays").symlink_to(away)
    e = _error(run)
    assert e.path == run / "config" / "overlays"
    assert e.detail == (f"is a symbolic link to a folder outside the run folder {run}; refusing to read it "
                        "(copy the folder into the run folder instead of linking it); "
                        "expected an AD config file")
