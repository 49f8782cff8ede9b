"""Redaction of values that look like credentials, before they can reach any report.

A config may carry an ``hf_token`` or a URL with a password, and every report (terminal, markdown, JSON,
JUnit) is shared. :func:`ad_diff.core.redactwalk.redact_tree` replaces, in loaded data:

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
from collections.abc import Iterator
from typing import Any

from ad_diff.core import lazy, netrc
from ad_diff.core.jwt import Jwt
from ad_diff.core.sinks import output

REDACTED = "[redacted]"

_B64 = r"[A-Za-z0-9+/]"
_GAP = r"(?:\s|\\[nr]|<br>|[\"',|>])*"
"""Between the lines of a key's body: line ends as written, as ``\\n`` in JSON, ``<br>`` in HTML, a quote,
comma or table bar of the medium."""

# Every pattern below starts with a literal (or is run on the few lines a literal was found on): the regex
# engine then scans a whole report for that literal at memchr speed instead of trying every branch at
# every position (a 500 KB report costs milliseconds, not seconds).
SECRET_VALUE = lazy.pattern(  # the redactor runs it by family (_FAMILIES): compiled for callers only
    r"gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abeoprs]-[A-Za-z0-9-]{10,}"
    r"|xapp-[0-9]-[A-Za-z0-9-]{10,}"
    r"|A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?![0-9A-Z])"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|hf_[A-Za-z0-9]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}"
    r"|[sr]k_live_[A-Za-z0-9]{20,}"
    r"|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_-]{40,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
    # A private key: the BEGIN line, the body (lines of base64, as written or as ``\n`` in JSON, headers of
    # an encrypted key) and the END line, whatever the kind (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ...).
    r"|-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
    r"(?:" + _GAP + r"(?:" + _B64 + r"{4,}={0,2}|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*))*"
    r"(?:" + _GAP + r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----)?"
    r"|nvapi-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}|hv[sbr]\.[A-Za-z0-9_-]{20,}"
    r"|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"
    r"|discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+"
    r"|://[^/\s:@]*:[^/\s@]+@"
)
"""Strings that are credentials whatever key holds them (GitHub, GitLab, Slack, AWS, Google, Hugging Face,
OpenAI/Anthropic, Stripe, npm, PyPI, JWTs, private keys, ``user:password@`` in URLs). Some prefixes are
also parts of names (``mask-…``, ``fuse_hf_…``): see :func:`_value`."""

# Prefixes that count only at the start of a word ('mask-…', 'fuse_hf_…' are names), unless the body has a
# format no name has (``ghp_`` + 36, ``hf_`` + 34 letters of mixed case, ``sk-proj-``); the other formats
# count glued to any character (``xAKIA…``, ``tokenglpat-…``).
_GLUED_OK = lazy.pattern(r"gh[pousr]_[A-Za-z0-9]{36}|hf_(?=[a-z]*[A-Z])[A-Za-z]{30,}$"
                          r"|sk-(?:proj|ant|svcacct|admin)-")
_WORDISH = lazy.pattern(r"[A-Za-z0-9_]")
_B64CHAR = lazy.pattern(r"[A-Za-z0-9+/]")


def _value(m: re.Match[str]) -> str:
    """The replacement of one :data:`SECRET_VALUE` match (``m`` itself where it is part of a name)."""
    found = m[0]
    if found.startswith("://"):
        return f"://{REDACTED}@"
    before = m.string[m.start() - 1] if m.start() else ""
    glued = before and _WORDISH.match(before)
    if glued and found.startswith(("hf_", "sk-", "gh", "pypi-")) and not _GLUED_OK.match(found):
        return found
    if before and found.startswith("AIza") and _B64CHAR.match(before):
        return found  # inside a base64 run (an embedded image), where the prefix occurs by chance
    return REDACTED


_OTHER = re.compile(
    r"(?i)(?<![A-Za-z])(?:bearer\s+[A-Za-z0-9._~+/=-]{16,}"
    # HTTP basic auth: base64 with a capital or digit past its first character (not a capitalised word)
    r"|basic\s+(?-i:(?=[A-Za-z0-9+/][A-Za-z0-9+/]*[A-Z0-9+/])[A-Za-z0-9+/]{12,}={0,2}))"
    # A line of a key's body on its own (64 base64 characters of PEM, 70 of OpenSSH), with upper and lower
    # case letters and digits: never a hash (hex) nor a name (underscores, dots).
    r"|(?:(?<![A-Za-z0-9+/])|(?<=\\n))(?-i:(?=" + _B64 + r"{0,69}[A-Z])(?=" + _B64 + r"{0,69}[a-z])"
    r"(?=" + _B64 + r"{0,69}[0-9])" + _B64 + r"{64}(?:" + _B64 + r"{6})?(?![A-Za-z0-9+/]))"
)
"""Bearer and basic credentials, and a private key's body line apart from its BEGIN line."""

