"""ToolHost: every tool call passes through here.

``dispatch`` validates the arguments against the tool's catalogue schema, calls the handler,
records (tool, outcome) in the ring, and on failure keeps a ``FailureContext`` that holds only
shapes. Values stop here: error messages name arguments and rules, never what was passed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from client.apps import AppProbe, StaticAppProbe
from client.capture import capture_args
from client.errors import ToolFailure
from client.ring import Ring
from contract.catalogue import Catalogue, Tool, load_catalogue
from contract.schema import AppState, ArgShape, ErrorClass, Outcome, RingEntry, ToolName

__all__ = [
    "FailureContext",
    "Handler",
    "Reply",
    "ToolError",
    "ToolHost",
    "ToolResult",
    "describe_validation_error",
]

log = logging.getLogger(__name__)

#: A handler takes the validated arguments and returns a JSON-able value or a ``Reply``.
Handler = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """What a handler returns when the outcome is not plainly ``ok``."""

    result: Any
    outcome: Outcome = Outcome.ok
    #: For a ``failed`` reply: how LMCP classifies it (kept in the FailureContext).
    error_class: ErrorClass | None = None


@dataclass(frozen=True, slots=True)
class ToolError:
    error_class: ErrorClass
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"class": self.error_class.value, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class FailureContext:
    """What LMCP keeps of a failed call: shapes and enums, never a value."""

    tool: ToolName
    error_class: ErrorClass
    args: tuple[ArgShape, ...]
    ring: tuple[RingEntry, ...]
    app: AppState


@dataclass(frozen=True, slots=True)
class ToolResult:
    tool: str
    outcome: Outcome
    result: Any = None
    error: ToolError | None = None
    #: True when a friction report can be offered to the user for this call.
    can_report_friction: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome in (Outcome.ok, Outcome.preview)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "outcome": self.outcome.value}
        if self.error is not None:
            out["error"] = self.error.to_dict()
        else:
            out["result"] = self.result
        # One hint per answer: a result that names its own (a stopped recipe names the step's
        # tool, whose failure is the one to report) is not given a second, different one.
        carries_own = isinstance(self.result, dict) and "friction" in self.result
        if self.can_report_friction and not carries_own:
            out["friction"] = {"can_report": True, "tool_attempted": self.tool}
        return out


def _declared(tool: Tool) -> Mapping[str, Any]:
    props: Mapping[str, Any] = tool.input_schema.get("properties", {})
    return props


def describe_validation_error(tool: Tool, error: ValidationError) -> str:
    """A message naming the argument and the rule, built only from the schema's own text."""
    props = _declared(tool)
    path = list(error.absolute_path)
    where = ""
    if path and isinstance(path[0], str) and path[0] in props:
        where = f"argument '{path[0]}'"
        for part in path[1:]:
            where += f"[{part}]" if isinstance(part, int) else ".<key>"
    rule = str(error.validator)
    expected: Any = error.validator_value
    if rule == "required":
        missing = [
            r for r in expected if isinstance(error.instance, dict) and r not in error.instance
        ]
        return f"missing required argument '{missing[0] if missing else '?'}'"
    if rule == "anyOf" and not path:
        options = [" + ".join(o.get("required", [])) for o in expected if isinstance(o, dict)]
        return "needs one of: " + ", ".join(f"'{o}'" for o in options)
    target = where or "arguments"
    if rule == "enum" and isinstance(expected, list):  # the schema's own values, never the input
        return f"{target} breaks rule 'enum': must be one of: " + ", ".join(map(str, expected))
    explain = {
        "type": f"must be of type {expected}",
        "enum": "must be one of the values the schema lists",
        "minLength": f"must be at least {expected} characters",
        "maxLength": f"must be at most {expected} characters",
        "minimum": f"must be >= {expected}",
        "maximum": f"must be <= {expected}",
        "minItems": f"must have at least {expected} items",
        "maxItems": f"must have at most {expected} items",
        "pattern": "does not match the required pattern",
    }.get(rule, "is not valid")
    return f"{target} breaks rule '{rule}': {explain}"


