"""recipe_export / recipe_import: RFC 8785 hash, secret refusal, import checked like save."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
import rfc8785

from client.recipes import canonical_hash
from tests.recipes.conftest import Call, Save

# Obviously fake credentials, assembled at run time so no literal sits in the repository.
FAKE = {
    "github_token": "ghp_" + "A1b2" * 9,
    "github_fine_grained_pat": "github_pat_" + "Z9" * 20,
    "gitlab_token": "glpat-" + "x" * 20,
    "openai_key": "sk-" + "FAKE" * 6,
    "anthropic_key": "sk-ant-" + "fake" * 6,
    "slack_token": "xoxb-" + "1234567890-fake",
    "aws_access_key": "AKIA" + "FAKEFAKEFAKEFAKE",
    "aws_session_key": "ASIA" + "FAKEFAKEFAKEFAKE",
    "google_api_key": "AIza" + "F" * 35,
    "private_key_block": "-----BEGIN RSA " + "PRIVATE KEY-----\nAAAA\n",
    "jwt": "eyJ" + "hbGciOiJIUzI1" + ".eyJ" + "zdWIiOiIxMjM0" + ".c2lnbmF0dXJl",
    "keyword_high_entropy": "password=" + "q8Z!r2#Lm9$Xw4&T",
}


def _with_body(body: str) -> dict[str, Any]:
    return {
        "name": "Leaky",
        "steps": [
            {"tool": "get_datetime"},
            {"tool": "create_note", "args": {"note_name": "n", "body": body}},
        ],
    }


def test_export_is_a_portable_document_with_an_rfc8785_sha256(save: Save, call: Call) -> None:
    save(
        {
            "name": "Share",
            "description": "é ünïcode",
            "params": [{"name": "n", "type": "int", "default": 5}],
            "steps": [{"tool": "list_notes", "args": {"limit": "${n}"}}, {"wait": 1.5}],
        }
    )
    doc = call("recipe_export", name="Share").result["document"]
    assert doc["format"] == "lmcp-recipe" and doc["format_version"] == 1
    assert doc["hash"]["algorithm"] == "sha256" and doc["hash"]["canonicalization"] == "RFC8785"
    expected = hashlib.sha256(rfc8785.dumps(doc["manifest"])).hexdigest()
    assert doc["hash"]["value"] == expected == canonical_hash(doc["manifest"])
    reordered = json.loads(json.dumps(doc["manifest"], sort_keys=True, indent=3))
    assert canonical_hash(dict(reversed(list(reordered.items())))) == expected


def test_import_round_trips_on_another_machine(save: Save, call: Call, tmp_path: Any) -> None:
    save({"name": "Trip", "steps": [{"tool": "get_datetime"}]})
    doc = call("recipe_export", name="Trip").result["document"]
    call("recipe_delete", name="Trip", confirm=True)
    imported = call("recipe_import", document=doc)
    assert imported.ok and imported.result["name"] == "Trip"
    assert call("recipe_import", document=doc).error.code == "recipe_exists"  # type: ignore[union-attr]
    assert call("recipe_import", document=doc, overwrite=True).result["replaced"] is True
    assert call("recipe_run", name="Trip").result["ok"] is True


def test_import_refuses_an_altered_document(save: Save, call: Call) -> None:
    save({"name": "Alt", "steps": [{"tool": "get_datetime"}]})
    doc = call("recipe_export", name="Alt").result["document"]
    altered = copy.deepcopy(doc)
    altered["manifest"]["steps"].append({"tool": "list_notes"})
    refused = call("recipe_import", document=altered, overwrite=True)
    assert refused.error is not None and refused.error.code == "hash_mismatch"
    for bad in (
        {**doc, "format": "x"},
        {**doc, "format_version": 2},
        {**doc, "extra": 1},
        {**doc, "hash": {"algorithm": "md5"}},
        {"format": "lmcp-recipe"},
    ):
        assert call("recipe_import", document=bad).error is not None


def test_import_validates_exactly_like_save(call: Call) -> None:
    manifest = {
        "name": "Imp",
        "steps": [
            {
                "tool": "send_email",
                "args": {"to": ["a@b.org"], "subject": "s", "body": "b", "confirm": True},
            }
        ],
    }
    doc: dict[str, Any] = {
        "format": "lmcp-recipe",
        "format_version": 1,
        "manifest": manifest,
        "hash": {
            "algorithm": "sha256",
            "canonicalization": "RFC8785",
            "value": canonical_hash(manifest),
        },
    }
    imported = call("recipe_import", document=doc)
    assert imported.result["confirm_removed_steps"] == 1
    bad = {"name": "Imp2", "steps": [{"tool": "not_a_tool"}]}
    doc_bad = {**doc, "manifest": bad, "hash": {**doc["hash"], "value": canonical_hash(bad)}}
    refused = call("recipe_import", document=doc_bad)
    assert refused.error is not None and refused.error.code == "invalid_manifest"
    assert "steps[0].tool: is not a tool in the LMCP catalogue" in refused.error.message


@pytest.mark.parametrize("rule", sorted(FAKE))
def test_export_refuses_a_secret_looking_literal_naming_rule_and_step_never_the_value(
    save: Save, call: Call, rule: str
) -> None:
    assert save(_with_body(f"note {FAKE[rule]} end")).ok
    refused = call("recipe_export", name="Leaky")
    assert refused.error is not None and refused.error.code == "secret_in_recipe"
    text = refused.error.message
    assert "steps[1].args.body" in text
    expected_rule = {"aws_session_key": "aws_access_key"}.get(rule, rule)
    assert f"rule {expected_rule}" in text
    assert FAKE[rule] not in text and FAKE[rule][:8] not in text


def test_export_refuses_a_secret_in_a_param_default(save: Save, call: Call) -> None:
    save(
        {
            "name": "Def",
            "params": [{"name": "token", "type": "string", "default": FAKE["github_token"]}],
            "steps": [{"tool": "read_note", "args": {"note_name": "${token}"}}],
        }
    )
    refused = call("recipe_export", name="Def")
    assert refused.error is not None and "params[0].default" in refused.error.message


def test_export_accepts_ordinary_text(save: Save, call: Call) -> None:
    save(_with_body("Buy milk, call Sam at 5, sketch: token budget is small"))
    assert call("recipe_export", name="Leaky").ok
