"""Redaction of values that look like credentials, before they can reach any report.

A config may carry an ``hf_token`` or a URL with a password, and every report (terminal, markdown, JSON,
JUnit) is shared. :func:`redact_tree` replaces, in loaded data:

* the value of a key that names a credential (``password``, ``secret``, ``api_key``, ``access_key``,
  ``private_key``, ``credentials``, ``authorization``, ``cookie``) when it is a string or a number, and of a
  ``token`` key (``hf_token``, ``access_token``; not a tokenizer's ``pad_token``) when it is a string of 8
  or more characters (``token_limit: 4096`` stays);
* in any string, the parts that look like a credential by themselves (:data:`SECRET_VALUE`: GitHub
  ``ghp_``/``github_pat_``,
  Hugging Face ``hf_``, OpenAI/Anthropic ``sk-``, Slack ``xox?-``, AWS ``AKIA``, GitLab ``glpat-``, npm,
  PyPI, JWTs, private-key blocks, ``user:password@`` in URLs);
* a key that itself looks like such a credential.

Booleans and nulls are never secrets (``use_auth_token: true`` stays). :func:`redact_text` applies the value
patterns to free text (finding messages). The marker is :data:`REDACTED`; equal secrets compare equal
after redaction, so a changed credential is not reported as a config change.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[redacted]"

SECRET_VALUE = re.compile(
    # A prefix counts only at the start of a word: 'mask-…', 'fuse_hf_…' or 'sigh_…' in an op or transform
    # name is not a credential.
    r"(?<![A-Za-z0-9_])(?:"
    r"gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|hf_[A-Za-z0-9]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_-]{40,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
    r")"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}"
)
"""Strings that are credentials whatever key holds them."""

_SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pwd", "secret", "secrets", "credential", "credentials", "apikey",
    "authorization", "auth", "cookie", "cookies", "privatekey", "accesskey", "secretkey",
})
_KEY_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
                        ("client", "secret"), ("auth", "token"), ("access", "token"), ("api", "token")})
_NOT_SECRET_TOKEN = frozenset({
    "pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "start", "end", "stop", "image", "video",
    "audio", "max", "min", "num", "decoder", "placeholder", "default",
})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(key: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(key)]


_STRONG, _TOKEN = 2, 1


def _key_level(key: str) -> int:
    """``_STRONG`` for a key naming a credential, ``_TOKEN`` for a token key, else 0."""
    words = _words(key)
    level = 0
    for i, w in enumerate(words):
        if w in _SECRET_WORDS or (i and (words[i - 1], w) in _KEY_PAIRS):
            return _STRONG
        if w == "token" and (i == 0 or words[i - 1] not in _NOT_SECRET_TOKEN):
            level = _TOKEN
    return level


def is_secret_key(key: str) -> bool:
    """Whether ``key`` names a credential or an access token (see the module docstring)."""
    return _key_level(key) > 0


_MAYBE = re.compile(r"gh[pousr]_|github_pat_|hf_|sk-|xox[abprs]-|AKIA|glpat-|npm_|pypi-|eyJ|-----BEGIN|://")
"""What every match of :data:`SECRET_VALUE` holds but its ``bearer`` branch (checked apart): a scan for
literals, which the regex engine runs several times faster than :data:`SECRET_VALUE`'s look-behind and
alternation at every position of a whole report."""
_LONG = 4096


def is_secret_value(value: str) -> bool:
    """Whether ``value`` contains something shaped like a credential."""
    if len(value) > _LONG and _MAYBE.search(value) is None and "bearer" not in value.lower():
        return False  # a whole report, most often: nothing there any branch could start from
    return SECRET_VALUE.search(value) is not None


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped part replaced by :data:`REDACTED`."""
    return SECRET_VALUE.sub(REDACTED, text) if is_secret_value(text) else text


def redact_tree(data: Any) -> tuple[Any, int]:
    """A copy of JSON-like ``data`` with credentials replaced by :data:`REDACTED`, and how many were."""
    count = 0

    def walk(value: Any, level: int) -> Any:
        nonlocal count
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = str(k)
                if is_secret_value(key):
                    count += 1
                    key = f"{REDACTED} {count}"
                out[key] = walk(v, max(level, _key_level(key)))
            return out
        if isinstance(value, list):
            return [walk(v, level) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        strong = level == _STRONG and isinstance(value, (str, int, float)) and value != ""
        token = level == _TOKEN and isinstance(value, str) and len(value) >= 8
        if strong or token:
            count += 1
            return REDACTED
        if isinstance(value, str) and is_secret_value(value):
            count += 1
            return redact_text(value)
        return value

    return walk(data, 0), count


__all__ = ["REDACTED", "SECRET_VALUE", "is_secret_key", "is_secret_value", "redact_text", "redact_tree"]
