"""The audit's workloads: where a user's data really goes, and how it fails.

- ``RecordingTransport``: a real httpx transport (real sockets) that keeps a copy of every request
  the client sends, so the wire bytes of ``POST /v1/signals`` are a sink like any other.
- ``FakeCollector``: an in-memory collector (up, or refusing connections) that keeps the wire
  bytes; ``client_files`` reads the client's signal files (outbox, sent log, latest failure).
- ``plant_and_fail``: plants one canary of every kind in notes, files, mail, recipes and Cloud
  Skill calls, drives real failures of every class through ``ToolHost`` (not found, invalid
  arguments, undeclared arguments, unknown tool, recipe step failures, previews, refusals) and
  reports them with ``report_friction``.
- ``hostile_requests``: sends canaries straight to the collector where a careless server would
  echo or keep them: invalid bodies, extra fields, keys, headers, query strings, paths, tokens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import httpx

from client.host import ToolResult
from client.runtime import Runtime
from client.tools import Maildirs
from contract.limits import WEEKLY_SIGNAL_LIMIT
from privacy_tests.audit.canaries import Canary, CanaryKind
from tests.factories import BARE, signal_json

__all__ = [
    "REPORTED_TOOLS",
    "FakeCollector",
    "HostileLog",
    "RecordingTransport",
    "client_files",
    "error_messages",
    "hostile_requests",
    "plant_and_fail",
]

#: The tools whose latest failure is reported, plus ``None``: "the latest failure".
#: One report per failing tool, at most the weekly bound of one installation (8): a 9th
#: would be refused as ``weekly_limit``, and every report here must travel.
REPORTED_TOOLS: tuple[str | None, ...] = (
    "read_note",
    "read_file",
    "send_email",
    "list_notes",
    "recipe_run",
    "save_cloud_skill",
    "no_such_tool",
    None,
)
assert len(REPORTED_TOOLS) <= WEEKLY_SIGNAL_LIMIT


class RecordingTransport(httpx.HTTPTransport):
    """A real HTTP transport that keeps (method, path, headers + body) of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str, bytes]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        head = "\n".join(f"{k}: {v}" for k, v in request.headers.items()).encode()
        self.requests.append((request.method, request.url.path, head + b"\n\n" + body))
        return super().handle_request(request)

    def signals_wire(self) -> bytes:
        """Everything sent to ``/v1/signals`` (Cloud Skill calls carry content by design)."""
        return b"\n".join(data for _, path, data in self.requests if path == "/v1/signals")


class FakeCollector(httpx.MockTransport):
    """An in-memory collector: keeps every request body; answers 200, or refuses when down."""

    def __init__(self, *, reachable: bool = True) -> None:
        super().__init__(self._answer)
        self.reachable = reachable
        self.bodies: list[bytes] = []

    def _answer(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.content)
        if not self.reachable:
            raise httpx.ConnectError("down")
        return httpx.Response(200, json={"accepted": 1, "duplicates": 0})

    @property
    def wire(self) -> bytes:
        return b"\n".join(self.bodies)


def client_files(rt: Runtime) -> dict[str, bytes]:
    """The client's signal files by name (empty when absent)."""
    paths = (rt.home.outbox, rt.home.sent_log, rt.home.last_failure)
    return {p.name: p.read_bytes() if p.exists() else b"" for p in paths}


def _mail(rt: Runtime, sender: str, body: str, subject: str) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "me@example.org", subject
    msg.set_content(body)
    Maildirs(rt.home.maildir).deliver("INBOX", msg.as_bytes())


def plant_and_fail(rt: Runtime, c: Mapping[CanaryKind, Canary]) -> list[ToolResult]:
    """Plant every canary where user data goes, fail in every way, report. Returns every result."""
    host = rt.host
    title, body = c[CanaryKind.note_title].text, c[CanaryKind.long_unicode].text
    mail_body, email = c[CanaryKind.mail_body].text, c[CanaryKind.email].text
    name, param = c[CanaryKind.recipe_name].text, c[CanaryKind.param_value].text
    token, account = c[CanaryKind.bearer_token].text, c[CanaryKind.account]
    mac, win = c[CanaryKind.home_path_macos].text, c[CanaryKind.home_path_windows].text
    number = c[CanaryKind.large_number].number or 10**15
    stored = f"docs/{account.marker}.txt"
    _mail(rt, email, mail_body, title)
    calls: list[tuple[str, dict[str, Any]]] = [
        # user data at rest: a note, a file
        ("create_note", {"note_name": title, "body": body}),
        ("write_file", {"path": stored, "content": mail_body, "confirm": True}),
        # not found / refused with the value in the argument
        ("read_note", {"note_name": email}),
        ("append_to_note", {"note_name": f"{title} (old)", "text": mail_body}),
        ("read_file", {"path": mac}),
        ("read_file", {"path": win}),
        ("search_files", {"query": account.text, "path": f"nowhere/{account.marker}"}),
        ("list_emails", {"query": email, "mailbox": title}),
        ("read_email", {"message_id": token}),
        ("get_datetime", {"timezone": account.text}),
        # invalid: wrong type, beyond a maximum, undeclared argument, value in a key
        ("list_notes", {"limit": number}),
        ("list_notes", {"limit": title}),
        ("send_email", {"to": [email], "subject": title, "body": mail_body, "bcc": token}),
        ("no_such_tool", {param: token, "path": mac}),
        # a preview: changed nothing
        ("send_email", {"to": [email], "subject": title, "body": mail_body}),
        # recipes: saved with values, run to a failing step, missing, refused
        (
            "recipe_save",
            {
                "manifest": {
                    "name": name,
                    "description": mac,
                    "params": [{"name": "who", "type": "string", "default": param}],
                    "steps": [
                        {"tool": "read_note", "args": {"note_name": title}},
                        {"tool": "read_note", "args": {"note_name": "${who}"}},
                    ],
                }
            },
        ),
        ("recipe_save", {"manifest": {"name": name, "steps": []}}),  # exists / invalid
        ("recipe_run", {"name": name, "params": {"who": param}, "confirm": True}),
        ("recipe_run", {"name": name, "params": {param: number}}),
        ("recipe_run", {"name": f"{name} (missing)"}),
        (
            "recipe_save",
            {
                "manifest": {
                    "name": f"{name} 2",
                    "steps": [{"tool": "create_note", "args": {"note_name": "t", "body": token}}],
                }
            },
        ),
        ("recipe_export", {"name": f"{name} 2"}),
        # Cloud Skills without a token: refused by the server, stored nowhere
        ("save_cloud_skill", {"name": name, "instructions": mail_body, "slug": account.marker}),
        ("recall_cloud_skill", {"query": email}),
    ]
    results = [host.dispatch(tool, args) for tool, args in calls]
    for tool in REPORTED_TOOLS:
        report: dict[str, Any] = {
            "friction_type": "cannot_complete",
            "intent_category": "other",
            "attempt_count": number,  # capped at 100: the number itself never travels
        }
        if tool is not None:
            report["tool_attempted"] = tool
        results.append(host.dispatch("report_friction", report))
    return results


