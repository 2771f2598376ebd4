"""``get_datetime``: the local date and time, or those of a named IANA zone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from client.errors import ToolFailure
from client.host import Handler
from contract.schema import ErrorClass

__all__ = ["make_get_datetime"]

Clock = Callable[[], datetime]


def _now_local() -> datetime:
    return datetime.now().astimezone()


def _offset(delta: timedelta | None) -> str:
    minutes = int((delta or timedelta()).total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


def make_get_datetime(clock: Clock = _now_local) -> Handler:
    """The ``get_datetime`` handler; ``clock`` returns an aware local time (injectable)."""

    def get_datetime(args: Mapping[str, Any]) -> dict[str, Any]:
        now = clock()
        zone_name = args.get("timezone")
        if isinstance(zone_name, str):
            try:
                now = now.astimezone(ZoneInfo(zone_name))
            except (ZoneInfoNotFoundError, ValueError):
                raise ToolFailure(
                    ErrorClass.invalid_arguments,
                    "argument 'timezone' is not a known IANA time zone",
                    code="unknown_timezone",
                ) from None
            label = zone_name
        else:
            label = now.tzname() or "local"
        return {
            "iso": now.isoformat(timespec="seconds"),
            "date": now.date().isoformat(),
            "time": now.time().isoformat(timespec="seconds"),
            "weekday": now.strftime("%A"),
            "timezone": label,
            "utc_offset": _offset(now.utcoffset()),
        }

    return get_datetime
