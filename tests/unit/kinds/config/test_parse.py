"""Tests of config discovery, layer ordering, merging and error reporting (ad_diff.kinds.config.parse)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ad_diff.core.jsonable import to_jsonable
from ad_diff.errors import InputError
from ad_diff.kinds.config.load import load_file, parse_cli_args
from ad_diff.kinds.config.parse import discover_config_files, parse
from tests.conftest import FIXTURES as ALL_FIXTURES

FIXTURES = ALL_FIXTURES / "parsers" / "config"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "invalid")


def golden_form(root: Path) -> dict:
    """What a golden file records about one parsed run config."""
    cfg = parse(root)
    assert cfg is not None
    return {
        "source": to_jsonable(cfg.source),
        "data": cfg.data,
        "origins": {".".join(k): v for k, v in sorted(cfg.origins.items())},
    }


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    got = golden_form(FIXTURES / case)
    golden = FIXTURES / f"{case}.json"
    if os.environ.get("AD_DIFF_UPDATE_GOLDEN"):  # rewriting is no check: never pass on what was just written
        golden.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"{golden.name} rewritten: review its diff")
    assert got == json.loads(golden.read_text(encoding="utf-8"))


def test_default_rule_orders_default_first_and_cli_last() -> None:
    cfg = parse(FIXTURES / "layered_default_rule")
    assert cfg is not None
    assert cfg.source.files == (
        "config/default.yaml",
        "config/dashboard_default.yaml",
        "config/model_x.yaml",
        "config/world_size_2.yaml",
        "config/cli_overrides.yaml",
    )
    assert cfg.source.order_rule.startswith("default rule")
    # model_x (later) wins over dashboard_default for fuse_gemms; the cli layer wins for max_batch_size.
    assert cfg.enabled("fuse_gemms") is False
    assert cfg.origin(("transforms", "fuse_gemms", "enabled")) == "config/model_x.yaml:4"
    assert cfg.data["max_batch_size"] == 16
    # deep merge keeps keys the overlay does not touch
    assert cfg.transforms["fuse_rmsnorm"] == {"stage": "post_load_fusion", "rmsnorm_backend": "triton"}
    assert cfg.stage("fuse_rope_into_trtllm_mla") == "cache_init"


def test_order_file_beats_name_order() -> None:
    cfg = parse(FIXTURES / "layered_order_file")
    assert cfg is not None
    assert cfg.source.files[-1] == "config/a_enable.yaml"
    assert cfg.enabled("fuse_gemms") is True
    assert "layers.txt" in cfg.source.order_rule


def test_registry_gives_order() -> None:
    cfg = parse(FIXTURES / "registry")
    assert cfg is not None
    assert cfg.source.files == ("config/default.yaml", "config/zz_dashboard.yaml", "config/aa_model_x.yaml")
    assert cfg.enabled("fuse_gemms") is False


def test_effective_file_is_used_as_is() -> None:
    cfg = parse(FIXTURES / "effective")
    assert cfg is not None
    assert cfg.source.kind == "effective"
    assert cfg.source.files == ("config/effective_config.yaml",)
    # the layer beside it names the file behind the value
    assert cfg.origin(("transforms", "fuse_rmsnorm", "rmsnorm_backend")) == "config/model_x.yaml:3"
    assert "fuse_rope_into_trtllm_mla" not in cfg.transforms


def test_top_level_ignores_unrelated_yaml() -> None:
    cfg = parse(FIXTURES / "top_level")
    assert cfg is not None
    assert cfg.source.files == ("ad_config.yaml",)
    assert not cfg.source.complete
    assert any("notes.yaml" in n for n in cfg.source.notes)


def test_cli_args_applied_last_with_types() -> None:
    cfg = parse(FIXTURES / "cli_args")
    assert cfg is not None
    assert cfg.data["world_size"] == 2
    assert cfg.enabled("fuse_gemms") is True
    assert cfg.source.files[-1] == "config/cli_args.txt"
    args = parse_cli_args(FIXTURES / "cli_args" / "config" / "cli_args.txt", FIXTURES / "cli_args")
    assert args[("compile_backend",)] == ("torch-opt", 3)


def test_explicit_file_and_folder(tmp_path: Path) -> None:
    explicit = FIXTURES / "layered_order_file" / "config" / "b_disable.yaml"
    cfg = parse(tmp_path, explicit)
    assert cfg is not None
    assert cfg.source.kind == "effective"
    assert cfg.enabled("fuse_gemms") is False
    cfg2 = parse(tmp_path, FIXTURES / "registry" / "config")
    assert cfg2 is not None
    assert cfg2.source.files[0].endswith("default.yaml")


def test_no_config_is_none(tmp_path: Path) -> None:
    (tmp_path / "run.log").write_text("x\n", encoding="utf-8")
    assert discover_config_files(tmp_path) == ()
    assert parse(tmp_path) is None


def test_missing_explicit_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        parse(tmp_path, tmp_path / "nope.yaml")


def test_two_effective_configs_is_an_error(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.mkdir()
    (cfg / "effective.yaml").write_text("world_size: 1\n", encoding="utf-8")
    (cfg / "merged.yaml").write_text("world_size: 2\n", encoding="utf-8")
    with pytest.raises(InputError, match="several effective configs"):
        parse(tmp_path)


def test_order_file_naming_missing_layer(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.mkdir()
    (cfg / "default.yaml").write_text("transforms: {}\n", encoding="utf-8")
    (cfg / "ORDER").write_text("default.yaml\n\nmissing.yaml\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        parse(tmp_path)
    assert e.value.line == 3
    assert "missing.yaml" in str(e.value)


@pytest.mark.parametrize(
    ("name", "line", "expected"),
    [
        ("bad_indent.yaml", 4, "invalid YAML"),
        ("bad_json.json", 4, "invalid JSON"),
        ("enabled_string.yaml", 4, "enabled to be true or false"),
        ("entry_scalar.yaml", 2, "to be a mapping"),
        ("top_list.yaml", 1, "expected a mapping of AutoDeploy settings"),
        ("transforms_list.yaml", 1, "'transforms' to be a mapping"),
    ],
)
def test_invalid(name: str, line: int, expected: str) -> None:
    path = FIXTURES / "invalid" / name
    with pytest.raises(InputError) as e:
        parse(path.parent, path)
    assert e.value.line == line
    assert expected in str(e.value)
    assert str(e.value).startswith(f"{path}:{line}: ")


def test_empty_file_is_empty_mapping(tmp_path: Path) -> None:
    p = tmp_path / "empty.yaml"
    p.write_text("# nothing\n", encoding="utf-8")
    layer = load_file(p, tmp_path)
    assert (layer.data, layer.lines) == ({}, {})


def test_unsafe_yaml_tag_rejected(tmp_path: Path) -> None:
    p = tmp_path / "evil.yaml"
    p.write_text("x: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    with pytest.raises(InputError, match="unsupported YAML tag !!python/object/apply:os.system"):
        load_file(p, tmp_path)
