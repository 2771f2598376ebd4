"""The simulated fleet of ``make demo``: many LMCP clients running the REAL client code.

Each client has its own ``LMCP_HOME`` (notes, files, an ``apps.json`` for the app probe), a
platform and a version, and a consent choice: most turned anonymous signals on (as
``lmcp signals on`` does), some never did (the default is off), some set ``DO_NOT_TRACK=1`` or
``LMCP_ANONYMOUS_SIGNALS=0``. A client runs a few sessions of tool calls through
``runtime.host.dispatch`` -- missing notes and files, apps that are not running or not
permitted, invalid arguments, unknown tools, recipes whose steps fail -- and after a failure
the simulated agent offers ``report_friction``, which the user accepts most of the time.

Every HTTP request a client makes goes through a counting transport, so the demo can prove that
opted-out clients opened no connection at all.

One more client, a signed-in author (``run_author``), saves and recalls a Cloud Skill through the
real client tools: its requests go to the skills service (``LMCP_SKILLS_URL``), never the
collector.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from client.runtime import Runtime
from contract.schema import ClientInfo, Platform
from scripts._demo_server import HANG_S

__all__ = ["AuthorResult", "ClientPlan", "ClientResult", "plan_fleet", "run_author", "run_client"]

VERSIONS = (("1.2.0", 1), ("1.3.0", 2), ("1.3.1", 3), ("1.4.0", 4), ("1.4.1", 3))
PLATFORMS = ((Platform.macos, 55), (Platform.windows, 35), (Platform.linux, 10))
#: How a client's consent is set: on (settings file) or one of the ways of being off.
CONSENT = (("on", 78), ("never_asked", 10), ("do_not_track", 6), ("env_off", 6))
ACCEPT_REPORT = 0.8


@dataclass(frozen=True, slots=True)
class ClientPlan:
    index: int
    platform: Platform
    version: str
    consent: str
    sessions: int
    apps: dict[str, dict[str, bool]]
    seed: int

    @property
    def opted_in(self) -> bool:
        return self.consent == "on"


@dataclass(slots=True)
class ClientResult:
    plan: ClientPlan
    sent_ids: list[str] = field(default_factory=list)
    not_sent: int = 0
    #: Ids still in the outbox at the end (their answer did not arrive in time: maybe stored).
    queued_ids: list[str] = field(default_factory=list)
    #: Reports the weekly contribution bound refused (weekly_duplicate, weekly_limit,
    #: clock_moved_back): by design.
    bounded: int = 0
    requests: int = 0
    calls: int = 0
    failures: int = 0


class CountingTransport(httpx.BaseTransport):
    """Counts every request a client makes, then lets it through."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.count = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def _pick(rng: random.Random, weighted: tuple[tuple[Any, int], ...]) -> Any:
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


def plan_fleet(clients: int, seed: int) -> list[ClientPlan]:
    rng = random.Random(seed)
    plans = []
    for index in range(clients):
        platform = _pick(rng, PLATFORMS)
        apps = {
            "notes": {
                "installed": rng.random() > 0.04,
                "running": True,
                "permitted": rng.random() > (0.25 if platform is Platform.macos else 0.08),
            },
            "mail": {
                "installed": rng.random() > 0.05,
                "running": rng.random() > (0.30 if platform is Platform.windows else 0.10),
                "permitted": rng.random() > 0.08,
            },
            "files": {"installed": True, "running": True, "permitted": rng.random() > 0.05},
        }
        plans.append(
            ClientPlan(
                index=index,
                platform=platform,
                version=_pick(rng, VERSIONS),
                consent=_pick(rng, CONSENT),
                sessions=rng.randint(3, 7),
                apps=apps,
                seed=rng.randrange(2**32),
            )
        )
    return plans


# -- sessions: what a user's agent does -------------------------------------------------------
Session = Callable[[Runtime, random.Random, ClientPlan], "Report | None"]


@dataclass(frozen=True, slots=True)
class Report:
    """The simulated agent's report_friction arguments (enums only, as the spec asks)."""

    friction_type: str
    tool_attempted: str
    intent: str | None
    category: str | None
    attempts: int | None

    def args(self) -> dict[str, Any]:
        out: dict[str, Any] = {"friction_type": self.friction_type}
        if self.tool_attempted:
            out["tool_attempted"] = self.tool_attempted
        if self.intent:
            out["intent_category"] = self.intent
        if self.category:
            out["error_category"] = self.category
        if self.attempts:
            out["attempt_count"] = self.attempts
        return out


