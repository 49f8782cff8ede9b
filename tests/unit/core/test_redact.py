"""Credential redaction (ad_diff.core.redact): keys that name credentials, values shaped like tokens, and
the AD settings that merely mention tokens stay readable."""

from __future__ import annotations

import pytest

from ad_diff.core import netrc
from ad_diff.core.redact import REDACTED, is_secret_key, redact_text
from ad_diff.core.redactwalk import redact_tree

GH = "ghp_" + "a1" * 18


@pytest.mark.parametrize("key", ["hf_token", "oauth_token", "access_token", "token", "password", "db_passwd",
                                 "apiKey", "api_key", "AWS_SECRET_ACCESS_KEY", "client_secret", "private_key",
                                 "credentials", "Authorization", "cookie"])
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["max_num_tokens", "tokenizer", "pad_token", "eos_token_id",
                                 "tokens_per_block", "skip_tokenizer_init", "world_size", "attn_backend",
                                 "keyboard"])
def test_not_secret_keys(key: str) -> None:
    assert not is_secret_key(key)


@pytest.mark.parametrize("value", [GH, "github_pat_" + "A" * 30, "hf_" + "b" * 34, "sk-proj-" + "c" * 40,
                                   "xoxb-1234567890-abc", "AKIAABCDEFGHIJKLMNOP", "glpat-" + "d" * 20,
                                   "-----BEGIN RSA PRIVATE KEY-----", "Bearer " + "e" * 30,
                                   "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig"])
def test_secret_values_are_redacted_whatever_the_key(value: str) -> None:
    data, n = redact_tree({"note": f"x {value} y"})
    assert n == 1
    assert value not in data["note"]
    assert REDACTED in data["note"]


def test_tree_redaction_keeps_structure_and_harmless_values() -> None:
    data = {"github.com": {"oauth_token": GH, "user": "bob"}, "hf_token": "hf_" + "z" * 34,
            "token_limit": 4096, "use_auth_token": True, "pad_token": "<pad>", "max_num_tokens": 8192,
            "db": {"password": 1234}, "url": "https://bob:hunter2@example.com/x", GH: 1}
    out, n = redact_tree(data)
    assert out["github.com"] == {"oauth_token": REDACTED, "user": "bob"}
    assert out["hf_token"] == REDACTED
    assert out["db"] == {"password": REDACTED}
    assert out["url"] == f"https://{REDACTED}@example.com/x"
    assert (out["token_limit"], out["use_auth_token"], out["pad_token"], out["max_num_tokens"]) == (
        4096, True, "<pad>", 8192)
    assert GH not in repr(out)
    assert "hunter2" not in repr(out)
    assert n == 5


def test_redact_text() -> None:
    assert redact_text(f"failed with {GH}") == f"failed with {REDACTED}"
    assert redact_text("nothing to see") == "nothing to see"


@pytest.mark.parametrize("name", ["mask-attention_pattern_matcher_x", "fuse_hf_abcdefghijklmnopqrstuvwxyz",
                                  "task-abcdefghijklmnopqrstuvwxyz", "sigh_abcdefghijklmnopqrstuvwxyz"])
def test_a_prefix_inside_a_name_is_not_a_credential(name: str) -> None:
    assert redact_text(f"transform {name} failed") == f"transform {name} failed"
    assert redact_text(f"token={GH}") == f"token={REDACTED}"  # after punctuation it still is one


SECRETS = [GH, "github_pat_" + "A" * 30, "hf_" + "b" * 34, "sk-proj-" + "c" * 40, "xoxb-1234567890-abc",
           "AKIAABCDEFGHIJKLMNOP", "glpat-" + "d" * 20, "npm_" + "f" * 36, "pypi-" + "g" * 40,
           "-----BEGIN RSA PRIVATE KEY-----", "Bearer " + "e" * 30, "BeArEr " + "e" * 30,
           "https://user:hunter2@example.com/x", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig"]


def _unfiltered(text: str) -> str:
    """Every pattern over the whole text, without the literal scan and line selection of a long text."""
    from ad_diff.core import redact as r

    text = r._GLUED_TAIL.sub(REDACTED, r.SECRET_VALUE.sub(r._value, text))
    return r.SECRET_ASSIGNMENT.sub(r._assignment, r._OTHER.sub(REDACTED, text))


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("where", [0, 3000, 9000])
def test_long_texts_find_what_the_full_pattern_finds(secret: str, where: int) -> None:
    """A whole report is first scanned for the literals every credential starts with; that scan must never
    let a credential through, wherever it sits in a long text."""
    from ad_diff.core.redact import is_secret_value

    filler = '{"name": "fuse_hf_rmsnorm", "mask-x": "sigh_not", "b": "fused"}\n' * 200  # 13 KB, no secret
    text = filler[:where] + f" {secret} " + filler[where:]
    assert is_secret_value(text)
    assert redact_text(text) == _unfiltered(text)
    assert secret not in redact_text(text)
    assert not is_secret_value(filler)
    assert redact_text(filler) is filler


def _reference_deep(obj: object) -> object:
    """:func:`redact_text` on every string, with no pre-scan: what ``redact_deep`` must equal."""
    import dataclasses

    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_reference_deep(v) for v in obj)
    if isinstance(obj, dict):
        return {_reference_deep(k): _reference_deep(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: _reference_deep(getattr(obj, f.name))
                                           for f in dataclasses.fields(obj)})
    return obj


