"""Redaction against a corpus of real credential formats (synthetic values of the right shape), in free
text, in YAML/JSON forms, URL-encoded and glued to the character before, through every report medium;
and a false-positive check: the bundled logs, dumps and reports redact nothing."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import random
from pathlib import Path
from typing import Any

import pytest

from ad_diff.core.redact import REDACTED, redact_text
from tests.conftest import FIXTURES

R = random.Random(28)


def _rand(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


UP, LOW, DIG = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789"
ALNUM, HEX, B64 = UP + LOW + DIG, "0123456789abcdef", UP + LOW + DIG + "+/"
AWS_SECRET = _rand(ALNUM + "+/", 40)
WANDB = _rand(HEX, 40)
PEM_BODY = [_rand(B64, 64) for _ in range(4)] + [_rand(B64, 24) + "=="]


def _pem(kind: str) -> tuple[str, str]:
    block = f"-----BEGIN {kind}-----\n" + "\n".join(PEM_BODY) + f"\n-----END {kind}-----"
    return block, PEM_BODY[1]


# (name, text holding the credential, the part that must never survive)
CORPUS: list[tuple[str, str, str]] = [
    ("aws-access-key", f"aws_access_key_id = {(k := 'AKIA' + _rand(UP + DIG, 16))}", k),
    ("aws-temp-key", f"key {(k := 'ASIA' + _rand(UP + DIG, 16))} expired", k),
    ("aws-access-key-glued", f"creds:x{(k := 'AKIA' + _rand(UP + DIG, 16))}", k),
    ("aws-secret-ini", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws-secret-env", f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    ("github-classic", f"token {(k := 'ghp_' + _rand(ALNUM, 36))}", k),
    ("github-classic-glued", f"cloned withghp_{(k := _rand(ALNUM, 36))}", k),
    ("github-oauth", f"{(k := 'gho_' + _rand(ALNUM, 36))}", k),
    ("github-fine-grained", f"GH={(k := 'github_pat_' + _rand(ALNUM, 22) + '_' + _rand(ALNUM, 59))}", k),
    ("gitlab", f"remote: {(k := 'glpat-' + _rand(ALNUM, 20))}", k),
    ("gitlab-glued", f"x{(k := 'glpat-' + _rand(ALNUM, 20))}", k),
    ("slack-bot", f"slack {(k := 'xoxb-' + _rand(DIG, 12) + '-' + _rand(ALNUM, 24))}", k),
    ("slack-user", f"{(k := 'xoxp-' + _rand(DIG, 12) + '-' + _rand(ALNUM, 24))}", k),
    ("huggingface", f"HF_TOKEN={(k := 'hf_' + _rand(UP + LOW, 34))}", k),
    ("huggingface-free", f"login with {(k := 'hf_' + _rand(UP + LOW, 34))} ok", k),
    ("huggingface-glued", f"tok{(k := 'hf_' + _rand(UP + LOW, 34))}", k),
    ("openai", f"OPENAI_API_KEY={(k := 'sk-proj-' + _rand(ALNUM, 48))}", k),
    ("openai-free", f"key {(k := 'sk-' + _rand(ALNUM, 48))} rejected", k),
    ("anthropic-glued", f"x{(k := 'sk-ant-api03-' + _rand(ALNUM, 40))}", k),
    ("wandb-env", f"WANDB_API_KEY={WANDB}", WANDB),
    ("wandb-yaml", f"wandb_api_key: {WANDB}", WANDB),
    ("google", f"maps key={(k := 'AIza' + _rand(ALNUM + '_-', 35))}", k),
    ("google-free", f"using {(k := 'AIza' + _rand(ALNUM, 35))}", k),
    ("jwt", f"jwt {(k := 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.' + _rand(ALNUM, 43))}", k),
    ("azure-conn", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                   f"{(k := _rand(B64, 86) + '==')};EndpointSuffix=core.windows.net", k[:40]),
    ("azure-sas", f"https://acct.blob.core.windows.net/c?sv=2022&sig={(k := _rand(ALNUM, 43) + '%3D')}",
     k[:30]),
    ("bearer", f"Authorization: Bearer {(k := _rand(ALNUM, 40))}", k),
    ("basic-header", f"Authorization: Basic {(k := 'dXNlcjpodW50ZXIy' + _rand(ALNUM, 8))}", k),
    ("basic-url", f"pip install -i https://bob:{(k := 'hunter2' + _rand(ALNUM, 6))}@pypi.example.com",
     k),
    ("password-free", f"connecting with password={(k := 'hunter2' + _rand(ALNUM, 4))} to db", k),
    ("passwd", f"passwd: {(k := 'S3cr' + _rand(ALNUM, 8))}", k),
    ("pwd", f"mysql -u root --pwd={(k := 'Pw' + _rand(ALNUM, 10))}", k),
    ("db-pass", f"DB_PASS={(k := 'pa55' + _rand(ALNUM, 8))}", k),
    ("db-pass-lower", f"db_pass={(k := 'pa55' + _rand(ALNUM, 8))}", k),
    ("secret-yaml", f"client_secret: {(k := _rand(ALNUM, 24))}", k),
    ("secret-json", f'{{"password": "{(k := "hunter2" + _rand(ALNUM, 6))}", "user": "bob"}}', k),
    ("secret-json-escaped", f'"{{\\"db_password\\": \\"{(k := "hunter2" + _rand(ALNUM, 6))}\\"}}"', k),
    ("url-encoded-token", f"next=%2Flogin%3Ftoken%3D{(k := _rand(ALNUM, 32))}%26x%3D1", k),
    ("url-encoded-password", f"q=password%3D{(k := 'hunter2' + _rand(ALNUM, 6))}", k),
    ("token-query", f"GET /api?access_token={(k := _rand(ALNUM, 32))}&page=2", k),
    ("npm", f"//registry.npmjs.org/:_authToken={(k := 'npm_' + _rand(ALNUM, 36))}", k),
    ("pypi", f"password = {(k := 'pypi-AgEIcHlwaS5vcmc' + _rand(ALNUM, 50))}", k),
    ("stripe", f"{(k := 'sk_live_' + _rand(ALNUM, 24))}", k),
    *[(f"pem-{kind.split()[0].lower()}", *_pem(kind)) for kind in (
        "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK")],
    ("pem-end-line", _pem("RSA PRIVATE KEY")[0], PEM_BODY[-1]),
    ("pem-body-alone", f"unexpected line: {PEM_BODY[2]}", PEM_BODY[2]),
    # issue 45: each a sample of a class (a prefix, a webhook, a key segment, a split or glued token)
    ("nvidia-api-key", f"NGC key {(k := 'nvapi-' + _rand(ALNUM + '_-', 64))} set", k),
    ("google-oauth", f"access {(k := 'ya29.' + _rand(ALNUM + '_-', 80))}", k),
    ("vault-service", f"VAULT {(k := 'hvs.' + _rand(ALNUM + '_-', 90))}", k),
    ("vault-batch", f"{(k := 'hvb.' + _rand(ALNUM + '_-', 90))}", k),
    ("slack-webhook", "post to https://hooks.slack.com/services/"
                      f"{(k := 'T' + _rand(UP, 8) + '/B' + _rand(UP, 8) + '/' + _rand(ALNUM, 24))}", k),
    ("discord-webhook", f"https://discord.com/api/webhooks/{_rand(DIG, 18)}/{(k := _rand(ALNUM, 68))}", k),
    ("docker-auth", f'{{"auths": {{"nvcr.io": {{"auth": "{(k := _rand(B64, 60) + "==")}"}}}}}}', k),
    ("netrc", f"machine api.ngc.nvidia.com login $oauthtoken password {(k := _rand(ALNUM, 20))}", k),
    ("netrc-lines", "machine api.ngc.nvidia.com\r\nlogin $oauthtoken\n"
                    f"password {(k := _rand(ALNUM, 20))}", k),
    ("redis-no-user", f"REDIS_URL=redis://:{(k := 'pw' + _rand(ALNUM, 16))}@cache:6379/0", k),
    ("value-with-ampersand", f"db_password=Xy&{(k := _rand(ALNUM, 14))} next", k),
    ("db-pass-yaml", f"db_pass: {(k := _rand(ALNUM, 14))}", k),
    ("ssh-passphrase", f"ssh_passphrase: {(k := _rand(ALNUM, 14))}", k),
    ("ngc-key", f"ngc_key: {(k := _rand(ALNUM, 40))}", k),
    ("glued-tokens", f"{'ghp_' + _rand(ALNUM, 36)}{(k := 'hf_' + _rand(UP + LOW, 34))}", k[3:]),
    ("jwt-split-by-escape", f"jwt eyJhbGciOiJIUzI1NiJ9\x1b[0m.eyJzdWIiOiIxMjM0In0.{(k := _rand(ALNUM, 43))}",
     k),
    ("jwt-split-by-zero-width", f"eyJhbGciOiJIUzI1NiJ9\u200b.eyJzdWIiOiIxMjM0In0.{(k := _rand(ALNUM, 43))}",
     k),
]

DETECT_SECRETS = {
    # detect-secrets' plugin list (the reference set, issue 45) -> the corpus entries of that class, or why
    # ad-diff redacts nothing of that class
    "ArtifactoryDetector": "no entry: JFrog keys (AKC..., AP...) have no shape apart from long base64; a "
                           "`*_key`/`*_token` or `artifactory_*` key name catches them",
    "AWSKeyDetector": ["aws-access-key", "aws-temp-key", "aws-access-key-glued", "aws-secret-ini"],
    "AzureStorageKeyDetector": ["azure-conn", "azure-sas"],
    "Base64HighEntropyString": "no entry: node hashes and digests are high-entropy (measured: 8,380 false "
                               "secrets in one report, docs/bad-input.md)",
    "BasicAuthDetector": ["basic-url", "basic-header", "redis-no-user"],
    "CloudantDetector": ["basic-url"],
    "DiscordBotTokenDetector": ["discord-webhook"],
    "GitHubTokenDetector": ["github-classic", "github-oauth", "github-fine-grained", "glued-tokens"],
    "GitLabTokenDetector": ["gitlab", "gitlab-glued"],
    "HexHighEntropyString": "no entry: every node hash is hex",
    "IbmCloudIamDetector": ["secret-yaml"],
    "IbmCosHmacDetector": ["aws-secret-ini"],
    "IPPublicDetector": "no entry: an address is not a credential",
    "JwtTokenDetector": ["jwt", "jwt-split-by-escape", "jwt-split-by-zero-width"],
    "KeywordDetector": ["password-free", "passwd", "pwd", "db-pass", "db-pass-yaml", "ssh-passphrase",
                        "ngc-key", "secret-json", "netrc", "netrc-lines", "value-with-ampersand",
                        "docker-auth"],
    "MailchimpDetector": "no entry: a `*_key` key name catches it; the bare shape is 32 hex (a hash's)",
    "NpmDetector": ["npm"],
    "OpenAIDetector": ["openai", "openai-free"],
    "PrivateKeyDetector": ["pem-rsa", "pem-openssh", "pem-body-alone"],
    "PypiTokenDetector": ["pypi"],
    "SendGridDetector": ["secret-yaml"],
    "SlackDetector": ["slack-bot", "slack-user", "slack-webhook"],
    "SoftlayerDetector": ["secret-yaml"],
    "SquareOAuthDetector": ["secret-yaml"],
    "StripeDetector": ["stripe"],
    "TelegramBotTokenDetector": ["bearer"],
    "TwilioKeyDetector": ["secret-yaml"],
}


def test_every_detect_secrets_class_has_an_entry_or_a_reason() -> None:
    names = {c[0] for c in CORPUS}
    for plugin, covered in DETECT_SECRETS.items():
        if isinstance(covered, str):
            assert covered.startswith("no entry: "), plugin
            assert len(covered) > 20, plugin
        else:
            assert covered, plugin
            assert set(covered) <= names, (plugin, set(covered) - names)


@pytest.mark.parametrize(("name", "text", "secret"), CORPUS, ids=[c[0] for c in CORPUS])
def test_the_secret_part_never_survives_free_text(name: str, text: str, secret: str) -> None:
    """As a message (short text) and inside a whole report (a long text scanned for literals first)."""
    filler = '  "transform": "fuse_rmsnorm_quant_fp8", "matches": 4, "node": "aten_add_Tensor_12",\n' * 120
    for where in (0, len(filler) // 2, len(filler)):
        for sample in (text, text.replace("\n", "\\n")):  # as written, and inside a JSON string
            out = redact_text(filler[:where] + sample + "\n" + filler[where:])
            assert secret not in out, name
            assert REDACTED in out
    assert secret not in redact_text(text)


@pytest.fixture(scope="module")
def base_result() -> tuple[object, object]:
    from ad_diff import gate, pipeline
    from ad_diff.settings import Settings

    scen = FIXTURES / "scenarios" / "failed_transform"
    result = pipeline.run(Settings(baseline=scen / "baseline", candidate=scen / "candidate"))
    return result, gate.judge(result.findings, result.groups, "error")


MEDIA = ("terminal", "r.md", "r.json", "r.xml", "summary.md", "r.html")


def _reports(result: object, verdict: object, out: Path) -> dict[str, str]:
    """Every medium written the way ``compare`` writes it (the one sink: cli.output.safe_text)."""
    from ad_diff.cli.options import ResolvedOptions
    from ad_diff.cli.output import write_reports
    from ad_diff.core import outfile

    outfile.protect([])
    opts = ResolvedOptions({
        "color": False, "comment_limit": 65_536, "format": "terminal", "markdown": out / "r.md",
        "json": out / "r.json", "junit": out / "r.xml", "step_summary": out / "summary.md",
        "html": out / "r.html"})
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        write_reports(opts, result, verdict)
    return {"terminal": buf.getvalue(), **{m: (out / m).read_text("utf-8") for m in MEDIA[1:]}}


def _with_texts(result: Any, texts: list[str]) -> Any:
    """``result`` with ``texts[j]`` as a note and as the ``j``-th finding's message (its groups follow it)."""
    olds = result.findings[: len(texts)]
    new = {id(old): dataclasses.replace(old, message=text) for old, text in zip(olds, texts, strict=True)}

    def swap(fs: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(new.get(id(f), f) for f in fs)

    groups = tuple(dataclasses.replace(g, root=swap(g.root), consequences=swap(g.consequences))
                   for g in result.groups)
    return dataclasses.replace(result, findings=swap(result.findings), groups=groups,
                               notes=(*result.notes, *texts))


def test_every_medium_redacts_every_corpus_entry(base_result: tuple[object, object], tmp_path: Path) -> None:
    """Each entry is put in the run's notes and in a finding's message (JUnit shows findings only); each
    medium must show the entry's context (so the text did reach it) and never its secret part.

    One render carries as many entries as the result has findings, each in its own field (a rendering per
    entry cost 30 CPU-seconds). An entry's tag sits right before its text on the same line, so a redaction
    that ran over from one entry into the next would remove the next entry's tag and fail the test: the
    entries cannot mask each other."""
    from ad_diff import gate

    result, verdict = base_result
    per = len(result.findings)
    for start in range(0, len(CORPUS), per):
        chunk = list(enumerate(CORPUS))[start : start + per]
        changed = _with_texts(result, [f"CTX{i:03d}Q {text}" for i, (_name, text, _secret) in chunk])
        judged = gate.judge(changed.findings, changed.groups, verdict.fail_on)
        bodies = _reports(changed, judged, tmp_path / f"chunk{start:03d}")
        for i, (name, _text, secret) in chunk:
            for medium, body in bodies.items():
                assert f"CTX{i:03d}Q" in body, f"{name}: the entry never reached {medium}"
                assert secret not in body, f"{name}: the secret survives in {medium}"


def _fixture_texts() -> list[Path]:
    skip = {"hostile"}
    keep = {".log", ".txt", ".yaml", ".yml", ".json", ".md", ".out", ".err", ""}
    return [p for p in sorted(FIXTURES.rglob("*")) if p.is_file() and not p.is_symlink()
            and p.suffix in keep and not skip & set(p.parts)]


def test_ordinary_logs_dumps_and_reports_redact_nothing() -> None:
    """AD logs, graph dumps (node names, hashes, hex addresses, tensor and transform names), configs and
    the expected reports of every scenario: not one redaction."""
    files = _fixture_texts()
    assert len(files) > 500
    changed = []
    for p in files:
        try:
            text = p.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        if redact_text(text) != text:
            changed.append(p)
    assert changed == []


def test_a_credential_in_a_transforms_unclaimed_line_reaches_no_medium(tmp_path: Path) -> None:
    """A transform's unclaimed lines are a field no output pass walks (``TransformRecord.said``, marked
    ``UNRENDERED``): such a line reaches a report only as an ADA002 finding's own text, which is redacted in
    every medium like any other."""
    import shutil

    from ad_diff import gate, pipeline
    from ad_diff.core.strwalk import strings
    from ad_diff.settings import Settings

    scen = FIXTURES / "scenarios" / "identical"
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(scen / "baseline", base)
    shutil.copytree(scen / "candidate", cand)
    secret = "hf_" + _rand(UP + LOW, 34)
    log = cand / "ad.log"
    log.write_text(log.read_text().replace("Skipping sharding for single device",
                                           f"Sharding with {secret} on 2 devices"))
    result = pipeline.run(Settings(baseline=base, candidate=cand))
    assert result.candidate_log is not None
    said = [s for r in result.candidate_log.transforms for s, _ in r.said]
    assert any(secret in s for s in said)  # the parsed model holds the line as logged
    bare = dataclasses.replace(result, findings=(), groups=())  # the findings hold ADA002's own copy
    assert not any(secret in s for s in strings(bare).values())  # the output passes never see it in said
    assert [f.transform for f in result.findings if f.code == "ADA002"] == ["detect_sharding"]
    bodies = _reports(result, gate.judge(result.findings, result.groups, "error"), tmp_path / "out")
    for medium, body in bodies.items():
        assert secret not in body, medium
    assert all("Sharding with" in bodies[m] for m in ("terminal", "r.md", "r.json", "r.html"))
