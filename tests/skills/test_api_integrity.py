"""Revision numbering under concurrency, immutability of stored revisions, one error shape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import httpx
import pytest

from cloudskills.app import create_app
from tests._servers import HANG_S
from tests.skills.conftest import make_settings, skill_body, token_of

Api = Callable[[str], httpx.Client]


async def _concurrent_saves(base_url: str, bodies: list[dict[str, object]]) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {token_of('ann')}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=HANG_S) as client:
        return await asyncio.gather(*(client.post("/v1/skills", json=b) for b in bodies))


def test_20_concurrent_saves_of_one_slug_give_revisions_1_to_20_exactly(
    api: Api, base_url: str, slug: str
) -> None:
    bodies = [skill_body(slug, instructions=f"Variant {i} of the procedure.") for i in range(20)]
    responses = asyncio.run(_concurrent_saves(base_url, bodies))
    assert all(r.status_code == 201 for r in responses)
    numbers = sorted(r.json()["data"]["revision_number"] for r in responses)
    assert numbers == list(range(1, 21))
    assert len({r.json()["data"]["skill_id"] for r in responses}) == 1
    listed = api("ann").get(f"/v1/skills/{slug}/revisions").json()["data"]["revisions"]
    assert [r["revision_number"] for r in listed] == list(range(1, 21))
    assert len({r["revision_id"] for r in listed}) == 20


def test_20_concurrent_identical_saves_create_one_revision(
    api: Api, base_url: str, slug: str
) -> None:
    responses = asyncio.run(_concurrent_saves(base_url, [skill_body(slug)] * 20))
    assert sorted(r.status_code for r in responses) == [200] * 19 + [201]
    assert {r.json()["data"]["revision_number"] for r in responses} == {1}
    unchanged = [r for r in responses if r.status_code == 200]
    assert all([w["code"] for w in r.json()["warnings"]] == ["unchanged"] for r in unchanged)


def test_no_route_can_update_a_revision_and_only_the_owner_purge_deletes(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path / "unused.duckdb"))
    paths = app.openapi()["paths"]
    methods = {
        (path, method.upper())
        for path, operations in paths.items()
        if path.startswith("/v1/skills")
        for method in operations
    }
    assert methods == {
        ("/v1/skills", "POST"),
        ("/v1/skills", "GET"),
        ("/v1/skills/{slug}", "GET"),
        ("/v1/skills/{slug}/resources/{path}", "GET"),
        ("/v1/skills/{slug}/revisions", "GET"),
        ("/v1/skills/{slug}/revisions/{revision_id}/publish", "POST"),
        ("/v1/skills/{slug}/revisions/{revision_id}/approve", "POST"),
        ("/v1/skills/{slug}/revisions/{revision_id}/reject", "POST"),
        ("/v1/skills/{slug}", "DELETE"),  # the owner's purge of every revision
    }


def test_no_statement_of_the_store_updates_or_deletes_revision_content() -> None:
    folder = resources.files("cloudskills").joinpath("sql")
    for entry in folder.iterdir():
        sql = entry.read_text("utf-8").upper()
        if "UPDATE" in sql or "DELETE" in sql:
            # The life cycle, and the purge that empties content (delete, proposal expiry).
            assert entry.name in {
                "state_update.sql",
                "purge_components.sql",
                "purge_state.sql",
                "purge_text.sql",
            }
            if entry.name == "state_update.sql":
                assert "UPDATE SKILL_REVISION_STATE SET STATUS" in sql
            if entry.name == "purge_text.sql":
                assert "SET NAME = '', DESCRIPTION = '', INSTRUCTIONS = ''" in sql


def test_no_route_alters_a_stored_revision(api: Api, slug: str) -> None:
    ann, ann_ops, rita = api("ann"), api("ann_ops"), api("rita_ops")
    items = json.dumps([{"type": "script", "logical_path": "run.py", "content": "print(1)"}])
    first = ann.post("/v1/skills", json=skill_body(slug, components_json=items)).json()["data"]
    rid = first["revision_id"]

    def snapshot() -> tuple[object, object]:
        root = ann.get(f"/v1/skills/{slug}", params={"revision_id": rid}).json()["data"]
        res = ann.get(f"/v1/skills/{slug}/resources/run.py", params={"revision_id": rid}).json()
        return root, res["data"]

    before = snapshot()
    # Every route, with every trick: same slug, same and new content, life-cycle calls on it.
    ann.post("/v1/skills", json=skill_body(slug, components_json=items))
    ann.post("/v1/skills", json=skill_body(slug, components_json="[]", instructions="Changed."))
    ann.post("/v1/skills", json=skill_body(slug, components_json=items, publish=False))
    for action in ("publish", "approve", "reject"):
        ann.post(f"/v1/skills/{slug}/revisions/{rid}/{action}")
        rita.post(f"/v1/skills/{slug}/revisions/{rid}/{action}", params={"team": "ops"})
    ann_ops.post("/v1/skills", json=skill_body(slug, components_json=items))
    ann.get("/v1/skills", params={"query": slug})
    ann.get(f"/v1/skills/{slug}/revisions")
    for method in ("PUT", "PATCH"):
        assert ann.request(method, f"/v1/skills/{slug}").status_code == 405
    assert snapshot() == before


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/skills"),
        ("GET", "/v1/skills"),
        ("GET", "/v1/skills/some-skill"),
        ("GET", "/v1/skills/some-skill/resources/a/b.md"),
        ("GET", "/v1/skills/some-skill/revisions"),
        ("POST", "/v1/skills/some-skill/revisions/rev_x/publish"),
        ("POST", "/v1/skills/some-skill/revisions/rev_x/approve"),
        ("POST", "/v1/skills/some-skill/revisions/rev_x/reject"),
    ],
)
def test_every_route_answers_errors_in_the_services_one_shape(
    api: Api, method: str, path: str
) -> None:
    for client, status in ((api(""), 401), (api("ann"), None)):
        response = client.request(method, path, params={"team": "nope"})
        if status is not None:
            assert response.status_code == status
        if response.is_success:
            continue
        assert response.headers["content-type"] == "application/problem+json"
        body = response.json()
        assert {"type", "title", "status", "detail", "code"} <= set(body)
        assert body["status"] == response.status_code
        assert body["type"].endswith("/" + body["code"])
        for entry in body.get("errors", []):
            assert {"pointer", "rule", "detail"} <= set(entry)
