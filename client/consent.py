"""Consent: one gate, checked before a signal is built, failing closed.

The user's choice is a mode in ``settings.json`` under ``LMCP_HOME`` (``lmcp signals
off|local|on``): ``"anonymous_signals": "off" | "local" | "on"`` (``false``/``true`` from older
releases read as off/on). No file, an unreadable or malformed file, or any other value -> OFF.

- ``off``: nothing is built, kept or sent, and no connection is opened.
- ``local``: signals are built and kept on this machine for ``lmcp signals preview``/``log``;
  nothing is uploaded and no connection is opened.
- ``on``: signals are built and uploaded.

The environment can only RESTRICT that choice, never widen it: ``DO_NOT_TRACK`` set to anything
but ``""``/``"0"`` -> OFF; ``LMCP_ANONYMOUS_SIGNALS=0`` -> OFF, ``=1`` -> no restriction (the
settings file decides), any other value -> OFF. So a server started elsewhere (an MCP host's
``env`` block) can never send after the user said ``off``. That rule is :func:`env_restriction`;
the process's settings (``client.settings.ClientSettings``) apply it once, and the gate is
given its answer.

A process whose state folder is not the account's default folder (``LMCP_HOME``) follows the
lower of its folder's choice and the account's (``ClientSettings.account_home``): the choice
said in a plain shell holds for every folder (docs/consent.md). No file there restricts
nothing; an unreadable one restricts to OFF.

``mode()`` is the first thing every ``report_friction`` call does. The settings file's decision
is cached asymmetrically, in the safe direction only:

- an OFF decision is reused for ``off_ttl_s`` (1 s) without touching the disk, so a refused
  report costs two dictionary look-ups and a clock read (a stale OFF can only delay a signal);
- a LOCAL or ON decision is re-checked (``stat``; re-read when inode, size or mtime changed) on
  every call, so turning signals off from another process takes effect at once.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from client._files import atomic_write_bytes, file_lock
from client.paths import LmcpHome

__all__ = [
    "LOCAL",
    "MODE_ORDER",
    "OFF",
    "ON",
    "ConsentGate",
    "ConsentSource",
    "ConsentStatus",
    "SETTINGS_KEY",
    "SignalsMode",
    "env_restriction",
]

SETTINGS_KEY = "anonymous_signals"


class SignalsMode(StrEnum):
    """What ``report_friction`` may do: nothing, keep signals locally, or upload them."""

    off = "off"
    local = "local"
    on = "on"


class ConsentSource(StrEnum):
    do_not_track = "DO_NOT_TRACK"
    env = "LMCP_ANONYMOUS_SIGNALS"
    settings = "settings file"
    no_settings = "no settings file (default: off)"
    unreadable = "settings file unreadable (fail closed: off)"
    account = "your choice for this account, in its default folder"


@dataclass(frozen=True, slots=True)
class ConsentStatus:
    """The effective mode, what decided it, and the settings file's own mode."""

    mode: SignalsMode
    source: ConsentSource
    #: What the settings file says (what a server started without restricting env does).
    setting: SignalsMode = SignalsMode.off
    #: Why the settings file says it (the file, no file, or an unreadable file).
    setting_source: ConsentSource = ConsentSource.no_settings

    @property
    def enabled(self) -> bool:
        """Whether signals may be uploaded."""
        return self.mode is SignalsMode.on


#: The members as plain module constants: a member looked up on its Enum class is a slow
#: descriptor call, and the OFF path of every report must stay a handful of operations.
OFF = SignalsMode.off
LOCAL = SignalsMode.local
ON = SignalsMode.on
_LEGACY = {True: ON, False: OFF}
_NO_SETTINGS = ConsentStatus(SignalsMode.off, ConsentSource.no_settings)
_UNREADABLE = ConsentStatus(
    SignalsMode.off, ConsentSource.unreadable, SignalsMode.off, ConsentSource.unreadable
)


def env_restriction(environ: Mapping[str, str]) -> ConsentSource | None:
    """The variable that forces signals OFF in ``environ``, or None when it restricts nothing."""
    dnt = environ.get("DO_NOT_TRACK")
    if dnt and dnt != "0":
        return ConsentSource.do_not_track
    flag = environ.get("LMCP_ANONYMOUS_SIGNALS")
    if flag is not None and flag != "1":
        return ConsentSource.env  # "0" or an unknown value: fail closed
    return None


class _SettingsFile:
    """One ``settings.json``'s mode, re-read only when its inode, size or mtime changed."""

    __slots__ = ("_key", "_path", "_status")

    def __init__(self, home: LmcpHome) -> None:
        self._path = home.settings
        self._key: tuple[int, int, int] | None = None
        self._status = _NO_SETTINGS

    def forget(self) -> None:
        self._key = None

    def read(self) -> ConsentStatus:
        path = self._path
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._key = None
            return _NO_SETTINGS
        except OSError:
            self._key = None
            return _UNREADABLE
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key == self._key:
            return self._status
        try:
            doc = json.loads(path.read_bytes())
            mode = _parse_mode(doc.get(SETTINGS_KEY) if isinstance(doc, dict) else None)
            status = (
                ConsentStatus(mode, ConsentSource.settings, mode, ConsentSource.settings)
                if mode is not None
                else _UNREADABLE
            )
        except (OSError, ValueError):
            status = _UNREADABLE
        self._key, self._status = key, status
        return status


