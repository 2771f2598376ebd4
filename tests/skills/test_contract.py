"""One contract, checked on both sides: the catalogue, the server's codes and tables, the
client's mirror of them, the principals' configuration, and the docs."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import httpx
import pytest
from jsonschema import ValidationError as SchemaError
from pydantic import ValidationError

from client.skills import INTERPRETERS
from client.skills import SAVE_PARAMETERS as CLIENT_SAVE_PARAMETERS
from client.skills._codes import ISSUE_TOO_LARGE, PROBLEM_CODES
from cloudskills.envelope import ROOT_DATA_FIELDS
from cloudskills.limits import SCRIPT_INTERPRETERS
from cloudskills.principals import SkillPrincipal
from cloudskills.problems import CODES, ISSUE_CODES
from cloudskills.validation import SAVE_PARAMETERS
from contract.catalogue import load_catalogue
from tests.skills.conftest import check_envelope

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "cloud-skills.md"


def test_catalogue_save_cloud_skill_has_exactly_the_spec_parameters() -> None:
    tool = load_catalogue().tools["save_cloud_skill"]
    schema = tool.input_schema
    assert tuple(schema["properties"]) == SAVE_PARAMETERS == CLIENT_SAVE_PARAMETERS
    assert schema["required"] == ["name", "instructions"]
    assert schema["properties"]["publish"]["default"] is True
    assert schema["properties"]["components_json"]["default"] == "[]"
    assert {p: s["type"] for p, s in schema["properties"].items()} == {
        "name": "string",
        "instructions": "string",
        "slug": "string",
        "description": "string",
        "publish": "boolean",
        "components_json": "string",
    }
    assert tool.effect.value == "send"  # egress: the skill leaves the machine


def test_catalogue_execute_cloud_skill_asks_its_own_confirmation() -> None:
    tools = load_catalogue().tools
    execute = tools["execute_cloud_skill"]
    assert execute.requires_confirmation
    assert set(execute.input_schema["required"]) == {
        "slug",
        "revision_id",
        "canonical_hash",
        "logical_path",
    }
    # Egress: a recall's query and an executed script's fetch leave the machine.
    assert {tools[n].effect.value for n in ("recall_cloud_skill", "execute_cloud_skill")} == {
        "send"
    }


def test_every_server_problem_code_is_mapped_by_the_client() -> None:
    assert set(CODES) <= set(PROBLEM_CODES)
    assert ISSUE_TOO_LARGE <= ISSUE_CODES


def test_client_and_server_agree_on_script_interpreters() -> None:
    assert dict(INTERPRETERS) == dict(SCRIPT_INTERPRETERS)


def test_every_problem_code_has_a_class_and_status_of_the_spec_classes() -> None:
    for info in CODES.values():
        assert info.problem_class in {
            "authorization",
            "validation",
            "component_validation",
            "scope_lifecycle",
            "not_found",
            "request",
        }
        assert 400 <= info.status < 500


def test_principal_team_scope_must_be_one_of_its_teams() -> None:
    with pytest.raises(ValidationError):
        SkillPrincipal(token="test-token-x", principal="x", team_scope="ops")
    ok = SkillPrincipal(
        token="test-token-x", principal="x", teams=({"team": "ops"},), team_scope="ops"
    )
    assert ok.role_in("ops") == "member"
    assert "test-token-x" not in repr(ok)


def test_docs_describe_every_code_setting_and_route() -> None:
    text = DOC.read_text(encoding="utf-8")
    for code in (*CODES, *ISSUE_CODES):
        assert f"`{code}`" in text, code
    for name in (
        "LMCP_SKILLS_URL",
        "LMCP_SKILLS_TOKEN",
        "LMCP_SKILLS_EXEC_TIMEOUT_S",
        "team_scope",
        "/v1/skills",
        "xmemo.cloud_skill.v1",
    ):
        assert name in text, name


@pytest.mark.parametrize(
    "name",
    [
        "client.skills",
        "cloudskills.app",
        "cloudskills.auth",
        "cloudskills.components",
        "cloudskills.issues",
        "cloudskills.envelope",
        "cloudskills.hashing",
        "cloudskills.limits",
        "cloudskills.paths",
        "cloudskills.principals",
        "cloudskills.problems",
        "cloudskills.records",
        "cloudskills.routes",
        "cloudskills.settings",
        "cloudskills.slugs",
        "cloudskills.store",
        "cloudskills.validation",
    ],
)
def test_public_surface_is_deliberate(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported)
    for member in exported:
        assert hasattr(module, member) and not member.startswith("_"), member


def test_the_envelope_check_refuses_a_wrong_envelope() -> None:
    request = httpx.Request("GET", "http://127.0.0.1/v1/skills/x")
    wrong = {"object": "cloud_skill", "schema_version": "v0", "kind": "root"}
    with pytest.raises(SchemaError):
        check_envelope(httpx.Response(200, json=wrong, request=request))


def test_committed_envelope_schema_matches_the_spec_root_fields() -> None:
    schema = json.loads((REPO / "docs/schema/cloud-skill-envelope.v1.json").read_text("utf-8"))
    root = schema["$defs"]["root"]
    assert tuple(root["required"]) == ROOT_DATA_FIELDS
    assert set(root["properties"]) == set(ROOT_DATA_FIELDS)
    assert schema["properties"]["schema_version"]["const"] == "xmemo.cloud_skill.v1"
