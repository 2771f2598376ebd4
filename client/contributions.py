"""The daily contribution bound, enforced before a signal is built or queued.

One installation sends at most one signal per (tool, error class, friction type) per UTC day,
and at most ``limit`` in all (``contract.privacy``: the published bound). The counter is one
small JSON file under ``LMCP_HOME`` holding only today's date and the keys used -- enum names,
never a value -- replaced atomically under an inter-process lock, so two processes (the MCP
server and the CLI) share one budget and a crash leaves the old file or the new one.

A claim is written BEFORE the signal is built: a crash after it loses a signal, never sends one
over the bound. A file that cannot be read fails closed: the rest of that day is spent.
"""

from __future__ import annotations

import datetime as dt
import json
from enum import StrEnum
from typing import TYPE_CHECKING

from client._files import atomic_write_bytes, file_lock
from client.paths import LmcpHome
from contract.limits import DAILY_SIGNAL_LIMIT

if TYPE_CHECKING:  # names only: ``lmcp signals status`` reads the budget without pydantic
    from contract.schema import ErrorClass, FrictionType, ToolName

__all__ = ["LIMIT_SETTING", "ContributionBudget", "Refusal", "contribution_key"]

#: The ``settings.json`` key that lowers the daily limit (values above the bound are ignored).
LIMIT_SETTING = "daily_signal_limit"


class Refusal(StrEnum):
    """Why a report was not turned into a signal (the ``reason`` ``report_friction`` answers)."""

    daily_duplicate = "daily_duplicate"  # this (tool, error class, friction type) already today
    daily_limit = "daily_limit"  # the installation's signals for today are spent


def contribution_key(tool: ToolName, error_class: ErrorClass, friction: FrictionType) -> str:
    """The cell a signal adds to: three enum names, no value."""
    return f"{tool.value}/{error_class.value}/{friction.value}"


class ContributionBudget:
    def __init__(self, home: LmcpHome, *, limit: int | None = None) -> None:
        """``limit``: fixed for tests; None reads ``daily_signal_limit`` from the settings."""
        self._home = home
        self._fixed = limit
        self._path = home.contributions
        self._lock = home.root / ".contributions.lock"

    @property
    def limit(self) -> int:
        """Today's limit: the setting, or the published bound; never above the bound."""
        wanted = self._fixed if self._fixed is not None else _setting(self._home)
        return max(0, min(wanted, DAILY_SIGNAL_LIMIT))

    def claim(self, key: str, day: dt.date) -> Refusal | None:
        """Spend one of ``day``'s signals on ``key``; None when allowed, else why not."""
        limit = self.limit
        with file_lock(self._lock):
            used, full = self._load(day)
            if key in used:
                return Refusal.daily_duplicate
            if full or len(used) >= limit:
                return Refusal.daily_limit
            self._store(day, [*used, key], full=False)
            return None

    def used(self, day: dt.date) -> int:
        """How many of ``day``'s signals are spent (the limit when the file is unreadable).

        Read-only: no lock, no file is created (``lmcp signals status`` calls it)."""
        used, full = self._load(day, repair=False)
        return self.limit if full else min(len(used), self.limit)

    def _load(self, day: dt.date, *, repair: bool = True) -> tuple[list[str], bool]:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return [], False
        except OSError:
            return [], True
        try:
            doc = json.loads(raw)
            keys = doc["keys"]
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise ValueError("keys")
            stored_day = dt.date.fromisoformat(doc["day"])
        except (ValueError, KeyError, TypeError):
            # Unreadable: today is spent (fail closed); the file says so from now on.
            if repair:
                self._store(day, [], full=True)
            return [], True
        if stored_day != day:
            return [], False  # a new day starts empty; the old keys are overwritten
        return keys, bool(doc.get("full", False))

    def _store(self, day: dt.date, keys: list[str], *, full: bool) -> None:
        doc: dict[str, object] = {"day": day.isoformat(), "keys": keys}
        if full:
            doc["full"] = True
        atomic_write_bytes(self._path, json.dumps(doc).encode())


def _setting(home: LmcpHome) -> int:
    try:
        doc = json.loads(home.settings.read_bytes())
        value = doc.get(LIMIT_SETTING, DAILY_SIGNAL_LIMIT) if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return DAILY_SIGNAL_LIMIT
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return DAILY_SIGNAL_LIMIT