#: Modes from the most restrictive: a process follows the lower of its folder's and its
#: account's choice.
MODE_ORDER = {OFF: 0, LOCAL: 1, ON: 2}


class ConsentGate:
    """The mode of one process: its state folder's choice, lowered to the account's choice
    when ``account`` (the account's default folder) is another folder that holds one, and
    kept OFF by ``restriction`` (what the process's environment says,
    ``ClientSettings.signals_restriction``)."""

    __slots__ = (
        "_account",
        "_account_file",
        "_cache_status",
        "_home",
        "_home_file",
        "_off_ttl",
        "_off_until",
        "_restriction",
    )

    def __init__(
        self,
        home: LmcpHome,
        restriction: ConsentSource | None = None,
        *,
        account: LmcpHome | None = None,
        off_ttl_s: float = 1.0,
    ) -> None:
        self._home = home
        self._restriction = restriction
        other = account if account is not None and account != home else None
        self._account = other
        self._home_file = _SettingsFile(home)
        self._account_file = _SettingsFile(other) if other is not None else None
        self._off_ttl = off_ttl_s
        self._off_until = 0.0
        self._cache_status = _NO_SETTINGS

    @property
    def restriction(self) -> ConsentSource | None:
        """The environment variable forcing this process OFF, if any."""
        return self._restriction

    @property
    def account(self) -> LmcpHome | None:
        """The account's default folder whose choice this process also follows (None: this
        process's folder is that folder)."""
        return self._account

    def mode(self) -> SignalsMode:
        if self._restriction is not None:  # the first thing every report does: one look-up
            return OFF
        return self._decided().mode

    def enabled(self) -> bool:
        """Whether signals may be uploaded (mode ``on``)."""
        return self.mode() is ON

    def account_choice(self) -> ConsentStatus | None:
        """The account folder's own choice (None: no other folder, or it holds no choice)."""
        if self._account_file is None:
            return None
        status = self._account_file.read()
        return None if status is _NO_SETTINGS else status

    def status(self) -> ConsentStatus:
        decided = self._decided()
        restriction = self._restriction
        if restriction is not None:
            setting, source = decided.setting, decided.setting_source
            return ConsentStatus(SignalsMode.off, restriction, setting, source)
        return decided

    def set_enabled(self, on: bool) -> None:
        """Record ``on`` or ``off`` (see ``set_mode``)."""
        self.set_mode(SignalsMode.on if on else SignalsMode.off)

    def set_mode(self, mode: SignalsMode) -> None:
        """Record the user's choice in this process's folder. Leaving ``on`` purges the outbox;
        ``off`` forgets all. (The account's choice, when it is lower, still holds here.)"""
        path = self._home.settings
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict):
                doc = {}
        except (OSError, ValueError):
            doc = {}
        doc[SETTINGS_KEY] = mode.value
        # Under the send lock: a POST under way ends first, and every later one asks consent
        # after this write (``client.sender``). Then the purges: a signal kept meanwhile by a
        # report that began before is undone by it, or by that report's own check after.
        with file_lock(self._home.send_lock):
            atomic_write_bytes(path, (json.dumps(doc, indent=2) + "\n").encode())
        self._home_file.forget()
        self._off_until = 0.0
        if mode is SignalsMode.on:
            return
        # Local: nothing may be uploaded, not even what was queued while on.
        from client.outbox import Outbox  # local imports: these need nothing from consent
        from client.sentlog import SentLog

        Outbox(self._home).purge()
        if mode is SignalsMode.off:
            SentLog(self._home).forget_local()
            try:
                self._home.last_failure.unlink()
            except FileNotFoundError:
                pass

    def _decided(self) -> ConsentStatus:
        """The folder's choice, lowered to the account's; an OFF is reused for ``off_ttl``."""
        now = time.monotonic()
        if now < self._off_until:
            return self._cache_status  # a recent OFF: safe to reuse
        status = self._home_file.read()
        if self._account_file is not None:
            account = self._account_file.read()
            # No file there: the account made no choice, and restricts nothing. An unreadable
            # one restricts to OFF (fail closed), as everywhere.
            if account is not _NO_SETTINGS and MODE_ORDER[account.mode] < MODE_ORDER[status.mode]:
                status = ConsentStatus(
                    account.mode, ConsentSource.account, status.setting, status.setting_source
                )
        self._cache_status = status
        self._off_until = now + self._off_ttl if status.mode is OFF else 0.0
        return status


def _parse_mode(value: object) -> SignalsMode | None:
    if isinstance(value, bool):
        return _LEGACY[value]
    if isinstance(value, str) and value in SignalsMode.__members__:
        return SignalsMode(value)
    return None
