"""recall_cloud_skill's server side: Level 0 discovery, the root manifest (live or pinned) and
one pinned resource."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.skills.conftest import skill_body

Api = Callable[[str], httpx.Client]

ITEMS = [
    {"type": "script", "logical_path": "bin/check.py", "content": "print('checked')"},
    {"type": "template", "logical_path": "templates/report #1.md", "content": "Report: {x}"},
]


def _save(client: httpx.Client, slug: str, **overrides: object) -> dict[str, Any]:
    body = skill_body(slug, components_json=json.dumps(ITEMS), **overrides)
    response = client.post("/v1/skills", json=body)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def test_level0_discovery_matches_names_and_descriptions_case_insensitively(
    api: Api, slug: str
) -> None:
    client = api("ann")
    _save(client, slug, name=f"Rotate Logs {slug}", description="Weekly HOUSEKEEPING routine")
    for query in (f"rotate {slug}", f"{slug} housekeeping", slug.upper()):
        found = client.get("/v1/skills", params={"query": query}).json()
        assert found["object"] == "cloud_skill_list" and found["kind"] == "discovery"
        assert [r["slug"] for r in found["data"]["results"]] == [slug], query
    nothing = client.get("/v1/skills", params={"query": f"{slug} absent-word"}).json()
    assert nothing["data"]["results"] == []


def test_level0_discovery_lists_published_only_with_the_newest_published_revision(
    api: Api, slug: str
) -> None:
    client = api("ann")
    first = _save(client, slug, description=slug)
    _save(client, slug, description=slug, instructions="A newer draft.", publish=False)
    (result,) = client.get("/v1/skills", params={"query": slug}).json()["data"]["results"]
    assert result["revision_id"] == first["revision_id"]
    assert set(result) == {
        "skill_id",
        "slug",
        "scope",
        "name",
        "description",
        "revision_id",
        "revision_number",
        "canonical_hash",
    }


def test_level0_discovery_limit_and_truncation(api: Api, slug: str) -> None:
    client = api("bob")
    for i in range(3):
        client.post("/v1/skills", json=skill_body(f"{slug}-{i}", description=slug))
    page = client.get("/v1/skills", params={"query": slug, "limit": 2}).json()
    assert len(page["data"]["results"]) == 2 and page["render_status"] == "truncated"
    full = client.get("/v1/skills", params={"query": slug, "limit": 3}).json()
    assert len(full["data"]["results"]) == 3 and full["render_status"] == "complete"


def test_recall_root_manifest_of_the_latest_published_revision(api: Api, slug: str) -> None:
    client = api("ann")
    _save(client, slug)
    second = _save(client, slug, instructions="Second version.")
    root = client.get(f"/v1/skills/{slug}").json()
    assert root["kind"] == "root" and root["render_status"] == "published"
    assert root["data"]["revision_id"] == second["revision_id"]
    assert root["data"]["instructions"] == "Second version."
    assert [m["path"] for m in root["data"]["manifest"]] == [
        "bin/check.py",
        "templates/report #1.md",
    ]


def test_recall_a_pinned_revision(api: Api, slug: str) -> None:
    client = api("ann")
    first = _save(client, slug)
    _save(client, slug, instructions="Second version.")
    pinned = client.get(f"/v1/skills/{slug}", params={"revision_id": first["revision_id"]})
    assert pinned.json()["data"]["revision_number"] == 1
    assert pinned.json()["data"]["canonical_hash"] == first["canonical_hash"]
    missing = client.get(f"/v1/skills/{slug}", params={"revision_id": "rev_nope"})
    assert (missing.status_code, missing.json()["code"]) == (404, "revision_not_found")


def test_recall_reads_one_pinned_resource(api: Api, slug: str) -> None:
    client = api("ann")
    first = _save(client, slug)
    _save(client, slug, instructions="Second version.")
    response = client.get(
        f"/v1/skills/{slug}/resources/templates/report%20%231.md",
        params={"revision_id": first["revision_id"]},
    )
    body = response.json()
    assert (body["object"], body["kind"]) == ("cloud_skill_resource", "resource")
    assert body["data"]["revision_id"] == first["revision_id"]
    resource = body["data"]["resource"]
    assert (resource["path"], resource["type"], resource["content"]) == (
        "templates/report #1.md",
        "template",
        "Report: {x}",
    )
    absent = client.get(f"/v1/skills/{slug}/resources/nope.md")
    assert (absent.status_code, absent.json()["code"]) == (404, "resource_not_found")


def test_recall_reads_the_root_instructions_as_skill_md(api: Api, slug: str) -> None:
    client = api("ann")
    _save(client, slug, instructions="The root procedure.")
    resource = client.get(f"/v1/skills/{slug}/resources/SKILL.md").json()["data"]["resource"]
    assert (resource["type"], resource["mime_type"], resource["content"]) == (
        "root",
        "text/markdown",
        "The root procedure.",
    )
    assert resource["size"] == len("The root procedure.")


def test_recall_unknown_skill_is_not_found(api: Api, slug: str) -> None:
    response = api("ann").get(f"/v1/skills/{slug}")
    assert (response.status_code, response.json()["code"]) == (404, "skill_not_found")