def error_messages(results: list[ToolResult]) -> bytes:
    """What an agent reads when a call fails: every error (and failed recipe step) message."""
    out: list[str] = []
    for result in results:
        if result.error is not None:
            out.append(json.dumps(result.error.to_dict(), ensure_ascii=False))
        inner = result.result if isinstance(result.result, dict) else {}
        if isinstance(inner.get("error"), dict):
            out.append(json.dumps(inner["error"], ensure_ascii=False))
        for step in inner.get("steps", []) or []:
            if isinstance(step, dict) and isinstance(step.get("error"), dict):
                out.append(json.dumps(step["error"], ensure_ascii=False))
    return "\n".join(out).encode("utf-8", "surrogatepass")


@dataclass
class HostileLog:
    """The collector's answers to the hostile requests: status line, headers and body."""

    responses: list[bytes] = field(default_factory=list)

    def keep(self, response: httpx.Response) -> httpx.Response:
        head = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        self.responses.append(f"{response.status_code}\n{head}\n\n".encode() + response.content)
        return response

    def data(self) -> bytes:
        return b"\n".join(self.responses)


def _signal(**overrides: Any) -> dict[str, Any]:
    """A valid signal's wire JSON with ``overrides`` written over it (valid or not)."""
    doc = signal_json(
        **BARE, error_class="not_found", client={"version": "0.1.0", "platform": "linux"}
    )
    doc.update(overrides)
    return doc


def hostile_requests(
    http: httpx.Client, c: Mapping[CanaryKind, Canary], token: str, log: HostileLog
) -> None:
    """Canaries straight at the collector: every one must be refused or ignored, never kept."""
    email, secret = c[CanaryKind.email].text, c[CanaryKind.bearer_token].text
    note, mark = c[CanaryKind.note_title].text, c[CanaryKind.account].marker
    number = c[CanaryKind.large_number].number or 10**15
    team = {"authorization": f"Bearer {token}"}
    post = "/v1/signals"
    bodies: list[bytes] = [
        json.dumps({"signals": [_signal(note=note)]}).encode(),  # extra field
        json.dumps({"signals": [_signal(**{mark: 1})]}).encode(),  # value in a key
        json.dumps({"signals": [_signal(tool_attempted=email)]}).encode(),  # not a catalogue name
        json.dumps({"signals": [_signal(attempt_count=number)]}).encode(),  # out of bounds
        json.dumps({"signals": [_signal(client={"version": mark, "platform": "linux"})]}).encode(),
        json.dumps(
            {"signals": [_signal(args=[{"name": email, "type": "string", "size": "0"}])]}
        ).encode(),
        json.dumps({"signals": [_signal()], mark: secret}).encode(),  # extra envelope key
        f'{{"signals": [{{"note": "{note}"'.encode(),  # not JSON
    ]
    for body in bodies:
        log.keep(http.post(post, content=body, headers={"content-type": "application/json"}))
    # accepted signals whose request carries canaries in every place but the body
    identifying = {
        "user-agent": f"lmcp/9.9 ({email})",
        "x-forwarded-for": f"198.51.100.{number % 250}",
        "cookie": f"session={mark}",
        "referer": f"https://example.com/{mark}",
        "x-request-id": secret,
    }
    log.keep(http.post(f"{post}?user={mark}", json={"signals": [_signal()]}, headers=identifying))
    # the read API, the triage API and the dashboard, with canaries in tokens, paths, queries
    log.keep(http.get("/v1/signals/count", headers={"authorization": secret}))
    log.keep(http.get(f"/v1/signals/count?since={mark}", headers=team))
    log.keep(http.get(f"/v1/signals/export?format={mark}", headers=team))
    log.keep(http.get(f"/v1/triage/{mark}", headers=team))
    log.keep(http.get(f"/v1/triage/top?tool={mark}&k={number}&version={email}", headers=team))
    log.keep(http.post("/dashboard/login", data={"token": secret}, follow_redirects=True))
    cookie = {"cookie": f"lmcp_dashboard={secret.split()[-1]}"}
    log.keep(http.get(f"/dashboard/tool/{mark}", headers=cookie))
    log.keep(http.get(f"/{mark}/{email}?q={note}"))
    log.keep(http.get("/v1/skills", headers={"authorization": secret}))
