"""Where the client keeps its state: everything lives under one folder, ``LMCP_HOME``.

A test or a user isolates the client completely by pointing ``LMCP_HOME`` at a folder (the
process's settings, ``client.settings.ClientSettings.home``, say which).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["LmcpHome"]


@dataclass(frozen=True, slots=True)
class LmcpHome:
    root: Path

    def ensure(self) -> LmcpHome:
        self.root.mkdir(parents=True, exist_ok=True)
        return self

    @property
    def settings(self) -> Path:
        """Consent and other user settings (JSON)."""
        return self.root / "settings.json"

    @property
    def outbox(self) -> Path:
        """Signals waiting for delivery (JSON, bounded)."""
        return self.root / "outbox.json"

    @property
    def send_lock(self) -> Path:
        """Held around each POST (with the consent check before it) and around recording a
        choice: once ``lmcp signals off`` has recorded it, no POST starts."""
        return self.root / ".send.lock"

    @property
    def sent_log(self) -> Path:
        """What was sent, for ``lmcp signals log`` (JSON lines, bounded)."""
        return self.root / "sent.jsonl"

    @property
    def contributions(self) -> Path:
        """Today's date and the (tool, error class, friction type) keys used (JSON, no value)."""
        return self.root / "contributions.json"

    @property
    def last_failure(self) -> Path:
        """The latest failure's shapes, for ``lmcp signals preview`` (JSON, shapes only)."""
        return self.root / "last_failure.json"

    @property
    def apps(self) -> Path:
        """The app-state file read by ``FileAppProbe``."""
        return self.root / "apps.json"

    @property
    def notes(self) -> Path:
        return self.root / "notes"

    @property
    def files_root(self) -> Path:
        return self.root / "files"

    @property
    def maildir(self) -> Path:
        return self.root / "mail"

    @property
    def recipes(self) -> Path:
        return self.root / "recipes"
