"""A curated rule set that finds secret-looking literals, in time linear in the text.

Used by ``recipe_export`` and by Cloud Skills to refuse documents that carry credentials. A hit
names the rule and where it was found -- never the matched value. The text is normalised first
(zero-width and other format characters removed: a token split by one is still a token), and
plausible base64 runs are decoded and scanned once more. Linearity is by construction (see
``contract._linear``): bounded quantifiers only, starts that cannot overlap, hint pre-filters and
a size limit.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contract._linear import MAX_SCAN_CHARS, Normalised, Rule, Taken, normalise

__all__ = [
    "ENTROPY_BITS_PER_CHAR",
    "MAX_HITS_PER_RULE",
    "RULES",
    "SecretHit",
    "find_secrets",
    "scan_json",
]


@dataclass(frozen=True, slots=True)
class SecretHit:
    rule: str
    start: int


_W = r"A-Za-z0-9_\-"  # the token alphabet most prefixes are followed by


def _prefixed(rule: str, hints: tuple[str, ...], body: str, *, end: str = "") -> Rule:
    """A rule that starts only where no token character precedes (so starts never overlap)."""
    return Rule(rule, hints, re.compile(rf"(?<![{_W}.]){body}{end}"))


_NOT_AFTER = rf"(?![{_W}])"

#: Ordered from most to least specific; one span reports one rule.
_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key_block",
        ("PRIVATE KEY",),
        re.compile(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----"),
    ),
    _prefixed(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"gh[pousr]_[A-Za-z0-9]{36,255}",
        end=_NOT_AFTER,
    ),
    _prefixed(
        "github_fine_grained_pat",
        ("github_pat_",),
        r"github_pat_[A-Za-z0-9_]{22,255}",
        end=_NOT_AFTER,
    ),
    _prefixed("gitlab_token", ("glpat-",), rf"glpat-[{_W}]{{20,255}}"),
    _prefixed("anthropic_key", ("sk-ant-",), rf"sk-ant-[{_W}]{{20,255}}"),
    _prefixed("openai_key", ("sk-",), rf"sk-(?:proj-|svcacct-|admin-)?[{_W}]{{20,255}}"),
    _prefixed(
        "stripe_key",
        ("sk_live_", "rk_live_", "sk_test_", "rk_test_"),
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}",
    ),
    _prefixed("slack_token", ("xox",), r"xox[abposre]-[A-Za-z0-9\-]{10,250}"),
    _prefixed("slack_app_token", ("xapp-",), r"xapp-[0-9]-[A-Za-z0-9\-]{10,250}"),
    Rule(
        "slack_webhook",
        ("hooks.slack.com",),
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{16,200}"),
    ),
    Rule(
        "discord_webhook",
        ("/api/webhooks/",),
        re.compile(r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,68}"),
    ),
    Rule(
        "aws_access_key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"),
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)"
            r"[A-Z0-9]{16}(?![A-Z0-9])"
        ),
    ),
    Rule(
        "aws_secret_key",
        ("secret",),
        re.compile(
            r"(?i)(?<![a-z0-9_])(?:aws_?)?secret_?(?:access_?)?key[\"']?\s{0,4}[:=]\s{0,4}"
            r"[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
        ),
        fold=True,
    ),
    _prefixed("google_api_key", ("AIza",), rf"AIza[{_W}]{{35}}", end=_NOT_AFTER),
    _prefixed("google_oauth_secret", ("GOCSPX-",), rf"GOCSPX-[{_W}]{{28}}"),
    Rule(
        "jwt",
        ("eyJ",),
        re.compile(rf"(?<![{_W}.])eyJ[{_W}]{{8,2048}}\.eyJ[{_W}]{{8,8192}}\.[{_W}]{{8,2048}}"),
    ),
    Rule("azure_storage_key", ("AccountKey=",), re.compile(r"AccountKey=[A-Za-z0-9+/=]{40,100}")),
    Rule(
        "azure_sas_signature", ("sig=",), re.compile(r"(?<![A-Za-z0-9])sig=[A-Za-z0-9%+/]{40,120}")
    ),
    Rule(
        "azure_ad_client_secret",
        ("Q~",),
        re.compile(
            r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"
            r"(?![A-Za-z0-9_~.\-])"
        ),
    ),
    _prefixed("twilio_api_key", ("SK",), r"SK[0-9a-f]{32}", end=_NOT_AFTER),
    _prefixed("sendgrid_key", ("SG.",), rf"SG\.[{_W}]{{22}}\.[{_W}]{{43}}"),
    _prefixed("npm_token", ("npm_",), r"npm_[A-Za-z0-9]{36}", end=_NOT_AFTER),
    _prefixed("pypi_token", ("pypi-AgEIcHlwaS5vcmc",), rf"pypi-AgEIcHlwaS5vcmc[{_W}]{{50,255}}"),
    Rule("mailchimp_key", ("-us",), re.compile(r"(?<![0-9a-f])[0-9a-f]{32}-us[0-9]{1,2}(?![0-9])")),
    _prefixed("mailgun_key", ("key-",), r"key-[0-9a-f]{32}", end=_NOT_AFTER),
    _prefixed("shopify_token", ("shp",), r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _prefixed("square_token", ("sq0",), rf"sq0(?:atp|csp)-[{_W}]{{22,60}}"),
    _prefixed("digitalocean_token", ("_v1_",), r"do[opr]_v1_[a-f0-9]{64}"),
    _prefixed("vault_token", ("hvs.", "hvb.", "hvr."), rf"hv[sbr]\.[{_W}]{{24,255}}"),
    _prefixed("huggingface_token", ("hf_",), r"hf_[A-Za-z]{34}", end=_NOT_AFTER),
    _prefixed("telegram_bot_token", (":AA",), rf"[0-9]{{8,10}}:AA[{_W}]{{33}}"),
    Rule("age_secret_key", ("AGE-SECRET-KEY-1",), re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}")),
    _prefixed("databricks_token", ("dapi",), r"dapi[a-f0-9]{32}"),
    _prefixed("linear_api_key", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}"),
    _prefixed("postman_api_key", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _prefixed("newrelic_key", ("NRAK-",), r"NRAK-[A-Z0-9]{27}"),
    _prefixed("grafana_token", ("glsa_", "glc_"), r"gl(?:sa|c)_[A-Za-z0-9_=+/\-]{32,255}"),
    _prefixed("doppler_token", ("dp.pt.",), r"dp\.pt\.[A-Za-z0-9]{40,44}"),
    _prefixed("atlassian_token", ("ATATT3",), r"ATATT3[A-Za-z0-9_\-=]{150,250}"),
    Rule(
        "url_with_password",
        ("://",),
        re.compile(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/@\"'<>]{1,128}:"
            r"[^\s/@\"'<>${%*][^\s/@\"'<>]{0,255}@"
        ),
    ),
    Rule(
        "authorization_header",
        ("bearer", "basic"),
        re.compile(r"(?i)(?<![a-z0-9_])(?:bearer|basic)\s{1,4}([A-Za-z0-9._~+/\-]{20,1024}={0,2})"),
        fold=True,
    ),
)
#: (rule id, pattern) of every pattern rule, for callers that list the rule set.
RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((r.id, r.pattern) for r in _RULES)
_KEYWORD_HINTS = ("pass", "pwd", "secret", "token", "api", "key", "auth", "credential")

_KEYWORD = re.compile(
    r"(?i)(?<![a-z0-9_])(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|auth|"
    r"credential|private[_-]?key|client[_-]?secret)(?![a-z0-9_])[\"']?\s{0,8}[:=]\s{0,8}"
    r"[\"']?([^\s\"',;]{8,256})"
)
_PASSWORD_KEYS = ("pass", "pwd")
_PLACEHOLDER = re.compile(r"(?i)[$<{%*]|x{4}|\.\.\.|changeme|example|redacted|hidden|secret")
#: Lower-cased, separator-free key names whose string value is a credential when high-entropy.
_CREDENTIAL_KEYS = (
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "credential",
    "bearer",
    "authorization",
)
ENTROPY_BITS_PER_CHAR = 3.5
#: Hits reported per rule: a refusal needs one; the cap bounds the per-hit work of a hostile text.
MAX_HITS_PER_RULE = 32
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{24,4096}={0,2}")
_BASE64_RULE = "base64_encoded_secret"


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(text: str, bits: float = ENTROPY_BITS_PER_CHAR) -> bool:
    return len(text) >= 12 and _entropy(text) >= bits


def _keyword_hit(match: re.Match[str]) -> str | None:
    """The rule a ``name = value`` match breaks: high entropy, or any real password."""
    value = match.group(1).rstrip(".!?)]:")
    if _high_entropy(value):
        return "keyword_high_entropy"
    name = match.group(0)[:8].lower()
    if (
        name.startswith(_PASSWORD_KEYS)
        and len(value) >= 8
        and not _PLACEHOLDER.search(value)
        and any(not c.isalpha() for c in value)
        and any(c.isalpha() for c in value)
    ):
        return "password_assignment"
    return None


def _scan(norm: Normalised, *, decode: bool) -> list[tuple[str, tuple[int, int]]]:
    text, lower = norm.text, norm.lower
    found: list[tuple[str, tuple[int, int]]] = []
    taken = Taken(len(text))
    for rule in _RULES:
        haystack = lower if rule.fold else text
        if not any(hint in haystack for hint in rule.hints):
            continue
        hits = 0
        for match in rule.pattern.finditer(text):
            span = match.span()
            if taken.overlaps(span):
                continue
            if rule.id == "authorization_header" and not _high_entropy(match.group(1), 3.0):
                continue
            taken.add(span)
            found.append((rule.id, span))
            hits += 1
            if hits >= MAX_HITS_PER_RULE:
                break
    if ("=" in text or ":" in text) and any(h in lower for h in _KEYWORD_HINTS):
        checked = 0
        for match in _KEYWORD.finditer(text):
            if taken.overlaps(match.span(1)):
                continue
            checked += 1
            if checked > 4 * MAX_HITS_PER_RULE:
                # Each candidate costs Python work: past the bound, refuse (fail closed)
                # rather than stop looking and let a secret hide behind decoys.
                found.append(("too_many_candidates", match.span()))
                break
            rule_id = _keyword_hit(match)
            if rule_id is not None:
                taken.add(match.span())
                found.append((rule_id, match.span()))
    if decode:
        encoded = 0
        for match in _BASE64_RUN.finditer(text):
            if taken.overlaps(match.span()):
                continue
            inner = _decoded(match.group(0))
            if inner is not None and _scan(normalise(inner), decode=False):
                taken.add(match.span())
                found.append((_BASE64_RULE, match.span()))
                encoded += 1
                if encoded >= MAX_HITS_PER_RULE:
                    break
    return found


def _decoded(run: str) -> str | None:
    """The text a base64 (standard or URL-safe) run encodes, when it is mostly printable."""
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    return text if text and printable >= 0.9 * len(text) else None


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret-looking span in ``text``: rule ids and offsets, never the values."""
    if len(text) > MAX_SCAN_CHARS:
        return [SecretHit("too_large_to_scan", 0)]
    norm = normalise(text)
    hits = [SecretHit(rule, norm.origin(span[0])) for rule, span in _scan(norm, decode=True)]
    hits.sort(key=lambda h: h.start)
    return hits


def _credential_key(key: str) -> bool:
    folded = key.lower().replace("_", "").replace("-", "").replace(".", "")
    return len(folded) <= 128 and (
        folded in ("auth", "pwd") or any(k in folded for k in _CREDENTIAL_KEYS)
    )


def scan_json(value: object, location: str = "") -> list[tuple[str, str]]:
    """(location, rule) for every secret in the strings of a JSON value.

    Locations are built from keys and indexes, e.g. ``steps[2].args.token``. A string held
    under a credential-named key (``token``, ``db_password``, ...) is also refused when it is
    high-entropy, even without a known prefix.
    """
    found: list[tuple[str, str]] = []
    if isinstance(value, str):
        found.extend((location or "$", hit.rule) for hit in find_secrets(value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{location}.{key}" if location else str(key)
            if (
                isinstance(item, str)
                and isinstance(key, str)
                and _credential_key(key)
                and _high_entropy(item)
                and not find_secrets(item)
            ):
                found.append((where, "keyword_high_entropy"))
            found.extend(scan_json(item, where))
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for index, item in enumerate(value):
            found.extend(scan_json(item, f"{location}[{index}]"))
    return found