_SERVICES = ("ngc", "nvcr", "nvapi", "wandb", "slack", "discord", "docker", "sendgrid", "twilio", "datadog",
             "sentry", "stripe", "vault", "registry", "huggingface", "openai", "anthropic", "mailchimp",
             "telegram", "artifactory", "jfrog")
"""Services whose ``<service>_key`` in free text is a credential (each also a literal the long-text scan
looks for)."""
_KEY_WORD = (
    r"(?:(?<![A-Za-z])|(?<=%[0-9A-Fa-f]{2}))(?:pass(?:word|wd|phrase)?|pwd|secret|credentials?|private[_-]?key|cookie|session[_-]?id"
    r"|api[_-]?key|access[_-]?key|secret[_-]?key|account[_-]?key|shared[_-]?access[_-]?key|signing[_-]?key"
    r"|token|auth(?:orization)?|sig|signature"
    # a service's key: ngc_key, NVCR_API_KEY, wandb-key (the key names _PROVIDERS of redact_tree, in text)
    r"|(?:" + "|".join(_SERVICES) + r")[_-]?(?:api[_-]?)?(?:key|token)s?)(?![a-z])"
)
_QUOTE = r"(?:[\"'`]|\\\"|%2[27]|&quot;|&#x?(?:22|27|34|39);)"
KEY_TAIL = 64
"""Characters of a key name read after its credential word (``password_for_the_db``): bounded, so a run of
words (``pass.pass.pass…``, 80 KB of them) costs each word at most this much, not the rest of the run."""
SECRET_ASSIGNMENT = re.compile(
    # ``db_pass=…``, ``"password": "…"``, ``WANDB_API_KEY=…``, ``aws_secret_access_key = …``,
    # ``AccountKey=…;`` (Azure), ``token%3D…`` (URL-encoded), ``&quot;password&quot;: …`` (HTML).
    # Linear by construction: the key's tail is bounded and every repetition possessive (nothing a later
    # part needs can be in it), so no start backtracks and a start costs at most KEY_TAIL + its own text.
    r"(?i)(?P<key>" + _KEY_WORD + r"[A-Za-z0-9_.-]{0," + str(KEY_TAIL) + r"}+)"
    + _QUOTE + r"?+[ \t]*+(?P<sep>:|=>?|%3[AD])[ \t]*+" + _QUOTE + r"?+"
    # a value runs to a space, a quote or a delimiter; a '&' ends it only where a URL's next parameter
    # begins (``&sig=``): a password holding '&' is redacted whole, not cut there
    r"(?P<value>(?:[^ \t\r\n\f\v\"'`&;,<>\\()\[\]{}|]|&(?![A-Za-z_][A-Za-z0-9_.-]{0,63}=))++)"
)
"""A credential given as ``key = value`` in free text (logs, messages, URLs, rendered reports): the value
is redacted, the key kept."""

_STRONG_WORDS = lazy.pattern(r"(?i)pass|pwd|secret|credential|private|api[_-]?key|access[_-]?key|"
                             r"account|shared|signing|cookie|session|" + "|".join(_SERVICES))
_NOT_A_VALUE = frozenset({"none", "null", "true", "false", "nil", "undefined", "", "redacted"})


