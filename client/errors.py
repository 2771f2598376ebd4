"""The client's errors.

    LmcpError
    └── ToolFailure        a tool could not do its work (classified, value-free message)

A message in any of these must never hold an argument value, a note, file or mail content, a
path or a name the user typed: it is shown to agents, kept in results, and may be logged.
Telemetry (consent, sender, outbox) never raises at all: it returns results.
"""

from __future__ import annotations

from contract.schema import ErrorClass, Outcome

__all__ = ["LmcpError", "ToolFailure"]


class LmcpError(Exception):
    """Base of the client's errors."""


class ToolFailure(LmcpError):
    """Raised by a tool handler: the call failed for a reason LMCP understands."""

    def __init__(
        self,
        error_class: ErrorClass,
        message: str,
        *,
        code: str | None = None,
        outcome: Outcome = Outcome.failed,
    ) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        #: A stable, tool-specific code (e.g. ``recipe_exists``); defaults to the class.
        self.code = code or error_class.value
        self.outcome = outcome
