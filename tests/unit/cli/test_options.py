"""Shared options read from ``ctx.params`` arrive as their declared types whatever typer converted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from ad_diff.cli.options import param


def _ctx(**params: object) -> SimpleNamespace:
    return SimpleNamespace(params=params)


def test_raw_click_values_are_converted() -> None:
    # typer <= 0.28 leaves click's strings in ctx.params (it converts when calling the command)
    ctx = _ctx(markdown="out/r.md", json_out="r.json", fmt="json", config="c.yaml", rank=3)
    assert param(ctx, "markdown") == Path("out/r.md")
    assert isinstance(param(ctx, "json_out"), Path)
    assert param(ctx, "fmt") == "json"  # a choice of formats.Printed: the registry reads it by name
    assert param(ctx, "config") == Path("c.yaml")
    assert param(ctx, "rank") == 3  # no declared class to convert to: as given


def test_converted_values_and_absent_ones_pass_through() -> None:
    # typer >= 0.29 has converted them already
    md = Path("r.md")
    ctx = _ctx(markdown=md, fmt="markdown", html=None)
    assert param(ctx, "markdown") is md
    assert param(ctx, "fmt") == "markdown"
    assert param(ctx, "html") is None
    assert param(ctx, "junit") is None


def test_lists_keep_their_items_type() -> None:
    ctx = _ctx(ignore_transform=("fuse_*", "match_*"))
    assert param(ctx, "ignore_transform") == ("fuse_*", "match_*")
