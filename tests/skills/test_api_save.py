"""save_cloud_skill on the real skills service (uvicorn on loopback, a DuckDB file): the envelope,
revisions, dedupe, and the spec's error bullets as HTTP problems."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

import httpx

from cloudskills.envelope import ROOT_DATA_FIELDS
from cloudskills.limits import MAX_COMPONENT_BYTES, MAX_INSTRUCTIONS_BYTES
from tests.skills.conftest import skill_body

Api = Callable[[str], httpx.Client]


def test_save_returns_the_cloud_skill_envelope_exactly(api: Api, slug: str) -> None:
    items = [
        {"type": "script", "logical_path": "scripts/check.py", "content": "print('ok')"},
        {"type": "reference", "logical_path": "docs/a.md", "content": "# A", "metadata": {"k": 1}},
        {"type": "asset", "logical_path": "logo.png", "artifact_ref": "artifact:logo-1"},
    ]
    response = api("ann").post(
        "/v1/skills", json=skill_body(slug, components_json=json.dumps(items))
    )
    assert response.status_code == 201
    env = response.json()
    assert set(env) == {"object", "schema_version", "kind", "render_status", "warnings", "data"}
    assert (env["object"], env["schema_version"], env["kind"]) == (
        "cloud_skill",
        "xmemo.cloud_skill.v1",
        "root",
    )
    assert env["render_status"] == "published"
    assert env["warnings"] == []
    data = env["data"]
    assert tuple(data) == ROOT_DATA_FIELDS
    assert data["slug"] == slug
    assert data["revision_number"] == 1
    assert re.fullmatch(r"[0-9a-f]{64}", data["canonical_hash"])
    assert data["skill_id"].startswith("skill_") and data["revision_id"].startswith("rev_")
    assert [(m["path"], m["type"], m["mime_type"], m["size"]) for m in data["manifest"]] == [
        ("docs/a.md", "reference", "text/markdown", 3),
        ("logo.png", "asset", "application/octet-stream", None),
        ("scripts/check.py", "script", "text/x-python", 11),
    ]
    assert data["manifest"][0]["hash"] == hashlib.sha256(b"# A").hexdigest()
    assert data["manifest"][0]["metadata"] == {"k": 1}
    assert data["manifest"][1]["artifact_ref"] == "artifact:logo-1"
    assert data["manifest"][1]["hash"] is None


def test_save_the_spec_example(api: Api) -> None:
    example = {
        "name": "deployment-procedure",
        "instructions": "Check the release, run the smoke test, and report the result.",
        "slug": "deployment-procedure",
        "description": "A bounded deployment verification procedure",
        "publish": True,
    }
    response = api("bob").post("/v1/skills", json=example)
    assert response.status_code in (200, 201)
    assert response.json()["data"]["slug"] == "deployment-procedure"


def test_save_creates_the_next_revision_of_an_existing_slug(api: Api, slug: str) -> None:
    client = api("ann")
    numbers = []
    for i in range(3):
        body = skill_body(slug, instructions=f"Step {i}: run the smoke test.")
        numbers.append(client.post("/v1/skills", json=body).json()["data"]["revision_number"])
    assert numbers == [1, 2, 3]


def test_save_same_content_as_latest_creates_nothing_and_says_so_in_warnings(
    api: Api, slug: str
) -> None:
    client = api("ann")
    first = client.post("/v1/skills", json=skill_body(slug)).json()
    again = client.post("/v1/skills", json=skill_body(slug, publish=False))
    assert again.status_code == 200
    body = again.json()
    assert [w["code"] for w in body["warnings"]] == ["unchanged"]
    assert body["data"]["revision_id"] == first["data"]["revision_id"]
    assert body["data"]["revision_number"] == 1
    revisions = client.get(f"/v1/skills/{slug}/revisions").json()["data"]["revisions"]
    assert len(revisions) == 1


def test_save_slug_derived_from_name(api: Api) -> None:
    name = "Nightly Backup Check"
    response = api("bob").post("/v1/skills", json={"name": name, "instructions": "Check it."})
    assert response.json()["data"]["slug"] == "nightly-backup-check"


def _problem(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, object] = response.json()
    assert body["code"] == code
    return body


def _rules(body: dict[str, object]) -> set[str]:
    errors = body["errors"]
    assert isinstance(errors, list)
    return {e["rule"] for e in errors}


def test_validation_failure_name_or_instructions_empty_http(api: Api, slug: str) -> None:
    body = _problem(
        api("ann").post("/v1/skills", json=skill_body(slug, name="", instructions="")),
        422,
        "validation_failed",
    )
    assert _rules(body) == {"name_empty", "instructions_empty"}


def test_validation_failure_invalid_slug_http(api: Api) -> None:
    body = _problem(
        api("ann").post("/v1/skills", json=skill_body("Not A Slug")), 422, "validation_failed"
    )
    assert _rules(body) == {"slug_invalid"}


def test_validation_failure_instructions_over_64_kib_http(api: Api, slug: str) -> None:
    big = "x" * (MAX_INSTRUCTIONS_BYTES + 1)
    body = _problem(
        api("ann").post("/v1/skills", json=skill_body(slug, instructions=big)),
        422,
        "validation_failed",
    )
    assert _rules(body) == {"instructions_too_large"}
    assert "xxxxxxxx" not in json.dumps(body)


def test_component_validation_failure_http(api: Api, slug: str) -> None:
    items = [
        {"type": "reference", "logical_path": "", "content": "a"},
        {"type": "reference", "logical_path": "/abs", "content": "a"},
        {"type": "reference", "logical_path": "../up", "content": "a"},
        {"type": "reference", "logical_path": "SKILL.md", "content": "a"},
        {"type": "reference", "logical_path": "dup.md", "content": "a"},
        {"type": "reference", "logical_path": "DUP.md", "content": "a"},
        {"type": "binary", "logical_path": "t.md", "content": "a"},
        {"type": "reference", "logical_path": "big.md", "content": "a" * (MAX_COMPONENT_BYTES + 1)},
    ]
    body = _problem(
        api("ann").post("/v1/skills", json=skill_body(slug, components_json=json.dumps(items))),
        422,
        "component_validation_failed",
    )
    assert _rules(body) == {
        "path_empty",
        "path_absolute",
        "path_traversal",
        "path_reserved",
        "path_duplicate",
        "component_type_invalid",
        "component_too_large",
    }
    errors = body["errors"]
    assert isinstance(errors, list)
    assert {e["class"] for e in errors} == {"component_validation"}


def test_component_validation_failure_components_json_not_an_array_http(
    api: Api, slug: str
) -> None:
    body = _problem(
        api("ann").post("/v1/skills", json=skill_body(slug, components_json='{"a": 1}')),
        422,
        "component_validation_failed",
    )
    assert body["errors"] == [
        {
            "pointer": "/components_json",
            "rule": "components_not_array",
            "detail": "components_json must be a JSON array",
            "class": "component_validation",
        }
    ]


def test_secret_refused_http_names_rule_and_location_never_the_value(api: Api, slug: str) -> None:
    secret = "ghp_" + "FAKEtest0123" * 3
    body = _problem(
        api("ann").post("/v1/skills", json=skill_body(slug, instructions=f"token {secret}")),
        422,
        "validation_failed",
    )
    assert body["errors"] == [
        {
            "pointer": "/instructions",
            "rule": "secret_detected",
            "detail": "instructions holds a secret (rule 'github_token'); remove it",
            "class": "validation",
            "secret_rule": "github_token",
        }
    ]
    assert secret not in json.dumps(body)


def test_save_body_not_a_json_object_refused(api: Api) -> None:
    client = api("ann")
    _problem(client.post("/v1/skills", content=b"[1, 2]"), 400, "body_not_object")
    _problem(client.post("/v1/skills", content=b"{nope"), 400, "body_not_object")


def test_save_body_over_the_limit_refused_with_413(api: Api) -> None:
    huge = b'{"name": "x", "instructions": "' + b"a" * (16 * 1024 * 1024 + 1) + b'"}'
    _problem(api("ann").post("/v1/skills", content=huge), 413, "body_too_large")
