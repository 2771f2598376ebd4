"""Fixtures of the Cloud Skills tests: the real skills service (uvicorn on loopback, its own
DuckDB file) with a cast of principals, and an httpx client per principal.

Tokens are obviously fake test strings.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator

from client._tls import tls_context
from cloudskills.principals import SkillPrincipal, TeamMembership
from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from tests._servers import HANG_S, running_collector, running_skills

#: The cast: a key per token.
CAST: dict[str, SkillPrincipal] = {
    "ann": SkillPrincipal(
        token="test-token-ann-personal",
        principal="ann",
        scopes=frozenset({"memory:read", "memory:write"}),
        tier="pro",
        teams=(TeamMembership(team="ops", role="member"),),
    ),
    "ann_ops": SkillPrincipal(
        token="test-token-ann-ops",
        principal="ann",
        scopes=frozenset({"memory:read", "memory:write"}),
        tier="pro",
        teams=(TeamMembership(team="ops", role="member"),),
        team_scope="ops",
    ),
    "rita_ops": SkillPrincipal(
        token="test-token-rita-ops",
        principal="rita",
        scopes=frozenset({"memory:read", "memory:write"}),
        tier="team",
        teams=(TeamMembership(team="ops", role="reviewer"),),
        team_scope="ops",
    ),
    "bob": SkillPrincipal(
        token="test-token-bob-personal",
        principal="bob",
        scopes=frozenset({"memory:read", "memory:write"}),
        tier="pro",
    ),
    "reader": SkillPrincipal(
        token="test-token-reader",
        principal="reader",
        scopes=frozenset({"memory:read"}),
        tier="pro",
        teams=(TeamMembership(team="ops", role="member"),),
    ),
    "writer_only": SkillPrincipal(
        token="test-token-writer-only",
        principal="wes",
        scopes=frozenset({"memory:write"}),
        tier="enterprise",
    ),
    "free": SkillPrincipal(
        token="test-token-free-tier",
        principal="fay",
        scopes=frozenset({"memory:read", "memory:write"}),
        tier="free",
    ),
}


def token_of(key: str) -> str:
    return CAST[key].token.get_secret_value()


def make_settings(db_path: Path) -> SkillsSettings:
    return SkillsSettings(db_path=db_path, principals=list(CAST.values()))


@pytest.fixture(scope="session")
def skills_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One skills service for the session: (base URL, DuckDB file). Tests use unique slugs."""
    db_path = tmp_path_factory.mktemp("skills") / "skills.duckdb"
    with running_skills(make_settings(db_path)) as url:
        yield url, db_path


@pytest.fixture(scope="session")
def base_url(skills_service: tuple[str, Path]) -> str:
    return skills_service[0]


@pytest.fixture(scope="session")
def signals_collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The signal collector beside the skills service, as deployed: its own process role, its
    own file. (base URL, DuckDB file)."""
    db_path = tmp_path_factory.mktemp("signals") / "signals.duckdb"
    settings = CollectorSettings(db_path=db_path, rate_limit_enabled=False)
    with running_collector(settings) as url:
        yield url, db_path


@pytest.fixture(scope="session")
def collector_url(signals_collector: tuple[str, Path]) -> str:
    return signals_collector[0]


ENVELOPE_SCHEMA = Path(__file__).resolve().parents[2] / "docs/schema/cloud-skill-envelope.v1.json"
ENVELOPE = Draft202012Validator(json.loads(ENVELOPE_SCHEMA.read_text(encoding="utf-8")))


def check_envelope(response: httpx.Response) -> None:
    """Every successful /v1/skills answer must match the committed envelope schema."""
    if response.request.url.path.startswith("/v1/skills") and response.is_success:
        response.read()
        ENVELOPE.validate(response.json())


@pytest.fixture
def api(base_url: str) -> Iterator[Callable[[str], httpx.Client]]:
    """``api("ann")``: an httpx client authenticated as that principal. Every successful
    answer is checked against ``docs/schema/cloud-skill-envelope.v1.json``."""
    clients: list[httpx.Client] = []

    def make(key: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token_of(key)}"} if key else {}
        client = httpx.Client(
            base_url=base_url,
            headers=headers,
            timeout=HANG_S,
            event_hooks={"response": [check_envelope]},
            verify=tls_context(trust_env=True),  # the process's store, not one parsed per client
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def slug() -> str:
    """A slug no other test uses."""
    return f"skill-{uuid.uuid4().hex[:12]}"


def skill_body(slug: str | None = None, **overrides: object) -> dict[str, object]:
    body: dict[str, object] = {
        "name": "Deployment procedure",
        "instructions": "Check the release, run the smoke test, and report the result.",
        "description": "A bounded deployment verification procedure",
        "publish": True,
    }
    if slug is not None:
        body["slug"] = slug
    body.update(overrides)
    return body
