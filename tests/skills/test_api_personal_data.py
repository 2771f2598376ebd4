"""``POST /v1/skills`` on the real service refuses every class of personal data in every field
it scans: 422 ``personal_data_detected`` naming the field (``pointer``), the rule and the offset,
and never the value -- not in the answer, not in the store."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import httpx
import pytest

from tests.skills.conftest import skill_body

pytestmark = pytest.mark.slow  # the real skills service

#: (rule, the value, as written in a sentence)
PERSONAL = [
    ("email_address", "jane.doe@acme-corp.io"),
    ("phone_number", "+44 20 7946 0958"),
    ("phone_number", "(202) 555-0143"),
    ("payment_card", "4111 1111 1111 1111"),
    ("iban", "GB82 WEST 1234 5698 7654 32"),
    ("us_ssn", "078-05-1120"),
    ("us_ssn", "536 90 4399"),
    ("postal_address", "221B Baker Street"),
    ("postal_address", "1600 Pennsylvania Avenue"),
    ("postal_address", "12 rue de la Paix"),
    ("postal_address", "Hauptstraße 5"),
]


def _never_echoed(body: str, value: str) -> None:
    assert value not in body
    digits = re.sub(r"\D", "", value)
    if len(digits) >= 6:  # nor its digits, written another way
        assert digits not in body
    for word in re.findall(r"[A-Za-zß]{4,}", value):
        assert word not in body, word


@pytest.mark.parametrize(("rule", "value"), PERSONAL, ids=[v for _, v in PERSONAL])
def test_each_class_is_refused_by_rule_and_location_never_echoed(
    api: Callable[[str], httpx.Client], slug: str, rule: str, value: str
) -> None:
    text = f"Before the release, note: {value}. Then run the smoke test."
    components = [{"type": "reference", "logical_path": "notes.md", "content": "x\n" + text}]
    fields = {
        "/instructions": skill_body(slug, instructions=text),
        "/description": skill_body(slug, description=text),
        "/components_json/0/content": skill_body(slug, components_json=json.dumps(components)),
    }
    for pointer, body in fields.items():
        answer = api("ann").post("/v1/skills", json=body)
        assert answer.status_code == 422, (pointer, answer.text)
        errors = [e for e in answer.json()["errors"] if e["rule"] == "personal_data_detected"]
        assert [(e["pointer"], e["pii_rule"]) for e in errors] == [(pointer, rule)]
        offset = text.index(value) + (2 if pointer.startswith("/components") else 0)
        assert int(errors[0]["offset"]) == offset
        _never_echoed(answer.text, value)
    assert api("ann").get(f"/v1/skills/{slug}").status_code == 404  # nothing was stored