def _assignment(m: re.Match[str]) -> str:
    """The match with its value redacted, or as it is when the value cannot be a credential: a token-ish
    key (``token``, ``auth``, ``sig``) needs 12 or more characters that are not all digits
    (``max_num_tokens=8192`` stays); ``PWD=/path`` is a working directory; a bare ``pass`` or ``secret``
    followed by a colon is prose (``PASS: no regressions``)."""
    key, value = m["key"].lower(), m["value"]
    if value.lower().strip("*") in _NOT_A_VALUE or value.startswith(REDACTED[:-1]):
        return m[0]
    prefixed = m.start() > 0 and (m.string[m.start() - 1].isalnum() or m.string[m.start() - 1] in "_.-")
    between = m.string[m.end("key"):m.start("sep")]
    quoted = any(q in between for q in ("\"", "'", "`", "&quot;", "&#", "%22", "%27"))  # a JSON/YAML key
    if key in ("pass", "secret", "auth", "token", "sig") and m["sep"] == ":" and not prefixed and not quoted:
        return m[0]
    if key.endswith("pwd") and value.startswith("/"):
        return m[0]
    if _STRONG_WORDS.search(key) is None and (len(value) < 12 or value.isdigit()):
        return m[0]
    return m[0][: m.start("value") - m.start()] + REDACTED


_SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pass", "pwd", "secret", "secrets", "credential", "credentials",
    "apikey", "authorization", "auth", "cookie", "cookies", "privatekey", "accesskey", "secretkey",
    "passcode", "apitoken", "authtoken", "webhook", "dsn",
})
_PROVIDERS = frozenset({
    "ngc", "nvcr", "nvapi", "nvidia", "hf", "huggingface", "openai", "anthropic", "wandb", "comet", "neptune",
    "aws", "gcp", "gcs", "azure", "github", "gh", "gitlab", "slack", "discord", "docker", "registry", "npm",
    "pypi", "stripe", "sendgrid", "twilio", "datadog", "dd", "sentry", "vault", "ssh", "gpg", "pgp", "db",
    "database", "redis", "postgres", "mysql", "mongo", "smtp", "ftp", "s3", "jwt", "oauth", "bearer",
    "mlflow", "artifactory", "jfrog", "bot", "telegram", "mailchimp", "firebase", "service",
})
"""Words that make the next ``key`` or ``token`` of a key name a credential (``ngc_key``, ``slack_token``):
the services whose keys a CI job holds."""
_KEY_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
                        ("client", "secret"), ("auth", "token"), ("access", "token"), ("api", "token")})
_NOT_SECRET_TOKEN = frozenset({
    "pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "start", "end", "stop", "image", "video",
    "audio", "max", "min", "num", "decoder", "placeholder", "default",
})
_WORD = lazy.pattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


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
        if i and w in ("key", "keys", "token", "tokens") and words[i - 1] in _PROVIDERS:
            return _STRONG
        if w == "token" and (i == 0 or words[i - 1] not in _NOT_SECRET_TOKEN):
            level = _TOKEN
    return level


def is_secret_key(key: str) -> bool:
    """Whether ``key`` names a credential or an access token (see the module docstring)."""
    return _key_level(key) > 0


_FAMILIES: tuple[tuple[tuple[str, ...], Any], ...] = tuple(
    (marks, lazy.pattern(alt) if isinstance(alt, str) else alt) for marks, alt in (
    # every literal the pattern needs, in full: "gh" alone is in every "weight"
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{22,}"),
    (("glpat-",), r"glpat-[A-Za-z0-9_-]{20,}"),
    (("xox", "xapp-"), r"xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}"),
    (("AKIA", "ASIA", "ABIA", "ACCA", "AIza"),
     # an access key id ends where no id character follows, or where the next id starts (glued ids)
     r"A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?:(?![0-9A-Z])|(?=A(?:KIA|SIA|BIA|CCA)))|AIza[0-9A-Za-z_-]{35}"),
    (("hf_", "sk-", "k_live_"), r"hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|[sr]k_live_[A-Za-z0-9]{20,}"),
    (("npm_", "pypi-"), r"npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{40,}"),
    # NVIDIA API keys, Google OAuth access tokens, HashiCorp Vault tokens (service, batch, recovery)
    (("nvapi-", "ya29.", "hvs.", "hvb.", "hvr."), r"nvapi-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}"
                                                 r"|hv[sbr]\.[A-Za-z0-9_-]{20,}"),
    # a webhook's URL is its credential: Slack, Discord
    (("hooks.slack.com", "/api/webhooks/"),
     r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"
     r"|discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+"),
    (("eyJ",), Jwt(REDACTED)),
    (("-----BEGIN",), SECRET_VALUE.pattern[SECRET_VALUE.pattern.index("-----BEGIN"):].rsplit("|://", 1)[0]),
    (("://",), r"://[^/\s:@]*:[^/\s@]+@"),
))
""":data:`SECRET_VALUE` by family, each run only on a text holding its literals: a pattern that starts with
a literal is scanned for at memchr speed; the whole alternation starts with letters as common as ``e``."""
_LOWER_MARKS = ("pass", "pwd", "secret", "credential", "private", "cookie", "session", "api", "access",
                "account", "signing", "token", "auth", "sig", "bearer", "basic", "login", *_SERVICES)
