"""Config files: loading, validation (unknown keys named), and precedence defaults < file < CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.errors import ConfigError
from ad_diff.settings import SCHEMA, find_config, load_config, merge
from tests.ci_runs import pair


def test_yaml_values_are_validated_and_paths_resolved_against_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "ci" / ".ad-diff.yaml"
    cfg.parent.mkdir()
    cfg.write_text("fail-on: collapse\ncollapse_fraction: 0.25\nignore_codes: [ADL005]\nexpected: exp.yaml\n"
                   "tolerances: {default: {atol: 1.0e-5}, 'layer1.*': {rtol: 0.001, statistic: max}}\n")
    got = load_config(cfg)
    assert got["fail_on"] == "collapse"
    assert got["collapse_fraction"] == 0.25
    assert got["ignore_codes"] == ("ADL005",)
    assert got["expected"] == cfg.parent / "exp.yaml"
    assert got["tolerances"]["layer1.*"] == {"rtol": 0.001, "statistic": "max"}  # passed through verbatim


def test_pyproject_table_is_read_and_absent_table_is_empty(tmp_path: Path) -> None:
    pp = tmp_path / "pyproject.toml"
    pp.write_text('[project]\nname = "x"\n')
    assert load_config(pp) == {}
    assert find_config(None, tmp_path) is None  # no [tool.ad-diff]: not picked up automatically
    pp.write_text('[tool.ad-diff]\nfail_on = "never"\njunit = "out/junit.xml"\n')
    assert find_config(None, tmp_path) == pp
    assert load_config(pp) == {"fail_on": "never", "junit": tmp_path / "out/junit.xml"}


def test_yaml_file_wins_over_pyproject_in_auto_discovery(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ad-diff]\nfail_on = "never"\n')
    (tmp_path / ".ad-diff.yaml").write_text("fail_on: collapse\n")
    assert find_config(None, tmp_path) == tmp_path / ".ad-diff.yaml"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fail_onn: error\n", "unknown key 'fail_onn'; did you mean 'fail_on'?"),
        ("colour: true\n", "unknown key 'colour'"),
        ("fail_on: sometimes\n", "must be one of error, match_loss, collapse, never"),
        ("collapse_fraction: 2\n", "must be in (0, 1]"),
        ("ignore_codes: ADL005\n", "expected a list of strings"),
        ("rank: yes\n", "expected int"),
        ("- a\n- b\n", "expected a mapping of settings"),
        ("fail_on: [\n", "not valid YAML"),
        ("fail-on: error\nfail_on: never\n", "given twice"),
    ],
)
def test_invalid_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert message in str(e.value)
    assert str(cfg) in str(e.value)


def test_unknown_toml_key_is_an_error(tmp_path: Path) -> None:
    pp = tmp_path / "pyproject.toml"
    pp.write_text('[tool.ad-diff]\nfail_on = "error"\nthreshold = 3\n')
    with pytest.raises(ConfigError, match="unknown key 'threshold'"):
        load_config(pp)


def test_merge_order() -> None:
    assert merge({"a": 1, "b": 1, "c": 1}, {"b": 2, "c": 2}, {"c": 3}) == {"a": 1, "b": 2, "c": 3}


def test_every_schema_key_has_a_kind_and_help() -> None:
    assert all(k == k.lower() and "-" not in k and v.help for k, v in SCHEMA.items())


# --- through the CLI: only options typed on the command line override the file -------------------------


def test_file_overrides_defaults_and_cli_overrides_file(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    cfg = tmp_path / "ad-diff.yaml"
    cfg.write_text("fail_on: never\n")
    assert cli(base, cand).code == 1  # default gate: error
    assert cli(base, cand, "--config", cfg).code == 0  # file: never
    assert cli(base, cand, "--config", cfg, "--fail-on", "error").code == 1  # CLI beats file
    # a CLI option left at its default does not clobber the file value
    assert cli(base, cand, "--config", cfg, "--collapse-fraction", "0.5").code == 0


def test_config_is_discovered_in_the_working_directory(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    (tmp_path / ".ad-diff.yaml").write_text(f"fail_on: never\njson: {tmp_path / 'r.json'}\n")
    res = cli(base, cand, cwd=tmp_path)
    assert res.code == 0
    assert (tmp_path / "r.json").is_file()


def test_cli_reports_unknown_key_with_exit_2(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("fail_on: error\nfial_on: never\n")
    res = cli(base, cand, "--config", cfg)
    assert res.code == 2
    assert "unknown key 'fial_on'" in res.err
    assert "Traceback" not in res.err


@pytest.mark.parametrize("text", ["graph: {anything: 1}\n", "config_diff: {x: y}\n"])
def test_keys_that_nothing_reads_are_unknown(tmp_path: Path, text: str) -> None:
    cfg = tmp_path / ".ad-diff.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(cfg)


def test_unknown_nested_tolerance_key_is_an_error_naming_the_file(tmp_path: Path) -> None:
    from tests.conftest import ROOT, run_cli

    cfg = tmp_path / ".ad-diff.yaml"
    cfg.write_text("tolerances:\n  default:\n    atoll: 1.0e-5\n")
    scen = ROOT / "fixtures/scenarios/identical"
    res = run_cli(scen / "baseline", scen / "candidate", "--config", cfg)
    assert res.code == 2
    assert f"{cfg}: tolerances.default: unknown key(s) atoll" in res.err


# --- hostile config files -----------------------------------------------------------------------------


def test_dotted_key_bomb_is_refused_before_tomllib(tmp_path: Path) -> None:
    import time

    pp = tmp_path / "pyproject.toml"
    pp.write_text("[tool.ad-diff]\n" + "a" + ".a" * 80_000 + " = 1\n")  # 160 KB: tomllib needs about a minute
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=f"{pp}:2: too many dotted-key parts"):
        load_config(pp)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize(("text", "message"), [
    ("[tool.ad-diff]\nrank = " + "9" * 5000 + "\n", "not valid TOML"),
    ("[tool.ad-diff]\nx = " + "[" * 500 + "]" * 500 + "\n", "TOML nested more than 64 levels"),
    ('[tool.ad-diff]\nfail_on = "a.b.c"  # dots in strings and comments are fine: ' + "." * 300 + "\n", None),
])
def test_toml_limits(tmp_path: Path, text: str, message: str | None) -> None:
    pp = tmp_path / "pyproject.toml"
    pp.write_text(text)
    if message is None:
        with pytest.raises(ConfigError, match="must be one of"):  # parsed: only the value is wrong
            load_config(pp)
        return
    with pytest.raises(ConfigError, match=message):
        load_config(pp)


def test_auto_discovered_non_utf8_pyproject_is_a_clear_error(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\nname = "caf\xe9"\n')
    res = cli(base, cand, cwd=tmp_path)
    assert res.code == 2
    assert "Traceback" not in res.err
    assert f"{tmp_path / 'pyproject.toml'}:2: expected UTF-8 text" in res.err
    assert "--no-config" in res.err
    assert cli(base, cand, "--no-config", cwd=tmp_path).code == 1  # ignored: the default gate fails


@pytest.mark.parametrize("value", ["../out.md", "~/out.md", "/tmp/elsewhere/out.md", "sub/../../out.md"])
def test_output_paths_may_not_leave_the_config_folder(tmp_path: Path, value: str) -> None:
    cfg = tmp_path / "ci" / ".ad-diff.yaml"
    cfg.parent.mkdir()
    cfg.write_text(f"step_summary: '{value}'\n")
    with pytest.raises(ConfigError, match="leaves the folder of the config file"):
        load_config(cfg)


def test_output_path_through_a_link_may_not_leave_the_folder(tmp_path: Path) -> None:

    (tmp_path / "outside").mkdir()
    cfg = tmp_path / "ci" / ".ad-diff.yaml"
    cfg.parent.mkdir()
    (cfg.parent / "out").symlink_to(tmp_path / "outside")
    cfg.write_text("markdown: out/report.md\n")
    with pytest.raises(ConfigError, match="leaves the folder"):
        load_config(cfg)
    cfg.write_text("markdown: reports/report.md\n")  # inside, not yet existing: fine
    assert load_config(cfg) == {"markdown": cfg.parent / "reports/report.md"}


def test_auto_discovered_config_linked_outside_is_refused(tmp_path: Path) -> None:

    secret = tmp_path / "secret.yaml"
    secret.write_text("github.com: {oauth_token: ghp_" + "x" * 36 + "}\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".ad-diff.yaml").symlink_to(secret)
    assert find_config(None, work) == work / ".ad-diff.yaml"
    with pytest.raises(ConfigError) as e:
        load_config(work / ".ad-diff.yaml", auto=True)
    assert "is a symbolic link to a file outside" in str(e.value)
    assert "ghp_" not in str(e.value)


def test_comment_limit_too_small_is_rejected(tmp_path: Path, cli) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("comment_limit: 100\n")
    with pytest.raises(ConfigError, match="must be at least 1000"):
        load_config(cfg)
    base, cand = pair(tmp_path)
    for value in ("100", "0", "-5"):
        res = cli(base, cand, "--comment-limit", value)
        assert res.code == 2, value
        assert "--comment-limit must be at least 1000" in res.err


def test_config_in_use_is_named_on_stderr_and_in_every_report(tmp_path: Path, cli) -> None:
    import json

    base, cand = pair(tmp_path)
    (tmp_path / ".ad-diff.yaml").write_text("fail_on: never\nmarkdown: r.md\njson: r.json\nrank: 0\n")
    res = cli(base, cand, "--rank", "0", cwd=tmp_path, env={"COLUMNS": "1000"})
    assert res.code == 0
    note = (f"settings from {tmp_path / '.ad-diff.yaml'} (found in the current folder): fail_on=never, "
            f"json={tmp_path / 'r.json'}, markdown={tmp_path / 'r.md'}; overridden on the command line: rank")
    assert f"ad-diff: {note}" in res.err
    assert note in json.loads((tmp_path / "r.json").read_text())["notes"]
    assert "(found in the current folder): fail_on=never" in (tmp_path / "r.md").read_text()
    terminal = "".join(res.out.split("\n"))  # rich wraps the note
    assert "(found in the current folder): fail_on=never" in terminal


def test_no_config_ignores_the_working_folder_file(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    (tmp_path / ".ad-diff.yaml").write_text("fail_on: never\n")
    assert cli(base, cand, cwd=tmp_path).code == 0
    res = cli(base, cand, "--no-config", cwd=tmp_path)
    assert res.code == 1
    assert "settings from" not in res.err
    res = cli(base, cand, "--no-config", "--config", tmp_path / ".ad-diff.yaml", cwd=tmp_path)
    assert res.code == 2
    assert "--config and --no-config exclude each other" in res.err


def test_toml_depth_limit_is_the_yaml_loaders() -> None:
    from ad_diff.core.yamlsafe import MAX_DEPTH
    from ad_diff.settings import MAX_TOML_DEPTH

    assert MAX_TOML_DEPTH == MAX_DEPTH