_CATEGORY = {
    "not_found": "not_found",
    "permission_denied": "permission",
    "app_not_installed": "missing_capability",
    "app_not_running": "permission",
    "invalid_arguments": "parse",
    "empty_result": "empty",
    "step_failed": "other",
    "unknown_tool": "missing_capability",
    "too_large": "other",
}


def _call(rt: Runtime, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = rt.host.dispatch(tool, args).to_dict()
    return out


def _failed(out: dict[str, Any]) -> str | None:
    error = out.get("error")
    if isinstance(error, dict):
        return str(error.get("class"))
    return "empty_result" if out.get("outcome") == "empty" else None


def _report_for(rng: random.Random, tool: str, error: str, intent: str, attempts: int) -> Report:
    friction = (
        "repeated_failure"
        if attempts > 1
        else rng.choice(
            ["cannot_complete", "cannot_complete", "workaround_needed", "task_abandoned"]
        )
    )
    return Report(
        friction, tool, intent if rng.random() > 0.15 else None,
        _CATEGORY.get(error) if rng.random() > 0.1 else None,
        attempts if rng.random() > 0.2 else None,
    )  # fmt: skip


def _notes(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    _call(rt, "list_notes", {})
    title = rng.choice(["Quarterly plan", "Groceries", "Trip ideas", "Reading list"])
    attempts = 0
    error = None
    for _ in range(rng.choice([1, 1, 2, 3])):
        attempts += 1
        error = _failed(_call(rt, "read_note", {"note_name": title}))
        if error is None:
            return None
    if error is None:
        return None
    return _report_for(rng, "read_note", error, "manage_note", attempts)


def _append(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    args: dict[str, Any] = {"note_name": "Groceries", "text": "x" * rng.choice([3, 40, 900])}
    if rng.random() < 0.25:
        args = {"text": ""}  # the agent forgot which note
    error = _failed(_call(rt, "append_to_note", args))
    return None if error is None else _report_for(rng, "append_to_note", error, "manage_note", 1)


def _files(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    _call(rt, "list_files", {"path": "."})
    path: Any = rng.choice(["reports/q3.pdf", "notes.txt", "drafts/letter.docx"])
    if rng.random() < 0.2:
        path = rng.choice([42, None, ["notes.txt"]])  # a confused agent
    error = _failed(_call(rt, "read_file", {"path": path}))
    return None if error is None else _report_for(rng, "read_file", error, "read_file", 1)


def _search(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    # 1.4 shipped a search the agents misuse: more empty results (the demo's "regression").
    newer = plan.version.startswith("1.4.")
    query = "zz-" + "q" * rng.choice([2, 30]) if newer else "invoice"
    if rng.random() < 0.5 and not newer:
        query = "notes"
    error = _failed(_call(rt, "search_files", {"query": query, "limit": 20}))
    return None if error is None else _report_for(rng, "search_files", error, "search_files", 1)


def _mail(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    out = _call(rt, "list_emails", {"mailbox": "INBOX", "limit": 10})
    error = _failed(out)
    if error is None:
        error = _failed(_call(rt, "read_email", {"message_id": "missing-message"}))
        if error is None:
            return None
        return _report_for(rng, "read_email", error, "read_email", 1)
    return _report_for(rng, "list_emails", error, "find_email", 1)


def _recipe(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    manifest = {
        "name": "Morning brief",
        "steps": [
            {"tool": "get_datetime", "args": {}},
            {"tool": "read_note", "args": {"note_name": "Daily agenda"}},
        ],
    }
    _call(rt, "recipe_save", {"manifest": manifest, "overwrite": True})
    error = _failed(_call(rt, "recipe_run", {"name": "Morning brief"}))
    return None if error is None else _report_for(rng, "recipe_run", error, "document_work", 1)


def _unknown(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    error = _failed(_call(rt, rng.choice(["open_calendar", "create_event"]), {"when": "today"}))
    if error is None:
        return None
    return Report("cannot_complete", "other", "schedule_event", "missing_capability", None)


def _fine(rt: Runtime, rng: random.Random, plan: ClientPlan) -> Report | None:
    _call(rt, "get_datetime", {})
    _call(rt, "create_note", {"note_name": f"Idea {rng.randrange(10**6)}", "body": "text"})
    _call(rt, "list_notes", {})
    return None


SESSIONS: tuple[tuple[Session, int], ...] = (
    (_notes, 5), (_append, 2), (_files, 4), (_search, 3), (_mail, 4), (_recipe, 2),
    (_unknown, 1), (_fine, 4),
)  # fmt: skip


def _seed_home(home: Path, plan: ClientPlan) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "apps.json").write_text(json.dumps(plan.apps), encoding="utf-8")
    files = home / "files"
    files.mkdir(exist_ok=True)
    (files / "notes.txt").write_text("shopping: milk, eggs\n", encoding="utf-8")


def run_client(plan: ClientPlan, root: Path, url: str) -> ClientResult:
    """One client's whole life: set consent, run its sessions, report some failures."""
    rng = random.Random(plan.seed)
    home = root / f"client-{plan.index:03d}"
    _seed_home(home, plan)
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}
    if plan.consent == "do_not_track":
        env["DO_NOT_TRACK"] = "1"
    elif plan.consent == "env_off":
        env["LMCP_ANONYMOUS_SIGNALS"] = "0"
    transport = CountingTransport()
    result = ClientResult(plan)
    runtime = Runtime.from_env(
        env,
        transport=transport,
        client_info=ClientInfo(version=plan.version, platform=plan.platform),
    )
    try:
        if plan.consent in ("on", "do_not_track"):
            runtime.consent.set_enabled(True)  # what `lmcp signals on` does
        for _ in range(plan.sessions):
            session = _pick(rng, SESSIONS)
            report = session(runtime, rng, plan)
            if report is None:
                continue
            result.failures += 1
            if rng.random() > ACCEPT_REPORT:
                continue  # the user declined the offer
            out = runtime.reporter.report(report.args())
            if out.get("reason") in ("weekly_duplicate", "weekly_limit", "clock_moved_back"):
                result.bounded += 1
            elif not (out.get("sent") or out.get("queued")):
                result.not_sent += 1
    finally:
        # What is queued is delivered now (the sender's bounded retries), and the background
        # delivery finishes the batch it is sending, however long a busy machine makes that:
        # Runtime.close waits 2 s, and a batch still in flight then reached the collector
        # uncounted (a delivery is idempotent: the collector drops a known signal_id).
        runtime.reporter.flush()
        if runtime.delivery is not None:
            runtime.delivery.close(timeout_s=HANG_S)
        runtime.close()
        transport.close()
    # Delivery happens in the background: what reached the collector is in the sent log, and
    # whatever the background could not deliver is still in the outbox.
    delivered = [e for e in runtime.sent_log.entries() if e.status == "delivered"]
    result.sent_ids = list(dict.fromkeys(str(e.signal["signal_id"]) for e in delivered))
    result.not_sent += len(runtime.outbox)
    result.queued_ids = [str(s.signal_id) for s in runtime.outbox.pending()]
    result.requests = transport.count
    return result


#: The author's skill (the demo's one; its slug is what the check looks for in the skills file).
AUTHOR_SKILL = {
    "name": "Release smoke test",
    "instructions": "Check the release notes, run the smoke test, report the result.",
    "description": "The team's release check",
    "slug": "release-smoke-test",
}


@dataclass(frozen=True, slots=True)
class AuthorResult:
    saved: bool
    recalled: bool
    revision: int | None


def run_author(root: Path, skills_url: str, token: str) -> AuthorResult:
    """A signed-in author saves the team's skill and recalls it, through the client tools.

    Signals are off for the author (the fleet's check counts the fleet's signals only)."""
    home = root / "author"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "LMCP_HOME": str(home),
        "LMCP_ANONYMOUS_SIGNALS": "0",
        "LMCP_SKILLS_URL": skills_url,
        "LMCP_SKILLS_TOKEN": token,
    }
    runtime = Runtime.from_env(env)
    try:
        saved = runtime.host.dispatch("save_cloud_skill", dict(AUTHOR_SKILL))
        recalled = runtime.host.dispatch("recall_cloud_skill", {"slug": AUTHOR_SKILL["slug"]})
    finally:
        runtime.close()
    data = saved.result.get("data", {}) if saved.ok and isinstance(saved.result, dict) else {}
    number = data.get("revision_number")
    return AuthorResult(saved.ok, recalled.ok, number if isinstance(number, int) else None)


def fleet_problems(results: list[ClientResult]) -> list[str]:
    """What the demos check of the fleet: an opted-out client made no request, and every
    opted-in client delivered every signal it reported."""
    problems = []
    for r in results:
        if not r.plan.opted_in and (r.sent_ids or r.requests):
            problems.append(f"opted-out client {r.plan.index} made {r.requests} request(s)")
        if r.plan.opted_in and r.not_sent:
            problems.append(f"client {r.plan.index} could not deliver {r.not_sent} signal(s)")
    return problems