"""Literals (lower case) every :data:`SECRET_ASSIGNMENT` and :data:`_OTHER` match holds but a bare body
line of a key."""
_BODY = re.compile(r"(?<![A-Za-z0-9+/])" + _B64 + r"{64}")
"""Where a key's body line may be: a run of 64 base64 characters, looked for from the start of a run only
(so a search is linear)."""
_LONG = 4096
_B64_TABLE = bytes(ord("a") if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "+/") else ord(" ")
                   for b in range(256))
_B64_RUN = b"a" * 64
_BLOCK = 1 << 20
"""Characters of a long text the literal scan copies at a time (encoded, lower-cased): a 6 MB report is
not copied whole three times over."""
_OVERLAP = max(len(_B64_RUN), *(len(m) for marks, _ in _FAMILIES for m in marks), *map(len, _LOWER_MARKS)) - 1
"""Blocks overlap by the longest literal less one: an occurrence cut by one block's end lies whole in the
next block."""


def is_secret_value(value: str) -> bool:
    """Whether ``value`` contains something shaped like a credential."""
    return redact_text(value) != value


def _blocks(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, block)`` over ``text``: :data:`_BLOCK` characters each, overlapping by :data:`_OVERLAP`."""
    for at in range(0, len(text), _BLOCK):
        yield at, text[at : at + _BLOCK + _OVERLAP]


def _scan(text: str) -> tuple[list[int], list[str], bool]:
    """Which literals a long text holds, a block at a time: the :data:`_FAMILIES` (by index) whose literals
    it holds, the :data:`_LOWER_MARKS` it holds (any case), and whether it holds a base64 run."""
    fams: set[int] = set()
    words: set[str] = set()
    body = False
    for _, block in _blocks(text):
        raw = block.encode("utf-8", "surrogatepass")
        fams.update(k for k, (marks, _) in enumerate(_FAMILIES)
                    if k not in fams and any(mark.encode() in raw for mark in marks))
        lower = raw.lower()
        words.update(w for w in _LOWER_MARKS if w not in words and w.encode() in lower)
        del lower
        body = body or _B64_RUN in raw.translate(_B64_TABLE)
    return sorted(fams), [w for w in _LOWER_MARKS if w in words], body


def _spots(text: str, words: list[str]) -> list[int] | None:
    """Offsets of ``words`` in ``text``, any case, sorted (``None`` where a character's lower case is
    longer: no offsets to share), lower-casing a block at a time."""
    out: set[int] = set()
    for at, block in _blocks(text):
        low = block.lower()
        if len(low) != len(block):
            return None
        for word in words:
            k = low.find(word)
            while k >= 0:
                out.add(at + k)  # (a word in the overlap is found twice, at one offset)
                k = low.find(word, k + 1)
    return sorted(out)


def _free_text(text: str) -> str:
    if "login" in text.lower():
        text = netrc.ENTRY.sub(lambda m: m[1] + REDACTED, text)
    done = SECRET_ASSIGNMENT.sub(_assignment, _OTHER.sub(REDACTED, text))
    # a token glued to the end of one these patterns took goes with it, as after the families' patterns
    return _GLUED_TAIL.sub(REDACTED, done) if REDACTED in done else done


_GLUED_TAIL = lazy.pattern(re.escape(REDACTED) + r"[A-Za-z0-9_+/=.-]{8,}+")
"""What a redaction left glued to its end: a second token run into the first (``ghp_…hf_…``: the first
pattern took the second's prefix, the rest of it would be shown)."""
_HIDDEN = re.compile(r"\x1b(?:\[[0-?]*+[ -/]*+[@-~]|\][^\x07\x1b\n]{0,256}+(?:\x07|\x1b\\)|.?)"
                     r"|[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
"""Escape sequences and invisible characters a token may be split by (a JWT with a colour code in it)."""


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped part replaced by :data:`REDACTED` (see :func:`_redact`). A
    text holding escape sequences or invisible characters is also read without them: a token they split
    is still found, and then the text is given back without them (they only hid it). A text holding
    characters outputs write as escapes is also read as shown (:func:`ad_diff.core.sinks.output`): an
    escape's letters and digits may join a run into a credential's shape, and what an output shows must
    hold nothing this function would redact; then it is given back as shown."""
    return redacted_and_shown(text)[0]


def redacted_and_shown(text: str) -> tuple[str, str]:
    """:func:`redact_text` of ``text``, and that as :func:`~ad_diff.core.sinks.output` shows it (what a sink
    writes): the output pass ``redact_text`` makes anyway, reused (a report of megabytes escaped once)."""
    out = _read(text)
    for _ in range(SHOWN_PASSES):
        shown = output(out)
        if shown == out:
            return out, shown
        again = _read(shown)
        if again == shown:  # shown, it holds nothing more: the text as it is
            return out, shown
        out = again  # read as shown, it holds a credential the text did not: given back as shown
    return out, output(out)


SHOWN_PASSES = 3
"""Readings as shown at most (each one that finds more redacts more: it ends well within this)."""


def _read(text: str) -> str:
    """:func:`_redact`, and again without the escape sequences and invisible characters that hid a token."""
    out = _redact(text)
    if ("\x1b" in out or not out.isascii()) and _HIDDEN.search(out):
        bare = _HIDDEN.sub("", out)
        redacted = _redact(bare)
        if redacted != bare:  # the hidden characters split a credential the first pass could not see
            return redacted
    return out


def _redact(text: str) -> str:
    """``text`` with every credential-shaped part replaced by :data:`REDACTED`: :data:`SECRET_VALUE`, the
    bearer/basic credentials and key body lines of :data:`_OTHER`, and the values of
    :data:`SECRET_ASSIGNMENT`.

    A long text (a whole report) is searched for the literals each pattern needs first (in its UTF-8
    bytes, one byte a character, a block at a time: no copy of the whole text is made but the result), and
    the free-text patterns run only on the lines holding one (or a run of 64 base64 characters: a key's
    body line)."""
    if len(text) <= _LONG:
        for marks, family in _FAMILIES:
            if any(mark in text for mark in marks):
                text = family.sub(_value, text)
        if REDACTED in text:
            text = _GLUED_TAIL.sub(REDACTED, text)
        low = text.lower()
        if any(w in low for w in _LOWER_MARKS) or _BODY.search(text):
            return _free_text(text)
        return text
    # Found on the text as given: a redaction takes text away and writes no literal of a later family or
    # mark, so a literal found before it that is gone after it costs a search that finds nothing.
    fams, words, body = _scan(text)
    for k in fams:
        text = _FAMILIES[k][1].sub(_value, text)
    if REDACTED in text:
        text = _GLUED_TAIL.sub(REDACTED, text)
    if not words and not body:
        return text
    spots = _spots(text, words) if words else []
    if spots is None:
        return _free_text(text)
    if body:
        spots = sorted(spots + [m.start() for m in _BODY.finditer(text)])
    out: list[str] = []
    last = 0
    for start, end in netrc.line_spans(text, spots):
        line = text[start:end]
        done = _free_text(line)
        if done != line:
            out += (text[last:start], done)
            last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


__all__ = ["REDACTED", "SECRET_ASSIGNMENT", "SECRET_VALUE", "is_secret_key", "is_secret_value",
           "redact_text", "redacted_and_shown"]