class ToolHost:
    """Dispatches tool calls, keeps the ring and the latest failure of each tool."""

    def __init__(
        self,
        handlers: Mapping[str, Handler] | None = None,
        *,
        catalogue: Catalogue | None = None,
        ring: Ring | None = None,
        app_probe: AppProbe | None = None,
        on_failure: Callable[[FailureContext], None] | None = None,
    ) -> None:
        self.catalogue = catalogue or load_catalogue()
        self.ring = ring or Ring()
        self.app_probe: AppProbe = app_probe or StaticAppProbe()
        self._handlers: dict[str, Handler] = dict(handlers or {})
        self._validators: dict[str, Draft202012Validator] = {}
        self._failures: dict[ToolName, FailureContext] = {}
        self._last_failure: FailureContext | None = None
        self._listeners: list[Callable[[FailureContext], None]] = []
        self._lane: _ListenerLane | None = None
        if on_failure is not None:
            self._listeners.append(on_failure)

    # -- registration ---------------------------------------------------------------------
    def register(self, name: str, handler: Handler) -> None:
        if name not in self.catalogue:
            raise KeyError(f"not a catalogue tool: {name}")
        self._handlers[name] = handler

    def register_all(self, handlers: Mapping[str, Handler]) -> None:
        for name, handler in handlers.items():
            self.register(name, handler)

    def add_failure_listener(self, listener: Callable[[FailureContext], None]) -> None:
        """Call ``listener`` with every new FailureContext (it must not raise; if it does,
        the error is logged by type only and the host carries on)."""
        self._listeners.append(listener)

    # -- failures -------------------------------------------------------------------------
    def failure_for(self, tool: str) -> FailureContext | None:
        """The latest failure of ``tool`` (any name; outside the catalogue means ``other``)."""
        return self._failures.get(self.catalogue.tool_name(tool))

    def forget_failure(self, ctx: FailureContext) -> None:
        """Drop ``ctx`` once it has been reported, so one failure is not reported twice."""
        if self._failures.get(ctx.tool) is ctx:
            del self._failures[ctx.tool]
        if self._last_failure is ctx:
            self._last_failure = None

    @property
    def last_failure(self) -> FailureContext | None:
        return self._last_failure

    # -- dispatch -------------------------------------------------------------------------
    def validate(self, tool: Tool, args: Mapping[str, Any]) -> str | None:
        """None when ``args`` are valid for ``tool``; else a value-free reason."""
        props = _declared(tool)
        undeclared = sum(1 for key in args if key not in props)
        if undeclared:
            # Names come from the schema only: an undeclared key is the caller's and may be a value.
            takes = ", ".join(f"'{p}'" for p in props) or "no arguments"
            message = (
                f"{undeclared} argument(s) not declared by tool '{tool.name}'; it takes {takes}"
            )
            required = tool.input_schema.get("required", [])
            missing = [r for r in required if isinstance(r, str) and r not in args]
            if missing:
                message += "; missing required " + ", ".join(f"'{r}'" for r in missing)
            return message
        validator = self._validators.get(tool.name)
        if validator is None:
            validator = Draft202012Validator(dict(tool.input_schema))
            self._validators[tool.name] = validator
        error = next(iter(sorted(validator.iter_errors(args), key=_error_rank)), None)
        return None if error is None else describe_validation_error(tool, error)

    def dispatch(self, name: str, args: Mapping[str, Any] | None = None) -> ToolResult:
        args = {} if args is None else args
        tool = self.catalogue.get(name)
        refusal = self._refusal(tool, name, args)
        if refusal is not None:
            return self._failed(tool, name, args, refusal)
        assert tool is not None  # a call _refusal lets through names a catalogue tool
        try:
            out = self._handlers[name](args)
        except ToolFailure as failure:
            return self._failed(tool, name, args, _Refusal.of(failure))
        except Exception as exc:  # a bug: never let its text (it may hold a value) escape
            log.error("tool %s raised %s", name, type(exc).__name__)
            return self._failed(tool, name, args, _INTERNAL_ERROR)
        if not isinstance(out, Reply):
            self.ring.record(tool.ring_entries[Outcome.ok])
            return ToolResult(name, Outcome.ok, out)
        outcome = out.outcome
        self.ring.record(tool.ring_entries[outcome])
        if outcome is Outcome.empty:
            self._keep_failure(tool, args, ErrorClass.empty_result)
            return ToolResult(name, outcome, out.result, can_report_friction=True)
        if outcome is Outcome.failed or outcome is Outcome.invalid:
            # A structured failure (e.g. a recipe that stopped): the result explains it.
            self._keep_failure(tool, args, out.error_class or ErrorClass.step_failed)
            return ToolResult(name, outcome, out.result, can_report_friction=True)
        return ToolResult(name, outcome, out.result)

    def _refusal(self, tool: Tool | None, name: str, args: object) -> _Refusal | None:
        """Why the call cannot reach a handler (no such tool, bad arguments, no handler)."""
        if tool is None:
            return _UNKNOWN_TOOL
        if not isinstance(args, Mapping):
            return _NOT_AN_OBJECT
        problem = self.validate(tool, args)
        if problem is not None:
            return _Refusal(ToolError(ErrorClass.invalid_arguments, "invalid_arguments", problem))
        if name not in self._handlers:
            return _NOT_AVAILABLE
        return None

    def _failed(self, tool: Tool | None, name: str, args: object, refusal: _Refusal) -> ToolResult:
        """The one way a call ends in an error: ring, FailureContext, a value-free answer."""
        entries = tool.ring_entries if tool is not None else self.catalogue.other_ring_entries
        self.ring.record(entries[refusal.outcome])
        kept = args if isinstance(args, Mapping) else {}  # not an object: no argument to shape
        self._keep_failure(tool, kept, refusal.error.error_class)
        shown = name if tool is not None else ToolName.other.value
        return ToolResult(shown, refusal.outcome, None, refusal.error, True)

    #: Failures of these tools are not kept: reporting friction is never about reporting itself.
    UNREPORTED_TOOLS = frozenset({"report_friction"})

    def _keep_failure(
        self, tool: Tool | None, args: Mapping[str, Any], error_class: ErrorClass
    ) -> None:
        if tool is not None and tool.name in self.UNREPORTED_TOOLS:
            return
        app = self.app_probe.state(tool.app) if tool is not None else AppState()
        ctx = FailureContext(
            tool=tool.tool_name if tool is not None else ToolName.other,
            error_class=error_class,
            args=capture_args(tool, args),
            ring=self.ring.snapshot(),
            app=app,
        )
        self._failures[ctx.tool] = ctx
        self._last_failure = ctx
        if self._listeners:
            lane = self._lane
            if lane is not None:
                lane.submit(ctx)
            else:
                self._tell_listeners(ctx)

    def _tell_listeners(self, ctx: FailureContext) -> None:
        for listener in self._listeners:
            try:
                listener(ctx)
            except Exception as exc:  # a listener never breaks the host
                log.warning("failure listener raised %s", type(exc).__name__)

    @contextlib.contextmanager
    def listeners_off_the_call_path(self) -> Iterator[None]:
        """While inside: failure listeners run on one background thread, after the call has
        answered (a listener may write a file and fsync it; a tool call never waits for it).
        A listener then sees the LATEST failure, at most once per ``settle_s``: one
        superseded before its turn is skipped. On leaving, a failure not yet told is told."""
        lane = _ListenerLane(self._tell_listeners)
        self._lane = lane
        try:
            yield
        finally:
            self._lane = None
            lane.close()


