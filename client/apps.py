"""App state: is the app behind a tool installed, running and permitted?

``AppProbe`` is the extension point. ``FileAppProbe`` reads ``LMCP_HOME/apps.json`` (Linux,
tests, the demo). The macOS probe (NSWorkspace / TCC) and the Windows probe (the registry's
App Paths and the process list) are documented in ``docs/architecture.md`` and plug in here.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Protocol

from contract.schema import AppState

__all__ = ["LMCP_APPS", "AppProbe", "FileAppProbe", "StaticAppProbe"]

#: Apps that are LMCP itself: their state is not applicable and stays unknown.
LMCP_APPS = frozenset({"lmcp", "system", "recipes", "cloud_skills"})
_UNKNOWN = AppState()
#: How old a file's modification time must be before its parse is reused (file times move in
#: ticks of a few milliseconds; a second leaves room for any file system's).
_RACY_NS = 1_000_000_000


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

    A missing or unreadable file, or a non-boolean value, means unknown. Every tool call of an
    app asks (a failing one twice), so the file is parsed again only when its inode, size or
    modification time changed: a ``stat`` per question instead of a read and a parse. A file
    changed less than ``_RACY_NS`` before it was read is read again each time: file times are
    coarse, and a rewrite of the same size within one tick would otherwise go unseen.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._key: tuple[int, int, int] | None = None
        self._states: dict[str, AppState] = {}

    def state(self, app: str) -> AppState:
        if app in LMCP_APPS:
            return _UNKNOWN
        return self._read().get(app, _UNKNOWN)

    def _read(self) -> dict[str, AppState]:
        try:
            st = os.stat(self._path)
        except OSError:
            self._key = None
            return {}
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key != self._key:
            self._states = _parse(self._path)
            settled = time.time_ns() - st.st_mtime_ns > _RACY_NS
            self._key = key if settled else None
        return self._states


def _parse(path: Path) -> dict[str, AppState]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}

    def flag(entry: dict[str, object], key: str) -> bool | None:
        value = entry.get(key)
        return value if isinstance(value, bool) else None

    return {
        app: AppState(
            installed=flag(entry, "installed"),
            running=flag(entry, "running"),
            permitted=flag(entry, "permitted"),
        )
        for app, entry in doc.items()
        if isinstance(app, str) and isinstance(entry, dict)
    }
