"""App state: is the app behind a tool installed, running and permitted?

``AppProbe`` is the extension point. ``FileAppProbe`` reads ``LMCP_HOME/apps.json`` (Linux,
tests, the demo). The macOS probe (NSWorkspace / TCC) and the Windows probe (the registry's
App Paths and the process list) are documented in ``docs/architecture.md`` and plug in here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from contract.schema import AppState

__all__ = ["LMCP_APPS", "AppProbe", "FileAppProbe", "StaticAppProbe"]

#: Apps that are LMCP itself: their state is not applicable and stays unknown.
LMCP_APPS = frozenset({"lmcp", "system", "recipes", "cloud_skills"})
_UNKNOWN = AppState()


class AppProbe(Protocol):
    def state(self, app: str) -> AppState: ...


class StaticAppProbe:
    """A fixed mapping (for tests and simulations)."""

    def __init__(self, states: dict[str, AppState] | None = None) -> None:
        self._states = dict(states or {})

    def state(self, app: str) -> AppState:
        return self._states.get(app, _UNKNOWN)


class FileAppProbe:
    """Reads ``{"notes": {"installed": true, "running": true, "permitted": false}, ...}``.

    A missing or unreadable file, or a non-boolean value, means unknown.
    """

    def __init__(self, path: Path) -> None:
        self._path = path

    def state(self, app: str) -> AppState:
        if app in LMCP_APPS:
            return _UNKNOWN
        try:
            doc = json.loads(self._path.read_text(encoding="utf-8"))
            entry = doc.get(app) if isinstance(doc, dict) else None
        except (OSError, ValueError):
            return _UNKNOWN
        if not isinstance(entry, dict):
            return _UNKNOWN

        def flag(key: str) -> bool | None:
            value = entry.get(key)
            return value if isinstance(value, bool) else None

        return AppState(
            installed=flag("installed"), running=flag("running"), permitted=flag("permitted")
        )
