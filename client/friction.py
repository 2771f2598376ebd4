"""``report_friction``: build an anonymous signal from the agent's enums and LMCP's own facts.

Order matters: consent is checked FIRST -- when it is off, nothing is built, written or sent and
no connection is opened. Then the input is validated (strict: the spec's enums, no unknown
keys) and the weekly contribution bound is claimed for the day the signal will carry
(``client/contributions.py``): a report over it answers its own reason and nothing is built.
Only then is the signal built, with that day, from the ``FailureContext`` (shapes only, the
agent's attempt count as a bucket). In local-only mode it
is kept in the local log and never uploaded; when on, it is sent in the call and queued in the
outbox if the collector cannot be reached.

Consent is also asked again wherever the report acts after that first check, because the user
may turn signals off while it runs (the budget's claim alone waits for a file lock and an
fsync): right before every POST (``client.sender``), and right AFTER anything is kept -- the
outbox (``queue_while_allowed``), the local log, the latest failure -- undoing it as ``off``
does. ``ConsentGate.set_mode`` records the choice before it purges, so whichever of the two
comes second sees the other.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_json

from client._files import atomic_write_bytes
from client.collector_url import url_problem
from client.consent import LOCAL, OFF, ConsentGate
from client.contributions import ContributionBudget, contribution_key
from client.delivery import BackgroundDelivery, drain_outbox, queue_while_allowed
from client.errors import ToolFailure
from client.host import FailureContext, ToolHost
from client.outbox import Outbox, OutboxUnwritable
from client.paths import LmcpHome
from client.sender import Delivery, Sender
from client.sentlog import SentLog
from contract.days import utc_today
from contract.schema import (
    SCHEMA_VERSION,
    AppState,
    ArgShape,
    ClientInfo,
    ErrorCategory,
    ErrorClass,
    FrictionSignal,
    FrictionType,
    IntentCategory,
    Platform,
    RingEntry,
    ToolName,
    attempts_bucket,
)
from contract.version import package_version

__all__ = ["FrictionReporter", "ReportInput", "build_signal", "default_client_info"]

log = logging.getLogger(__name__)
#: What ``FrictionSignal(**fields)`` runs: the model's validator, here without ``__init__``.
_validate_signal = FrictionSignal.__pydantic_validator__.validate_python


class ReportInput(BaseModel):
    """The ``report_friction`` input, exactly the spec's schema."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    friction_type: FrictionType
    error_category: ErrorCategory | None = None
    intent_category: IntentCategory | None = None
    tool_attempted: str | None = None
    attempt_count: int | None = None


#: What ``ReportInput.model_validate_json`` runs (JSON mode, the model's strict config), called
#: without its keyword defaults (report_friction's hot path: docs/mcp.md).
_validate_input = ReportInput.__pydantic_validator__.validate_json


def default_client_info() -> ClientInfo:
    platform = {"darwin": Platform.macos, "win32": Platform.windows}.get(
        sys.platform, Platform.linux
    )
    return ClientInfo(version=package_version(), platform=platform)


def build_signal(
    request: ReportInput,
    context: FailureContext | None,
    *,
    tool: ToolName,
    client: ClientInfo,
    day: dt.date,
    ring: tuple[RingEntry, ...] = (),
    app: AppState | None = None,
) -> FrictionSignal:
    """A signal from enums and shapes. Pure apart from the random ``signal_id``.

    Validated by the model's own validator, as ``FrictionSignal(...)`` is (strict: every field
    is the contract's), called with the fields' dict, without ``BaseModel.__init__``'s
    keywords (report_friction's hot path: docs/mcp.md)."""
    fields = {
        "schema_version": SCHEMA_VERSION,
        "signal_id": uuid.uuid4(),
        "day": day,
        "friction_type": request.friction_type,
        "error_category": request.error_category,
        "intent_category": request.intent_category,
        "tool_attempted": tool,
        "attempts": attempts_bucket(request.attempt_count),
        "error_class": context.error_class if context else ErrorClass.no_failure,
        "args": context.args if context else (),
        "ring": context.ring if context else ring,
        "app": context.app if context else (app or AppState()),
        "client": client,
    }
    signal: FrictionSignal = _validate_signal(fields)
    return signal


#: The types whose JSON ``to_json`` writes as ``json.dumps`` does (the same value parsed back);
#: a float is not one (``to_json`` writes NaN as null, ``json.dumps`` as NaN).
_PLAIN_VALUES = frozenset({str, int, bool, type(None)})
_STR = frozenset({str})


