"""The secret scanner is linear-time up to the size limit and finds >= 30 formats.

Every sample is a fake, assembled from pieces so no literal in this file is a credential.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from contract._linear import unbounded_quantifier
from contract.secrets_scan import _KEYWORD, _RULES, find_secrets
from tests._cost import FACTOR, LINEAR_GROWTH, growth

A36 = "FAKEtest0123" * 3
HEX32 = "0123456789abcdef" * 2

#: format -> (sample, expected rule). At least 30 formats.
RECALL: dict[str, tuple[str, str]] = {
    "aws_access_key_id": ("AKIA" + "FAKETEST01234567", "aws_access_key"),
    "aws_secret_key": (
        "AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY012",
        "aws_secret_key",
    ),
    "aws_secret_key_yaml": (
        "aws_secret_access_key: " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY012",
        "aws_secret_key",
    ),
    "postgres_url": (
        "postgresql://app:" + "Sup3rS3cret" + "@db.internal:5432/x",
        "url_with_password",
    ),
    "mysql_url": ("mysql://root:" + "hunter2pw" + "@10.0.0.3/db", "url_with_password"),
    "mongo_url": ("mongodb+srv://u:" + "pa55word" + "@cluster0.mongodb.net/", "url_with_password"),
    "stripe_live": ("sk_live_" + "FAKEtest0123456789abcdef", "stripe_key"),
    "stripe_restricted": ("rk_live_" + "FAKEtest0123456789abcdef", "stripe_key"),
    "slack_webhook": (
        "https://hooks.slack.com/services/" + "T00000000/B00000000/" + "FAKEtestFAKEtest0123",
        "slack_webhook",
    ),
    "slack_bot_token": ("xoxb-" + "0123456789-FAKEtest", "slack_token"),
    "slack_app_token": ("xapp-1-" + "A0123456789-FAKEtest", "slack_app_token"),
    "github_token": ("ghp_" + A36, "github_token"),
    "github_token_zero_width": ("ghp_" + A36[:10] + "\u200b" + A36[10:], "github_token"),
    "github_fine_grained": ("github_pat_" + "FAKEtest0123" * 2, "github_fine_grained_pat"),
    "gitlab": ("glpat-" + "FAKEtest0123FAKEtest", "gitlab_token"),
    "base64_github_token": (
        base64.b64encode(("ghp_" + A36).encode()).decode(),
        "base64_encoded_secret",
    ),
    "base64_urlsafe_stripe": (
        base64.urlsafe_b64encode(("key sk_live_" + "FAKEtest0123456789abcdef").encode()).decode(),
        "base64_encoded_secret",
    ),
    "jwt": ("eyJhbGciOiJub25lIn0" + ".eyJzdWIiOiJmYWtlIn0" + ".FAKEsignature0123", "jwt"),
    "private_key": ("-----BEGIN " + "OPENSSH PRIVATE KEY-----\nAAAA\n", "private_key_block"),
    "google_api_key": ("AIza" + "FAKEtest0123456789abcdefghijklmnopq", "google_api_key"),
    "google_oauth_secret": ("GOCSPX-" + "FAKEtest0123456789abcdefghij", "google_oauth_secret"),
    "azure_storage": (
        "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "FAKE" * 22 + "==",
        "azure_storage_key",
    ),
    "azure_sas": ("?sv=2022-11-02&sig=" + "FAKEtest0123%2B" * 4, "azure_sas_signature"),
    "azure_ad_secret": ("abc8Q~" + "FAKEtest0123456789abcdefghijklmn", "azure_ad_client_secret"),
    "twilio": ("SK" + HEX32, "twilio_api_key"),
    "sendgrid": (
        "SG." + "FAKEtest0123456789abcd" + "." + "FAKEtest0123" * 3 + "FAKEtest",
        "sendgrid_key",
    ),
    "npm": ("npm_" + A36, "npm_token"),
    "pypi": ("pypi-AgEIcHlwaS5vcmc" + "FAKEtest0123" * 5, "pypi_token"),
    "openai": ("sk-proj-" + "FAKEtest0123456789abcdef", "openai_key"),
    "anthropic": ("sk-ant-" + "FAKE-test-0123456789abc", "anthropic_key"),
    "huggingface": ("hf_" + "FAKEtestabcdefghijklmnopqrstuvwxyz", "huggingface_token"),
    "discord_webhook": (
        "https://discord.com/api/webhooks/" + "123456789012345678/" + "FAKEtest0123" * 6,
        "discord_webhook",
    ),
    "telegram": ("123456789:AA" + "FAKEtest0123456789abcdefghijklmno", "telegram_bot_token"),
    "mailgun": ("key-" + HEX32, "mailgun_key"),
    "mailchimp": (HEX32 + "-us21", "mailchimp_key"),
    "shopify": ("shpat_" + HEX32, "shopify_token"),
    "digitalocean": ("dop_v1_" + HEX32 * 2, "digitalocean_token"),
    "vault": ("hvs." + "FAKEtest0123FAKEtest0123", "vault_token"),
    "age": ("AGE-SECRET-KEY-1" + "FAKETEST0123456789" * 3 + "ABCD", "age_secret_key"),
    "databricks": ("dapi" + HEX32, "databricks_token"),
    "bearer_header": (
        "Authorization: Bearer " + "FAKEtest0123.abcXYZ_9-8q",
        "authorization_header",
    ),
    "square": ("sq0atp-" + "FAKEtest0123456789abcd", "square_token"),
    "linear": ("lin_api_" + "FAKEtest01" * 4, "linear_api_key"),
    "postman": ("PMAK-" + "0123456789abcdef01234567" + "-" + HEX32 + "ab", "postman_api_key"),
    "newrelic": ("NRAK-" + "FAKETEST0123456789ABCDEFGHI", "newrelic_key"),
    "grafana": ("glsa_" + "FAKEtest0123" * 3, "grafana_token"),
    "doppler": ("dp.pt." + "FAKEtest01" * 4 + "abc", "doppler_token"),
    "atlassian": ("ATATT3" + "FAKEtest0123" * 14, "atlassian_token"),
    "generic_password": ("password=" + "hunter2!x", "password_assignment"),
    "generic_token_high_entropy": ("token = Zx9qW3rT7pL2mN8v", "keyword_high_entropy"),
}

PROSE = (
    "Run the smoke test, then open the dashboard and check that the password field is masked. "
    "The token expires after an hour; see https://example.com/docs/tokens for details. "
    "Key points: keep the API key out of source control, rotate secrets every 90 days. "
    "Version 1.2.3 was released on 2024-01-15 with build 1700000000000. Basic usage is simple. "
    "Bearer tokens are described in RFC 6750. Our internationalization_routines_are_fine. "
    "password: required. Set AUTH=on and token: <your token here> and password=$DB_PASSWORD. "
    "Connect with postgres://user:${PASSWORD}@localhost/db. "
)


def test_secret_scanner_recall_covers_at_least_30_formats() -> None:
    assert len(RECALL) >= 30
    missed = {
        name: [h.rule for h in find_secrets(f"use this: {sample} now")]
        for name, (sample, rule) in RECALL.items()
        if rule not in {h.rule for h in find_secrets(f"use this: {sample} now")}
    }
    assert missed == {}


def test_secret_scanner_precision_on_ordinary_prose() -> None:
    assert find_secrets(PROSE * 50) == []


def test_secret_scanner_reports_offsets_in_the_original_text_after_zero_width_removal() -> None:
    text = "ab\u200bcd " + "ghp_" + A36[:5] + "\u200b" + A36[5:]
    (hit,) = find_secrets(text)
    assert hit.rule == "github_token" and hit.start == text.index("ghp_")


def test_secret_scanner_every_pattern_has_only_bounded_quantifiers() -> None:
    offenders = [rule.id for rule in _RULES if unbounded_quantifier(rule.pattern.pattern)]
    assert offenders == []
    assert not unbounded_quantifier(_KEYWORD.pattern)
    assert unbounded_quantifier(r"\beyJ[A-Za-z0-9_\-]{8,}\.")  # the old JWT rule is caught


def _adversarial(size: int) -> list[str]:
    """Inputs that made the old patterns quadratic or worse, one family per rule hint."""
    out = [
        ("eyJ-" * (size // 4)),  # the old JWT rule: every start scanned to the end
        ("eyJ" + "a" * 2000 + ".") * (size // 2004),
        "password" + " " * size,
        ("password:" + " " * 7) * (size // 16),
        "a:" * (size // 2),
        "x://" * (size // 4),
        ("http://" + "u" * 120 + ":") * (size // 128),
        "A" * size,
        ("-us" + "a" * 29) * (size // 32),
        ("Bearer " + "a" * 19 + " ") * (size // 27),
        ("\u200b" + "ghp_") * (size // 5),
    ]
    for rule in _RULES:
        for hint in rule.hints:
            out.append((hint + "a") * (size // (len(hint) + 1)))
            out.append((hint + "0" * 300 + "!") * (size // (len(hint) + 301)))
    return out


#: The largest text a scanner is given (a skill's instructions and components, 197 KB).
SIZE_LIMIT = 197_000


def test_secret_scanner_no_redos_cost_grows_linearly_up_to_the_size_limit() -> None:
    """Each adversarial family, at a quarter and at the whole of half the limit: the CPU cost
    grows as the input does (the old JWT rule alone grew quadratically and took ~9 s at the
    limit). A ratio of CPU times measured side by side, so a busy machine cannot fail it."""
    small, large = _adversarial(SIZE_LIMIT // (2 * FACTOR)), _adversarial(SIZE_LIMIT // 2)

    def scan(text: str) -> Callable[[], object]:
        return lambda: find_secrets(text)

    grown = {
        large_text[:24]: growth(scan(small_text), scan(large_text), repeats=2)
        for small_text, large_text in zip(small, large, strict=True)
    }
    assert {k: g for k, g in grown.items() if g > LINEAR_GROWTH} == {}


def _hostile_save(scale: int) -> dict[str, str]:
    """A hostile save: instructions at 64 KiB and a component at 128 KiB (divided by
    ``scale``), each made of the inputs worst for the old patterns (JWT-like runs, keywords,
    digits)."""
    instructions = ("eyJ-" * 16384)[: (64 * 1024 - 1) // scale]
    component = (("password:" + " " * 7 + "eyJ" + "a" * 40 + "-4111 ") * 3000)[
        : 128 * 1024 // scale
    ]
    return {
        "name": "Hostile",
        "instructions": instructions,
        "components_json": json.dumps(
            [{"type": "reference", "logical_path": "a.md", "content": component}]
        ),
    }


def test_secret_scanner_a_197_kb_hostile_skill_save_costs_linearly() -> None:
    from cloudskills.validation import InvalidSkill, validate_save

    def save(body: dict[str, str]) -> None:
        try:
            validate_save(body)
        except InvalidSkill:
            pass

    quarter, whole = _hostile_save(FACTOR), _hostile_save(1)
    assert growth(lambda: save(quarter), lambda: save(whole)) <= LINEAR_GROWTH
