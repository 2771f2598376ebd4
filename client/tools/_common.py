"""What every built-in tool shares: the app check and value-free failures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from client.apps import AppProbe
from client.errors import ToolFailure
from client.host import Handler
from contract.schema import ErrorClass

__all__ = ["check_app", "guarded", "not_found", "opt_int", "opt_str"]


def check_app(probe: AppProbe, app: str) -> None:
    """Refuse the call when the probe marks ``app`` not installed, not permitted or not running.

    Unknown (``None``) is not a refusal: the tool tries and reports what really happens.
    """
    state = probe.state(app)
    if state.installed is False:
        raise ToolFailure(ErrorClass.app_not_installed, f"the {app} app is not installed")
    if state.permitted is False:
        raise ToolFailure(
            ErrorClass.permission_denied, f"LMCP is not permitted to use the {app} app"
        )
    if state.running is False:
        raise ToolFailure(ErrorClass.app_not_running, f"the {app} app is not running")


def guarded(probe: AppProbe, app: str, handler: Handler) -> Handler:
    """``handler`` preceded by the app check of ``app``."""

    def call(args: Mapping[str, Any]) -> Any:
        check_app(probe, app)
        return handler(args)

    call.__name__ = getattr(handler, "__name__", "handler")
    call.__doc__ = handler.__doc__
    return call


def not_found(what: str) -> ToolFailure:
    """The failure for a missing note, file, folder, mailbox or message (names no value)."""
    return ToolFailure(ErrorClass.not_found, f"no such {what}", code=f"{what}_not_found")


def opt_str(args: Mapping[str, Any], key: str, default: str | None = None) -> str | None:
    value = args.get(key, default)
    return value if isinstance(value, str) else default


def opt_int(args: Mapping[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default
