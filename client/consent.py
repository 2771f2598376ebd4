"""Consent: one gate, checked before a signal is built, failing closed.

Precedence, first match wins:

1. ``DO_NOT_TRACK`` set to anything but ``""``/``"0"``  -> OFF
2. ``LMCP_ANONYMOUS_SIGNALS=0`` -> OFF; ``=1`` -> ON; any other value -> OFF
3. ``settings.json`` under ``LMCP_HOME`` with ``"anonymous_signals": true`` -> ON
4. anything else -- no file, an unreadable or malformed file, a non-boolean value -> OFF

``enabled()`` is the first thing every ``report_friction`` call does. The settings file's
decision is cached asymmetrically, in the safe direction only:

- an OFF decision is reused for ``off_ttl_s`` (1 s) without touching the disk, so a refused
  report costs two dictionary look-ups and a clock read (a stale OFF can only delay a send);
- an ON decision is re-checked (``stat``; re-read when inode, size or mtime changed) on every
  call, so turning signals off from another process takes effect at once.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from client._files import atomic_write_bytes
from client.paths import LmcpHome

__all__ = ["ConsentGate", "ConsentSource", "ConsentStatus", "SETTINGS_KEY"]

SETTINGS_KEY = "anonymous_signals"


class ConsentSource(StrEnum):
    do_not_track = "DO_NOT_TRACK"
    env = "LMCP_ANONYMOUS_SIGNALS"
    settings = "settings file"
    no_settings = "no settings file (default: off)"
    unreadable = "settings file unreadable (fail closed: off)"


@dataclass(frozen=True, slots=True)
class ConsentStatus:
    enabled: bool
    source: ConsentSource


class ConsentGate:
    __slots__ = ("_cache_key", "_cache_status", "_environ", "_home", "_off_ttl", "_off_until")

    def __init__(
        self,
        home: LmcpHome,
        environ: Mapping[str, str] | None = None,
        *,
        off_ttl_s: float = 1.0,
    ) -> None:
        self._home = home
        self._environ = os.environ if environ is None else environ
        self._off_ttl = off_ttl_s
        self._off_until = 0.0
        self._cache_key: tuple[int, int, int] | None = None
        self._cache_status = ConsentStatus(False, ConsentSource.no_settings)

    def enabled(self) -> bool:
        env = self._environ
        dnt = env.get("DO_NOT_TRACK")
        if dnt and dnt != "0":
            return False
        flag = env.get("LMCP_ANONYMOUS_SIGNALS")
        if flag is not None:
            return flag == "1"
        return self._from_file().enabled

    def status(self) -> ConsentStatus:
        env = self._environ
        dnt = env.get("DO_NOT_TRACK")
        if dnt and dnt != "0":
            return ConsentStatus(False, ConsentSource.do_not_track)
        flag = env.get("LMCP_ANONYMOUS_SIGNALS")
        if flag is not None:
            return ConsentStatus(flag == "1", ConsentSource.env)
        return self._from_file()

    def set_enabled(self, on: bool) -> None:
        """Record the user's choice. Turning signals off purges everything queued."""
        path = self._home.settings
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict):
                doc = {}
        except (OSError, ValueError):
            doc = {}
        doc[SETTINGS_KEY] = bool(on)
        atomic_write_bytes(path, (json.dumps(doc, indent=2) + "\n").encode())
        self._cache_key = None
        self._off_until = 0.0
        if not on:
            from client.outbox import Outbox  # local: the outbox needs nothing from consent

            Outbox(self._home).purge()
            for stale in (self._home.last_failure,):
                try:
                    stale.unlink()
                except FileNotFoundError:
                    pass

    def _from_file(self) -> ConsentStatus:
        now = time.monotonic()
        if now < self._off_until:
            return self._cache_status  # a recent OFF: safe to reuse
        status = self._read_file()
        self._cache_status = status
        self._off_until = 0.0 if status.enabled else now + self._off_ttl
        return status

    def _read_file(self) -> ConsentStatus:
        path = self._home.settings
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._cache_key = None
            return ConsentStatus(False, ConsentSource.no_settings)
        except OSError:
            self._cache_key = None
            return ConsentStatus(False, ConsentSource.unreadable)
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key == self._cache_key:
            return self._cache_status
        try:
            doc = json.loads(path.read_bytes())
            value = doc.get(SETTINGS_KEY) if isinstance(doc, dict) else None
            status = (
                ConsentStatus(value, ConsentSource.settings)
                if isinstance(value, bool)
                else ConsentStatus(False, ConsentSource.unreadable)
            )
        except (OSError, ValueError):
            status = ConsentStatus(False, ConsentSource.unreadable)
        self._cache_key = key
        return status