def _as_json(args: dict[str, Any]) -> str | bytes:
    """``json.dumps(args)``, or JSON of the same value written by pydantic-core (sooner)
    when every key is a ``str`` and every value a ``str``, ``int``, ``bool`` or None: what an
    agent's ``report_friction`` arguments are. Anything else, or what ``to_json`` cannot write
    (a lone surrogate), is ``json.dumps``'s to judge: its TypeError or ValueError say "not JSON"."""
    if _STR.issuperset(map(type, args)) and _PLAIN_VALUES.issuperset(map(type, args.values())):
        try:
            return to_json(args)
        except ValueError:
            pass
    return json.dumps(args)


def _describe(error: ValidationError) -> str:
    """Name the argument (only a declared one: an unknown key may itself be a value) and rule."""
    first = error.errors(include_input=False, include_url=False)[0]
    loc = first["loc"]
    if loc and loc[0] in ReportInput.model_fields:
        return f"argument '{loc[0]}' breaks rule '{first['type']}'"
    return f"an undeclared argument breaks rule '{first['type']}'"


class FrictionReporter:
    def __init__(
        self,
        home: LmcpHome,
        host: ToolHost,
        consent: ConsentGate,
        sender: Sender,
        *,
        outbox: Outbox | None = None,
        sent_log: SentLog | None = None,
        budget: ContributionBudget | None = None,
        client: ClientInfo | None = None,
        today: Callable[[], dt.date] = utc_today,
        delivery: BackgroundDelivery | None = None,
    ) -> None:
        self._home = home
        self._host = host
        self._consent = consent
        self._sender = sender
        self._outbox = outbox or Outbox(home)
        self._log = sent_log or SentLog(home)
        self._budget = budget or ContributionBudget(home)
        self._client = client or default_client_info()
        self._today = today
        self._delivery = delivery

    @property
    def client(self) -> ClientInfo:
        return self._client

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.report(args)

    @property
    def budget(self) -> ContributionBudget:
        return self._budget

    def report(self, args: Mapping[str, Any]) -> dict[str, Any]:
        mode = self._consent.mode()
        if mode is OFF:
            return {"sent": False, "reason": "anonymous_signals_off"}
        request, tool, context, app = self._resolve(args)
        day = self._today()
        error_class = context.error_class if context else ErrorClass.no_failure
        key = contribution_key(tool, error_class, request.friction_type)
        refusal = self._budget.claim(key, day)
        if refusal is not None:
            return {"sent": False, "reason": refusal.value}
        signal = self._build(request, tool, context, app, day)
        if context is not None:
            self._host.forget_failure(context)
        if mode is LOCAL:
            self._log.append("local", [signal])
            if self._consent.mode() is OFF:  # turned off meanwhile: forget it as `off` does
                self._log.forget_local()
                return {"sent": False, "reason": "anonymous_signals_off"}
            return {"sent": False, "reason": "local_only", "signal_id": str(signal.signal_id)}
        try:
            return self._deliver(signal)
        except OutboxUnwritable:  # only what is on disk is ever answered "queued"
            return {"sent": False, "queued": False, "reason": "outbox_unwritable"}

    def _withdrawn(self) -> dict[str, Any]:
        """The answer for a signal neither sent nor kept: signals were turned off (or to
        local-only) while it was being reported."""
        reason = "anonymous_signals_off" if self._consent.mode() is OFF else "local_only"
        return {"sent": False, "reason": reason}

    def _deliver(self, signal: FrictionSignal) -> dict[str, Any]:
        enabled = self._consent.enabled
        if url_problem(self._sender.url) is not None:
            # A mistyped URL would never deliver (or get a 404 and drop): keep it for a fixed URL.
            if not queue_while_allowed(self._outbox, [signal], enabled):
                return self._withdrawn()
            return {"sent": False, "queued": True, "reason": "collector_url_invalid"}
        # Background delivery: queued durably, the call waits a bounded few milliseconds.
        delivery = self._delivery
        result = delivery.submit(signal) if delivery else self._sender.send([signal])
        if result.status is Delivery.delivered:
            self._log.append("delivered", [signal])
            return {"sent": True, "signal_id": str(signal.signal_id)}
        if result.status is Delivery.rejected:
            self._log.append("rejected", [signal])
            return {"sent": False, "reason": "rejected_by_collector"}
        if result.status is Delivery.expired:  # the collector's clock says its week is closed
            self._log.append("expired", [signal])
            return {"sent": False, "reason": "day_out_of_window"}
        if result.status is Delivery.withdrawn:
            return self._withdrawn()
        if delivery is None and not queue_while_allowed(self._outbox, [signal], enabled):
            return self._withdrawn()
        return {"sent": False, "queued": True, "reason": "collector_not_reached"}

    def prepare(self, args: Mapping[str, Any]) -> tuple[FrictionSignal, FailureContext | None]:
        """Validate the input and build the signal (no I/O, no budget spent).

        Raises ToolFailure on bad input."""
        request, tool, context, app = self._resolve(args)
        return self._build(request, tool, context, app, self._today()), context

    def _resolve(
        self, args: Mapping[str, Any]
    ) -> tuple[ReportInput, ToolName, FailureContext | None, AppState | None]:
        """The validated input, the tool it names and LMCP's own facts about its failure."""
        try:
            # JSON mode: strict types, enums by their wire value.
            request: ReportInput = _validate_input(_as_json(dict(args)))
        except (TypeError, ValueError) as error:
            if not isinstance(error, ValidationError):
                raise ToolFailure(ErrorClass.invalid_arguments, "arguments are not JSON") from None
            raise ToolFailure(ErrorClass.invalid_arguments, _describe(error)) from None
        if request.attempt_count is not None and request.attempt_count < 1:
            raise ToolFailure(
                ErrorClass.invalid_arguments, "argument 'attempt_count' must be at least 1"
            )
        host = self._host
        if request.tool_attempted is not None:
            tool = host.catalogue.tool_name(request.tool_attempted)
            context = host.failure_for(request.tool_attempted)
        else:
            context = host.last_failure
            tool = context.tool if context else ToolName.other
        entry = host.catalogue.get(tool.value)
        app = host.app_probe.state(entry.app) if (context is None and entry) else None
        return request, tool, context, app

    def _build(
        self,
        request: ReportInput,
        tool: ToolName,
        context: FailureContext | None,
        app: AppState | None,
        day: dt.date,
    ) -> FrictionSignal:
        return build_signal(
            request,
            context,
            tool=tool,
            client=self._client,
            day=day,
            ring=self._host.ring.snapshot(),
            app=app,
        )

    def flush(self) -> dict[str, int]:
        """Deliver the outbox (``lmcp signals flush``). Consent off: nothing is sent.

        Signals too late for their week's release are dropped, never sent: ``expired`` counts
        them (the key is there only when some were)."""
        if not self._consent.enabled():
            return {"delivered": 0, "rejected": 0, "pending": 0}
        done = drain_outbox(self._outbox, self._sender, self._log)
        result = {"delivered": done.delivered, "rejected": done.rejected}
        if done.expired:
            result["expired"] = done.expired
        return {**result, "pending": len(self._outbox)}

    # -- the latest failure, kept on disk for `lmcp signals preview` -------------------------
    def remember_failure(self, context: FailureContext) -> None:
        """Host listener: keep the latest failure's shapes on disk (never when signals are off)."""
        if self._consent.mode() is OFF:
            return
        doc = {
            "tool": context.tool.value,
            "error_class": context.error_class.value,
            "args": [a.model_dump(mode="json") for a in context.args],
            "ring": [r.model_dump(mode="json") for r in context.ring],
            "app": context.app.model_dump(mode="json"),
        }
        atomic_write_bytes(self._home.last_failure, json.dumps(doc).encode())
        if self._consent.mode() is OFF:  # turned off meanwhile: forget it as `off` does
            self._home.last_failure.unlink(missing_ok=True)

    def preview(self) -> FrictionSignal | None:
        """The signal that would be sent for the latest failure (friction_type ``other``)."""
        try:
            doc = json.loads(self._home.last_failure.read_bytes())
            context = FailureContext(
                tool=ToolName(doc["tool"]),
                error_class=ErrorClass(doc["error_class"]),
                args=tuple(ArgShape.model_validate(a, strict=False) for a in doc["args"]),
                ring=tuple(RingEntry.model_validate(r, strict=False) for r in doc["ring"]),
                app=AppState.model_validate(doc["app"], strict=False),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        request = ReportInput(friction_type=FrictionType.other)
        return build_signal(
            request, context, tool=context.tool, client=self._client, day=self._today()
        )
