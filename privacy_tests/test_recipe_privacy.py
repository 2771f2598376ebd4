"""Recipe privacy: recipe names, param values, step results and note/file/mail contents never
reach a signal (the wire), the outbox, the sent log, the last-failure file, a log record, or an
error message (error messages travel to agents and may be logged).

Canaries of every kind are planted where a user's data really goes -- a note's title and body,
a file's path and content, a mail's sender and body, a recipe's name, a param's value, a literal
in a step's args -- and a recipe runs over them, fails, and is reported with ``report_friction``
to a collector that is up or down."""

from __future__ import annotations

import json
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client.host import ToolResult
from client.runtime import Runtime
from client.tools import Maildirs
from privacy_tests.audit.canaries import Canary, CanaryKind, canaries
from privacy_tests.audit.logs import capture_logs
from privacy_tests.audit.scan import assert_no_leaks
from privacy_tests.audit.workload import FakeCollector, client_files
from tests.hypothesis_profiles import at_most


def _mail(rt: Runtime, sender: str, body: str) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "me@example.org", "Hello"
    msg.set_content(body)
    Maildirs(rt.home.maildir).deliver("INBOX", msg.as_bytes())


def _messages(results: list[ToolResult]) -> bytes:
    """Every error message the calls produced, including the failed steps' inside a run."""
    out: list[str] = []
    for result in results:
        if result.error is not None:
            out.append(result.error.message)
        inner = result.result if isinstance(result.result, dict) else {}
        if isinstance(inner.get("error"), dict):
            out.append(str(inner["error"].get("message")))
        for step in inner.get("steps", []) or []:
            if isinstance(step, dict) and isinstance(step.get("error"), dict):
                out.append(str(step["error"].get("message")))
    return "\n".join(out).encode("utf-8", "surrogatepass")


def _scenario(rt: Runtime, c: dict[CanaryKind, Canary]) -> list[ToolResult]:
    host = rt.host
    title, body = c[CanaryKind.note_title].text, c[CanaryKind.long_unicode].text
    name, param = c[CanaryKind.recipe_name].text, c[CanaryKind.param_value].text
    path = f"docs/{c[CanaryKind.account].marker}.txt"
    results = [
        host.dispatch("create_note", {"note_name": title, "body": body}),
        host.dispatch("write_file", {"path": path, "content": c[CanaryKind.mail_body].text}),
    ]
    _mail(rt, c[CanaryKind.email].text, c[CanaryKind.mail_body].text)
    manifest: dict[str, Any] = {
        "name": name,
        "description": c[CanaryKind.home_path_macos].text,
        "params": [{"name": "who", "type": "string"}, {"name": "n", "type": "int", "default": 3}],
        "steps": [
            {"tool": "read_note", "args": {"note_name": title}},
            {"tool": "read_file", "args": {"path": path}},
            {"tool": "list_emails", "args": {"limit": "${n}"}},
            {
                "tool": "read_email",
                "args": {"message_id": "${steps[2].result.emails[0].message_id}"},
            },
            {
                "tool": "create_note",
                "args": {"note_name": "${who}", "body": "${steps[0].result.body}"},
            },
            {
                "tool": "read_file",
                "args": {"path": "${who}/${steps[3].result.body}"},
                "optional": True,
            },
            {"tool": "read_note", "args": {"note_name": "${steps[1].result.content}"}},
        ],
    }
    results.append(host.dispatch("recipe_save", {"manifest": manifest}))
    results.append(host.dispatch("recipe_save", {"manifest": manifest}))  # recipe_exists
    results.append(host.dispatch("recipe_run", {"name": name, "params": {"who": param}}))
    run = host.dispatch("recipe_run", {"name": name, "params": {"who": param}, "confirm": True})
    assert run.result["ok"] is False and run.result["stopped_at"] == 6, run.result
    results.append(run)
    # refusals that see values: bad params, a bad manifest, a secret at export, no such recipe
    results.append(host.dispatch("recipe_run", {"name": name, "params": {"n": param, param: 1}}))
    results.append(
        host.dispatch(
            "recipe_save",
            {
                "manifest": {
                    "name": name,
                    param: 1,
                    "params": [{"name": "p", "type": "int", "default": param}],
                    "steps": [
                        {"tool": param, "args": {param: param}},
                        {
                            "tool": "read_note",
                            "args": {"note_name": "${" + c[CanaryKind.account].marker + "}"},
                        },
                        {"tool": "list_notes", "args": {"limit": param}},
                    ],
                }
            },
        )
    )
    secret = dict(manifest, name=f"{name} 2")
    secret["steps"] = [
        {"tool": "create_note", "args": {"note_name": "t", "body": c[CanaryKind.bearer_token].text}}
    ]
    results.append(host.dispatch("recipe_save", {"manifest": secret}))
    results.append(host.dispatch("recipe_export", {"name": f"{name} 2"}))
    results.append(host.dispatch("recipe_run", {"name": f"{name} missing"}))
    results.append(host.dispatch("recipe_delete", {"name": f"{name} missing"}))
    results.append(
        host.dispatch(
            "recipe_import",
            {
                "document": {
                    "format": "lmcp-recipe",
                    "format_version": 1,
                    "manifest": {"name": name},
                    "hash": {
                        "algorithm": "sha256",
                        "canonicalization": "RFC8785",
                        "value": "0" * 64,
                    },
                }
            },
        )
    )
    for tool in ("read_note", "recipe_run", None):
        args: dict[str, Any] = {"friction_type": "cannot_complete", "intent_category": "other"}
        if tool:
            args["tool_attempted"] = tool
        results.append(host.dispatch("report_friction", args))
    return results


@settings(
    max_examples=at_most(12),  # each example runs a recipe end to end through real tool files
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(planted=canaries(), reachable=st.booleans())
def test_recipe_canaries_never_reach_a_signal_the_outbox_or_the_logs(
    tmp_path_factory: pytest.TempPathFactory, planted: dict[CanaryKind, Canary], reachable: bool
) -> None:
    home: Path = tmp_path_factory.mktemp("home")
    (home / "settings.json").write_text('{"anonymous_signals": "on"}')  # the user chose on
    collector = FakeCollector(reachable=reachable)
    with capture_logs() as logs:
        rt = Runtime.from_env(
            {"LMCP_HOME": str(home)},
            transport=collector,
        )
        rt.sender._sleep = lambda s: None  # noqa: SLF001
        try:
            results = _scenario(rt, planted)
        finally:
            rt.close()
    reports = [r for r in results if r.tool == "report_friction"]
    assert all(r.ok for r in reports), [r.to_dict() for r in reports]
    assert collector.bodies, "no report was attempted"
    sinks = {
        "wire": collector.wire,
        "logs": logs.data(),
        "error messages": _messages(results),
        "report results": json.dumps([r.to_dict() for r in reports]).encode(),
        **client_files(rt),
    }
    if not reachable:
        assert sinks["outbox.json"], "an undeliverable signal must be queued"
    assert_no_leaks(sinks, planted.values())