def _pieces():
    from hypothesis import strategies as st

    # credentials whole and cut in two (a cut one must stay as it is: the scan joins strings by line ends),
    # literals alone, a 64-character base64 run, characters whose lower case is longer, words of AD graphs
    parts = [*SECRETS, *(s[: len(s) // 2] for s in SECRETS), *(s[len(s) // 2:] for s in SECRETS),
             "ghp_", "gh", "sig", "password = hunter2", "A" * 64, "a/b+" * 17, "İ", "ẞ", "weight", "\n",
             "model_layers_0_self_attn_q_proj_weight", "%linear_3 = aten.linear.default(%x, %w)"]
    return st.lists(st.sampled_from(parts) | st.text(max_size=8), max_size=4).map("".join)


def _trees():
    from hypothesis import strategies as st

    from ad_diff.core.model import Category, Finding, Severity

    leaf = _pieces() | st.integers() | st.none()
    finding = st.builds(lambda m, t: Finding("X1", Category.MATCH_LOSS, Severity.ERROR, m, transform=t,
                                             evidence=(("k", m),)), _pieces(), _pieces())
    return st.recursive(leaf | finding, lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids)
                        | st.dictionaries(_pieces(), kids, max_size=3), max_leaves=12)


def test_deep_redaction_is_redact_text_on_every_string() -> None:
    """``redact_deep`` looks for suspects in one scan of all strings joined; it must answer as if every
    string went through :func:`redact_text`, for secrets whole, cut across two strings, or next to
    characters whose lower case is longer."""
    from hypothesis import given, settings

    from ad_diff.core.redactwalk import redact_deep

    @settings(max_examples=300, deadline=None)
    @given(_trees())
    def check(tree: object) -> None:
        assert redact_deep(tree) == _reference_deep(tree)

    check()


def test_deep_redaction_returns_a_clean_tree_itself() -> None:
    from ad_diff.core.redactwalk import redact_deep

    tree = (["model_layers_0_self_attn_q_proj_weight", {"k": ("weight", 3)}], "fused")
    assert redact_deep(tree) is tree
    dirty = (["x", {"k": (GH, 3)}], "fused")
    out = redact_deep(dirty)
    assert out == (["x", {"k": (REDACTED, 3)}], "fused")
    assert out[1] is dirty[1]  # the parts that held no secret are shared


def test_deep_redaction_keeps_offsets_right_past_a_longer_lower_case() -> None:
    """'İ' lower-cases to two characters: a scan of the lower-cased joined text would point past the string
    that holds the credential word, so such a text is scanned string by string."""
    from ad_diff.core.redactwalk import redact_deep

    tree = ["İ" * 30, "y" * 40, "password = hunter2", "z" * 40, "İ" * 31]  # İ first whatever the walk order
    assert redact_deep(tree) == [redact_text(t) for t in tree]
    assert "hunter2" not in str(redact_deep(tree))


def _whole_text_scan(text: str) -> str:
    """The long-text path as it was before the scan went block by block (the whole text encoded and
    lower-cased at once, each family's literals looked for after the previous family's redactions): the
    oracle."""
    from ad_diff.core import redact as r

    raw = text.encode("utf-8", "surrogatepass")
    for marks, family in r._FAMILIES:
        if any(mark.encode() in raw for mark in marks):
            text = family.sub(r._value, text)
            raw = text.encode("utf-8", "surrogatepass")
    if REDACTED in text:  # a token glued to the end of a redacted one goes with it
        text = r._GLUED_TAIL.sub(REDACTED, text)
        raw = text.encode("utf-8", "surrogatepass")
    words = [w for w in r._LOWER_MARKS if w.encode() in raw.lower()]
    body = r._B64_RUN in raw.translate(r._B64_TABLE)
    if not words and not body:
        return text
    low = text.lower()
    if len(low) != len(text):
        return r._free_text(text)
    spots = sorted(k for w in words for k in range(len(low)) if low.startswith(w, k))
    if body:
        spots = sorted(spots + [m.start() for m in r._BODY.finditer(text)])
    out, last = [], 0
    for start, end in netrc.line_spans(text, spots):
        out += (text[last:start], r._free_text(text[start:end]))
        last = end
    return "".join([*out, text[last:]])


def test_the_block_scan_of_a_long_text_finds_what_a_whole_text_scan_finds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A long text is scanned a block at a time (no whole copies); a literal cut by a block's end, a
    redaction that removes another family's literal, a character whose lower case is longer: the result is
    the whole-text scan's, for every block size."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ad_diff.core import redact as r

    monkeypatch.setattr(r, "_LONG", 0)  # every text takes the long path

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_pieces(), min_size=1, max_size=6).map("\n".join), st.integers(1, 90))
    def check(text: str, block: int) -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(r, "_BLOCK", block)
            assert r._redact(text) == _whole_text_scan(text)  # the scan itself; redact_text adds reads

    check()


@pytest.mark.parametrize("secret", [*SECRETS, "password = hunter2hunter2"])
def test_a_secret_across_every_block_boundary_is_found(secret: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from ad_diff.core import redact as r

    monkeypatch.setattr(r, "_BLOCK", 101)
    filler = '{"name": "fuse_rmsnorm", "b": "fused"}\n' * 150
    for where in range(2 * 101 - len(secret) - 2, 2 * 101 + 2):
        text = filler[:where] + f" {secret} " + filler[where:]
        assert redact_text(text) == _whole_text_scan(text), where
        assert redact_text(text) != text, where


def test_glued_access_key_ids_are_each_redacted() -> None:
    ids = "AKIAABCDEFGHIJKLMNOP" + "ASIAQRSTUVWXYZ234567"
    for text in (ids, f"keys: {ids} end", f"\x08{ids}"):
        out = redact_text(text)
        assert "AKIAABCDEFGHIJKLMNOP" not in out
        assert "QRSTUVWXYZ234567" not in out
