"""The three client tools through ToolHost, against the real skills service on loopback."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from client.host import ToolHost
from client.runtime import Runtime
from client.settings import ClientSettings
from client.skills import skill_handlers
from contract.schema import ErrorClass, Outcome
from tests.skills.conftest import token_of

HostFor = Callable[..., ToolHost]


@pytest.fixture
def host_for(base_url: str) -> HostFor:
    def make(key: str = "ann", **env: str) -> ToolHost:
        environ = {"LMCP_SKILLS_URL": base_url, "LMCP_SKILLS_TOKEN": token_of(key), **env}
        return ToolHost(skill_handlers(ClientSettings.from_env(environ)))

    return make


def _script_skill(host: ToolHost, slug: str, script: str, **extra: Any) -> dict[str, Any]:
    items = [
        {"type": "script", "logical_path": "bin/run.py", "content": script},
        {"type": "reference", "logical_path": "notes.md", "content": "Read me."},
    ]
    args = {
        "name": "Scripted",
        "instructions": "Run bin/run.py.",
        "slug": slug,
        "components_json": json.dumps(items),
        **extra,
    }
    result = host.dispatch("save_cloud_skill", args)
    assert result.outcome is Outcome.ok, result.to_dict()
    data: dict[str, Any] = result.result["data"]
    return data


# -- save_cloud_skill -------------------------------------------------------------------------


def test_save_cloud_skill_tool_saves_and_returns_the_envelope(host_for: HostFor, slug: str) -> None:
    result = host_for().dispatch(
        "save_cloud_skill", {"name": "Deploy", "instructions": "Do it.", "slug": slug}
    )
    assert result.outcome is Outcome.ok
    assert result.result["object"] == "cloud_skill"
    assert result.result["data"]["revision_number"] == 1


def test_save_cloud_skill_tool_refusal_is_a_value_free_failure(host_for: HostFor) -> None:
    secret = "ghp_" + "FAKEtest0123" * 3
    host = host_for()
    result = host.dispatch(
        "save_cloud_skill", {"name": "Leaky", "instructions": f"use {secret}", "slug": "leaky"}
    )
    assert result.outcome is Outcome.invalid
    assert result.error is not None
    assert result.error.error_class is ErrorClass.invalid_arguments
    assert result.error.code == "validation_failed"
    assert "secret_detected (secret rule github_token) at /instructions" in result.error.message
    assert secret not in json.dumps(result.to_dict())
    assert result.can_report_friction


def test_save_cloud_skill_tool_limits_fail_as_too_large(host_for: HostFor) -> None:
    result = host_for().dispatch(
        "save_cloud_skill", {"name": "Big", "instructions": "x" * (64 * 1024 + 1), "slug": "big"}
    )
    assert result.error is not None and result.error.error_class is ErrorClass.too_large


def test_save_cloud_skill_tool_permission_failures(host_for: HostFor, slug: str) -> None:
    args = {"name": "Deploy", "instructions": "Do it.", "slug": slug}
    for key, code in (("reader", "insufficient_scope"), ("free", "tier_too_low")):
        result = host_for(key).dispatch("save_cloud_skill", args)
        assert result.error is not None
        assert (result.error.error_class, result.error.code) == (ErrorClass.permission_denied, code)


def test_save_cloud_skill_keeps_exactly_the_spec_parameters(host_for: HostFor) -> None:
    result = host_for().dispatch(
        "save_cloud_skill", {"name": "x", "instructions": "y", "team": "ops"}
    )
    assert result.outcome is Outcome.invalid
    assert result.error is not None and result.error.code == "invalid_arguments"


class Counting(httpx.BaseTransport):
    def __init__(self) -> None:
        self.requests = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return httpx.Response(500)


@pytest.mark.parametrize(
    ("env", "code"),
    [
        ({}, "skills_token_missing"),
        (
            {"LMCP_SKILLS_TOKEN": "t", "LMCP_SKILLS_URL": "http://skills.example"},
            "skills_url_insecure",
        ),
        ({"LMCP_SKILLS_TOKEN": "t", "LMCP_SKILLS_URL": "ftp://127.0.0.1"}, "skills_url_invalid"),
    ],
)
def test_tools_refuse_to_send_the_token_without_a_safe_url(env: dict[str, str], code: str) -> None:
    transport = Counting()
    host = ToolHost(skill_handlers(ClientSettings.from_env(env), transport))
    result = host.dispatch("recall_cloud_skill", {})
    assert result.error is not None and result.error.code == code
    assert transport.requests == 0


def test_tools_report_an_unreachable_service_as_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {"LMCP_SKILLS_URL": f"http://127.0.0.1:{port}", "LMCP_SKILLS_TOKEN": "t"}
    result = ToolHost(skill_handlers(ClientSettings.from_env(env))).dispatch(
        "recall_cloud_skill", {"query": "x"}
    )
    assert result.error is not None
    assert (result.error.error_class, result.error.code) == (
        ErrorClass.unavailable,
        "skills_unreachable",
    )


# -- recall_cloud_skill -----------------------------------------------------------------------


def test_recall_cloud_skill_tool_discovers_loads_and_reads(host_for: HostFor, slug: str) -> None:
    host = host_for()
    saved = _script_skill(host, slug, "print('hi')", description=f"tool test {slug}")
    found = host.dispatch("recall_cloud_skill", {"query": slug})
    assert [r["slug"] for r in found.result["data"]["results"]] == [slug]
    root = host.dispatch("recall_cloud_skill", {"slug": slug})
    assert root.result["data"]["revision_id"] == saved["revision_id"]
    pinned = host.dispatch(
        "recall_cloud_skill",
        {"slug": slug, "revision_id": saved["revision_id"], "resource_path": "notes.md"},
    )
    assert pinned.result["data"]["resource"]["content"] == "Read me."


def test_recall_cloud_skill_tool_empty_discovery_can_be_reported(host_for: HostFor) -> None:
    result = host_for().dispatch("recall_cloud_skill", {"query": "no-such-skill-anywhere-zz"})
    assert result.outcome is Outcome.empty
    assert result.can_report_friction


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"resource_path": "a.md"}, "slug_required"),
        ({"revision_id": "rev_x"}, "slug_required"),
        ({"slug": "a", "query": "x"}, "discovery_with_slug"),
    ],
)
def test_recall_cloud_skill_tool_refuses_ambiguous_arguments(
    host_for: HostFor, args: dict[str, str], code: str
) -> None:
    result = host_for().dispatch("recall_cloud_skill", args)
    assert result.error is not None and result.error.code == code


def test_recall_cloud_skill_tool_not_found(host_for: HostFor, slug: str) -> None:
    result = host_for().dispatch("recall_cloud_skill", {"slug": slug})
    assert result.error is not None
    assert (result.error.error_class, result.error.code) == (
        ErrorClass.not_found,
        "skill_not_found",
    )


# -- execute_cloud_skill ----------------------------------------------------------------------

WRITE_MARKER = (
    "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
    "print('again' if p.exists() else 'done')\np.write_text('ran')\n"
)


def _confirmed(host: ToolHost, args: dict[str, Any]) -> Any:
    """Preview, then confirm that preview (a confirmation runs only what was previewed)."""
    preview = host.dispatch("execute_cloud_skill", args)
    if preview.error is not None:
        return preview
    return host.dispatch("execute_cloud_skill", {**args, "confirm": True})


@pytest.mark.slow  # runs the skill's script in a child process
def test_execute_cloud_skill_previews_unless_confirmed(host_for: HostFor, slug: str) -> None:
    host = host_for()
    saved = _script_skill(host, slug, WRITE_MARKER)
    # The sandbox's scratch folder is the only writable place; the marker lives there.
    args = {
        "slug": slug,
        "revision_id": saved["revision_id"],
        "canonical_hash": saved["canonical_hash"],
        "logical_path": "bin/run.py",
        "args": ["marker.txt"],
    }
    preview = host.dispatch("execute_cloud_skill", args)
    assert preview.outcome is Outcome.preview
    assert preview.result["preview"] is True
    assert preview.result["would_run"]["interpreter"] == "python"
    assert "stdout" not in preview.result
    ran = host.dispatch("execute_cloud_skill", {**args, "confirm": True})
    assert ran.outcome is Outcome.ok, ran.to_dict()
    assert (ran.result["exit_code"], ran.result["stdout"]) == (0, "done\n")


def test_execute_cloud_skill_refuses_a_hash_that_does_not_match_the_recalled_revision(
    host_for: HostFor, slug: str
) -> None:
    host = host_for()
    first = _script_skill(host, slug, "print(1)")
    second = _script_skill(host, slug, "print(2)")
    for revision_id, digest in (
        (first["revision_id"], second["canonical_hash"]),
        (second["revision_id"], "0" * 64),
    ):
        result = host.dispatch(
            "execute_cloud_skill",
            {
                "slug": slug,
                "revision_id": revision_id,
                "canonical_hash": digest,
                "logical_path": "bin/run.py",
                "confirm": True,
            },
        )
        assert result.error is not None
        assert (result.error.error_class, result.error.code) == (
            ErrorClass.conflict,
            "revision_mismatch",
        )


@pytest.mark.slow  # runs the skill's script in a child process
def test_execute_cloud_skill_runs_an_older_pinned_revision(host_for: HostFor, slug: str) -> None:
    host = host_for()
    first = _script_skill(host, slug, "print('one')")
    _script_skill(host, slug, "print('two')")
    result = _confirmed(
        host,
        {
            "slug": slug,
            "revision_id": first["revision_id"],
            "canonical_hash": first["canonical_hash"],
            "logical_path": "bin/run.py",
        },
    )
    assert result.result["stdout"] == "one\n"


def test_execute_cloud_skill_only_runs_a_component_declared_as_a_script(
    host_for: HostFor, slug: str
) -> None:
    host = host_for()
    saved = _script_skill(host, slug, "print(1)")
    result = host.dispatch(
        "execute_cloud_skill",
        {
            "slug": slug,
            "revision_id": saved["revision_id"],
            "canonical_hash": saved["canonical_hash"],
            "logical_path": "notes.md",
            "confirm": True,
        },
    )
    assert result.error is not None and result.error.code == "not_a_script"


def test_execute_cloud_skill_refuses_unpublished_revisions(host_for: HostFor, slug: str) -> None:
    drafts = host_for()
    draft = _script_skill(drafts, slug, "print(1)", publish=False)
    team = host_for("ann_ops")
    proposed = _script_skill(team, slug, "print(1)")
    for host, saved, extra in ((drafts, draft, {}), (team, proposed, {"team": "ops"})):
        result = host.dispatch(
            "execute_cloud_skill",
            {
                "slug": slug,
                "revision_id": saved["revision_id"],
                "canonical_hash": saved["canonical_hash"],
                "logical_path": "bin/run.py",
                "confirm": True,
                **extra,
            },
        )
        assert result.error is not None and result.error.code == "revision_not_published"


@pytest.mark.slow  # runs the skill's script in a child process
def test_execute_cloud_skill_time_limit_is_a_timeout_failure(host_for: HostFor, slug: str) -> None:
    host = host_for(LMCP_SKILLS_EXEC_TIMEOUT_S="0.5")
    saved = _script_skill(host, slug, "import time\ntime.sleep(30)\n")
    result = _confirmed(
        host,
        {
            "slug": slug,
            "revision_id": saved["revision_id"],
            "canonical_hash": saved["canonical_hash"],
            "logical_path": "bin/run.py",
        },
    )
    assert result.error is not None
    assert (result.error.error_class, result.error.code) == (ErrorClass.timeout, "script_timeout")


# -- failures are friction like any other tool's ------------------------------------------------


@pytest.fixture
def runtime(base_url: str, collector_url: str, tmp_path: Path) -> Iterator[Runtime]:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    # The user's choice turns signals on (the environment can only turn them off).
    (home / "settings.json").write_text('{"anonymous_signals": "on"}')
    env = {
        "LMCP_HOME": str(home),
        "LMCP_COLLECTOR_URL": collector_url,
        "LMCP_SKILLS_URL": base_url,
        "LMCP_SKILLS_TOKEN": token_of("ann"),
    }
    with Runtime.from_env(env) as rt:
        yield rt


def test_a_failed_skill_call_can_be_reported_as_anonymous_friction(runtime: Runtime) -> None:
    secret = "AKIA" + "FAKETEST01234567"
    failed = runtime.host.dispatch(
        "save_cloud_skill",
        {"name": "Private Runbook", "instructions": f"key {secret}", "slug": "private-runbook"},
    )
    assert failed.can_report_friction
    signal, context = runtime.reporter.prepare(
        {"friction_type": "cannot_complete", "tool_attempted": "save_cloud_skill"}
    )
    assert context is not None and context.error_class is ErrorClass.invalid_arguments
    wire = signal.model_dump_json()
    assert signal.tool_attempted.value == "save_cloud_skill"
    assert {a.name.value for a in signal.args} == {"name", "instructions", "slug"}
    for value in (secret, "Private Runbook", "private-runbook"):
        assert value not in wire
    sent = runtime.host.dispatch(
        "report_friction",
        {"friction_type": "cannot_complete", "tool_attempted": "save_cloud_skill"},
    )
    # Delivered within the call's short wait, or queued for the background delivery thread.
    assert sent.result in (
        {"sent": True, "signal_id": sent.result.get("signal_id")},
        {"sent": False, "queued": True, "reason": "collector_not_reached"},
    )