@dataclass(frozen=True, slots=True)
class _Refusal:
    """How a call that did not succeed ends: its value-free error and its outcome."""

    error: ToolError
    outcome: Outcome = Outcome.invalid

    @classmethod
    def of(cls, failure: ToolFailure) -> _Refusal:
        return cls(ToolError(failure.error_class, failure.code, failure.message), failure.outcome)


_UNKNOWN_TOOL = _Refusal(
    ToolError(ErrorClass.unknown_tool, "unknown_tool", "no such tool in the LMCP catalogue")
)
_NOT_AN_OBJECT = _Refusal(
    ToolError(ErrorClass.invalid_arguments, "invalid_arguments", "arguments must be an object")
)
_NOT_AVAILABLE = _Refusal(
    ToolError(
        ErrorClass.unavailable,
        "not_available",
        "this tool is not available in this installation",
    ),
    Outcome.failed,
)
_INTERNAL_ERROR = _Refusal(
    ToolError(ErrorClass.internal_error, "internal_error", "the tool failed unexpectedly"),
    Outcome.failed,
)


class _ListenerLane:
    """One daemon thread telling the listeners of the latest FailureContext, at most once per
    ``settle_s``: a burst of failures (an agent retrying) is written down once, not per call."""

    def __init__(self, tell: Callable[[FailureContext], None], settle_s: float = 0.2) -> None:
        self._tell = tell
        self._settle_s = settle_s
        self._cond = threading.Condition()
        self._pending: FailureContext | None = None
        self._open = True
        self._settling = False  # between a failure and its telling: later ones just replace it
        self._thread = threading.Thread(target=self._run, name="lmcp-failure-lane", daemon=True)
        self._thread.start()

    def submit(self, ctx: FailureContext) -> None:
        with self._cond:
            self._pending = ctx
            if not self._settling:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and self._open:
                    self._cond.wait()
                # Let a burst settle (only its last failure is told); closing ends the wait.
                self._settling = True
                deadline = time.monotonic() + self._settle_s
                while self._open and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(left)
                self._settling = False
                ctx, self._pending = self._pending, None
            if ctx is None:
                return  # closed, and nothing left to tell
            self._tell(ctx)

    def close(self) -> None:
        with self._cond:
            self._open = False
            self._cond.notify()
        self._thread.join()


def _error_rank(error: ValidationError) -> tuple[int, int]:
    # Prefer shallow, specific errors: 'required' before nested type errors, etc.
    return (len(error.absolute_path), 0 if error.validator == "required" else 1)
