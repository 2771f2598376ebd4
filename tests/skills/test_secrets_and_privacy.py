"""Secrets refused (spec: "do not store credentials, bearer tokens, private keys or raw secrets")
and errors that never echo a submitted value.

Every sample below is an obviously fake string shaped like a credential.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cloudskills.validation import InvalidSkill, validate_save
from contract.secrets_scan import RULES
from tests.contract.test_secret_scanner import RECALL

FAKE_SECRETS: dict[str, str] = {
    "private_key_block": (
        "-----BEGIN RSA PRIVATE KEY-----\nFAKEFAKEFAKE\n-----END RSA PRIVATE KEY-----"
    ),
    "github_token": "ghp_" + "FAKEtest0123" * 3,
    "github_fine_grained_pat": "github_pat_" + "FAKEtest0123" * 2,
    "gitlab_token": "glpat-" + "FAKEtest0123FAKEtest",
    "anthropic_key": "sk-ant-" + "FAKE-test-0123456789abc",
    "openai_key": "sk-proj-" + "FAKEtest0123456789abcdef",
    "slack_token": "xoxb-" + "0123456789-FAKEtest",
    "aws_access_key": "AKIA" + "FAKETEST01234567",
    "google_api_key": "AIza" + "FAKEtest0123456789abcdefghijklmnopq",
    "jwt": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlIn0.FAKEsignature0123",
    "keyword_high_entropy": "password = Zx9qW3rT7pL2mN8v",
}
# One sample of every other rule, from the recall suite of the hardened scanner.
for _sample, _rule in RECALL.values():
    FAKE_SECRETS.setdefault(_rule, _sample)


def test_every_rule_of_the_shared_secret_scanner_has_a_sample() -> None:
    derived = {"keyword_high_entropy", "password_assignment", "base64_encoded_secret"}
    assert set(FAKE_SECRETS) == {rule for rule, _ in RULES} | derived


def _refusal(request: dict[str, Any]) -> list[dict[str, str]]:
    with pytest.raises(InvalidSkill) as caught:
        validate_save(request)
    return [issue.to_dict() for issue in caught.value.issues]


def _base(**overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "Deploy", "instructions": "Run the smoke test."}
    out.update(overrides)
    return out


@pytest.mark.parametrize("rule", sorted(FAKE_SECRETS))
def test_secret_in_instructions_refused_naming_rule_and_location_never_the_value(
    rule: str,
) -> None:
    secret = FAKE_SECRETS[rule]
    errors = _refusal(_base(instructions=f"Use this:\n{secret}\nthen deploy."))
    assert [(e["rule"], e["pointer"], e["secret_rule"]) for e in errors] == [
        ("secret_detected", "/instructions", rule)
    ]
    assert secret not in json.dumps(errors)


@pytest.mark.parametrize("rule", sorted(FAKE_SECRETS))
def test_secret_in_component_content_refused_naming_rule_and_location_never_the_value(
    rule: str,
) -> None:
    secret = FAKE_SECRETS[rule]
    items = [
        {"type": "reference", "logical_path": "ok.md", "content": "fine"},
        {"type": "script", "logical_path": "run.sh", "content": f"export X\n{secret}\n"},
    ]
    errors = _refusal(_base(components_json=json.dumps(items)))
    assert [(e["rule"], e["pointer"], e["secret_rule"], e["class"]) for e in errors] == [
        ("secret_detected", "/components_json/1/content", rule, "component_validation")
    ]
    assert secret not in json.dumps(errors)


@pytest.mark.parametrize(("field", "pointer"), [("name", "/name"), ("description", "/description")])
def test_secret_in_name_or_description_refused(field: str, pointer: str) -> None:
    errors = _refusal(_base(**{field: "token " + FAKE_SECRETS["github_token"]}))
    assert [(e["pointer"], e["secret_rule"]) for e in errors] == [(pointer, "github_token")]


def test_secret_in_component_metadata_or_artifact_ref_refused_without_naming_keys() -> None:
    items = [
        {
            "type": "asset",
            "logical_path": "a.bin",
            "artifact_ref": "s3://bucket/" + FAKE_SECRETS["aws_access_key"],
        },
        {
            "type": "reference",
            "logical_path": "b.md",
            "content": "x",
            "metadata": {"my_private_field": {"api_key": "Zx9qW3rT7pL2mN8vQ4"}},
        },
    ]
    errors = _refusal(_base(components_json=json.dumps(items)))
    assert {(e["pointer"], e["secret_rule"]) for e in errors} == {
        ("/components_json/0/artifact_ref", "aws_access_key"),
        ("/components_json/1/metadata", "keyword_high_entropy"),
    }
    assert "my_private_field" not in json.dumps(errors)


MARK = "QZXJ"
marked = st.text(min_size=0, max_size=40).map(lambda t: MARK + t)


@given(
    name=st.one_of(marked, st.just("")),
    slug=st.one_of(st.none(), marked),
    description=marked,
    instructions=st.one_of(marked, st.just(" ")),
    path=marked,
    content=marked,
    kind=marked,
    mime=marked,
    extra_key=marked,
)
def test_property_no_error_ever_echoes_a_submitted_value(
    name: str,
    slug: str | None,
    description: str,
    instructions: str,
    path: str,
    content: str,
    kind: str,
    mime: str,
    extra_key: str,
) -> None:
    items = [
        {"type": kind, "logical_path": path, "content": content, "mime_type": mime},
        {"type": "reference", "logical_path": "/" + path, extra_key: 1},
    ]
    request = {
        "name": name,
        "instructions": instructions,
        "slug": slug,
        "description": description * 100,
        "components_json": json.dumps(items),
        extra_key: True,
    }
    with pytest.raises(InvalidSkill) as caught:
        validate_save(request)
    rendered = json.dumps([i.to_dict() for i in caught.value.issues]) + str(caught.value)
    assert MARK not in rendered
