"""The weekly contribution bound, enforced before a signal is built or queued.

One installation sends at most ``PER_KEY_WEEKLY_LIMIT`` signal per (tool, error class, friction
type) per UTC week (Monday to Sunday), and at most ``limit`` in all (``contract.limits``: the
published bound). A signal is claimed for the week of the day it carries: the collector counts
it in that week's release, whenever it arrives (``contract.days``).

The counter is one small JSON file under ``LMCP_HOME`` -- the current and previous weeks'
keys (enum names, never a value) and the latest day ever claimed -- replaced atomically under
an inter-process lock, so two processes (the MCP server and the CLI) share one budget and a
crash leaves the old file or the new one.

- **Claimed before built.** A claim is written BEFORE the signal is built: a crash after it
  loses a signal, never sends one over the bound.
- **A monotone clock.** A claim for a day earlier than the latest day ever claimed is refused
  (``clock_moved_back``): moving the clock back and forth between two days or weeks gets no
  new budget.
- **Other records count too.** The signals still in the outbox and those in the sent log
  (what was sent, refused, expired or kept locally: enums only) are counted with the file, and
  their days raise the latest day: deleting ``contributions.json`` alone grants nothing while
  they exist. (A process that deletes all of them resets the local bound: docs/consent.md.)
- **Fail closed.** A file that cannot be read spends the rest of that week.

Reading needs no pydantic (``lmcp signals status`` reads the budget): the records are read as
plain JSON.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from client._files import atomic_write_bytes, file_lock
from client.paths import LmcpHome
from contract.days import PeriodKind, period_start
from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT

if TYPE_CHECKING:  # names only: ``lmcp signals status`` reads the budget without pydantic
    from contract.schema import ErrorClass, FrictionType, ToolName

__all__ = [
    "LEGACY_LIMIT_SETTING",
    "LIMIT_SETTING",
    "ContributionBudget",
    "Refusal",
    "contribution_key",
    "week_of",
]

#: The ``settings.json`` key that lowers the weekly limit (values above the bound are ignored).
LIMIT_SETTING = "weekly_signal_limit"
#: The key older releases wrote (a daily limit): still read, as one more lower bound.
LEGACY_LIMIT_SETTING = "daily_signal_limit"
_WEEK = dt.timedelta(days=7)


class Refusal(StrEnum):
    """Why a report was not turned into a signal (the ``reason`` ``report_friction`` answers)."""

    weekly_duplicate = "weekly_duplicate"  # this (tool, error class, friction type) this week
    weekly_limit = "weekly_limit"  # the installation's signals for this week are spent
    clock_moved_back = "clock_moved_back"  # a day earlier than one already claimed


def contribution_key(tool: ToolName, error_class: ErrorClass, friction: FrictionType) -> str:
    """The cell a signal adds to: three enum names, no value."""
    return f"{tool.value}/{error_class.value}/{friction.value}"


def week_of(day: dt.date) -> dt.date:
    """The Monday of the UTC week holding ``day``: the period a signal dated ``day`` counts in."""
    return period_start(PeriodKind.week, day)


@dataclass(slots=True)
class _State:
    """What the file and the records say: keys per week, the weeks spent, the latest day."""

    weeks: dict[dt.date, list[str]] = field(default_factory=dict)
    #: Signal ids per week seen in the outbox and sent log (a key repeated still counts twice).
    ids: dict[dt.date, set[str]] = field(default_factory=dict)
    full: set[dt.date] = field(default_factory=set)
    latest: dt.date | None = None
    damaged: bool = False

    def see(self, day: dt.date) -> None:
        if self.latest is None or day > self.latest:
            self.latest = day

    def used(self, week: dt.date) -> int:
        return max(len(self.weeks.get(week, ())), len(self.ids.get(week, ())))


class ContributionBudget:
    def __init__(self, home: LmcpHome, *, limit: int | None = None) -> None:
        """``limit``: fixed for tests; None reads ``weekly_signal_limit`` from the settings."""
        self._home = home
        self._fixed = limit
        self._path = home.contributions
        self._lock = home.root / ".contributions.lock"

    @property
    def limit(self) -> int:
        """The weekly limit: the settings', or the published bound; never above the bound."""
        wanted = self._fixed if self._fixed is not None else _setting(self._home)
        return max(0, min(wanted, WEEKLY_SIGNAL_LIMIT))

    @property
    def per_key(self) -> int:
        return PER_KEY_WEEKLY_LIMIT

    def claim(self, key: str, day: dt.date) -> Refusal | None:
        """Spend one of the signals of ``day``'s week on ``key`` (``day``: the day the signal
        will carry); None when allowed, else why not."""
        limit = self.limit
        week = week_of(day)
        with file_lock(self._lock):
            state = self._state()
            if state.damaged:
                # Unreadable: this week is spent (fail closed); the file says so from now on.
                state.full.add(week)
                state.see(day)
                self._store(state)
                return Refusal.weekly_limit
            if state.latest is not None and day < state.latest:
                return Refusal.clock_moved_back
            keys = state.weeks.setdefault(week, [])
            if keys.count(key) >= PER_KEY_WEEKLY_LIMIT:
                return Refusal.weekly_duplicate
            if week in state.full or state.used(week) >= limit:
                return Refusal.weekly_limit
            keys.append(key)
            state.see(day)
            self._store(state)
            return None

    def used(self, day: dt.date) -> int:
        """How many of the signals of ``day``'s week are spent (the limit when a file is
        unreadable or the week was marked spent).

        Read-only: no lock, no file is created (``lmcp signals status`` calls it)."""
        week = week_of(day)
        state = self._state()
        if state.damaged or week in state.full:
            return self.limit
        return min(state.used(week), self.limit)

    def latest(self) -> dt.date | None:
        """The latest day ever claimed (or carried by a recorded signal); None: none yet."""
        state = self._state()
        return state.latest

    # -- the file and the records --------------------------------------------------------
    def _state(self) -> _State:
        state = _State()
        try:
            raw: bytes | None = self._path.read_bytes()
        except FileNotFoundError:
            raw = None
        except OSError:
            raw, state.damaged = None, True
        if raw is not None and not _parse(raw, state):
            state.damaged = True
        try:
            for record_day, key, signal_id in _records(self._home):
                week = week_of(record_day)
                keys = state.weeks.setdefault(week, [])
                if key not in keys:
                    keys.append(key)
                state.ids.setdefault(week, set()).add(signal_id)
                state.see(record_day)
        except OSError:
            state.damaged = True
        return state

    def _store(self, state: _State) -> None:
        """Keep the latest day, and the keys and spent marks of its week and the one before."""
        assert state.latest is not None  # a store follows a claim, which sets it
        oldest = week_of(state.latest) - _WEEK
        doc: dict[str, object] = {
            "latest": state.latest.isoformat(),
            "weeks": {
                week.isoformat(): keys
                for week, keys in sorted(state.weeks.items())
                if week >= oldest and keys
            },
        }
        full = sorted(week.isoformat() for week in state.full if week >= oldest)
        if full:
            doc["full"] = full
        atomic_write_bytes(self._path, json.dumps(doc).encode())


def _parse(raw: bytes, state: _State) -> bool:
    """Read ``contributions.json`` into ``state``; False when it is not a file this wrote.

    A file of an older release (one day and its keys: a daily bound) is read as that day's
    week holding those keys, and that day as the latest."""
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict):
            raise TypeError("not an object")
        if "weeks" not in doc and "day" in doc:  # the daily file of an older release
            day = dt.date.fromisoformat(doc["day"])
            doc = {
                "latest": doc["day"],
                "weeks": {week_of(day).isoformat(): doc["keys"]},
                "full": [week_of(day).isoformat()] if doc.get("full") else [],
            }
        latest = dt.date.fromisoformat(doc["latest"])
        weeks = doc["weeks"]
        full = doc.get("full", [])
        if not isinstance(weeks, dict) or not isinstance(full, list):
            raise TypeError("weeks, full")
        for week, keys in weeks.items():
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise TypeError("keys")
            state.weeks[week_of(dt.date.fromisoformat(week))] = list(keys)
        state.full = {week_of(dt.date.fromisoformat(w)) for w in full}
    except (ValueError, KeyError, TypeError):
        return False
    state.see(latest)
    return True


def _records(home: LmcpHome) -> Iterator[tuple[dt.date, str, str]]:
    """(day, key, signal id) of every signal in the outbox and the sent log, read as plain
    JSON (no validation: a record counts as long as its four fields can be read).

    Raises OSError when one of the files exists but cannot be read (the caller fails closed)."""
    for path, sent in ((home.outbox, False), (home.sent_log, True)):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        if raw.startswith(b'{"version"'):  # the outbox of an older release: one document
            try:
                lines: list[Any] = json.loads(raw).get("signals", [])
            except (ValueError, AttributeError):
                continue
        else:
            lines = raw.split(b"\n")
        for line in lines:
            record = _record(line, sent=sent)
            if record is not None:
                yield record


def _record(line: Any, *, sent: bool) -> tuple[dt.date, str, str] | None:
    try:
        doc = json.loads(line) if isinstance(line, bytes) else line
        if sent:
            doc = doc["signal"]
        day = dt.date.fromisoformat(doc["day"])
        fields = (doc["tool_attempted"], doc["error_class"], doc["friction_type"])
        if not all(isinstance(f, str) for f in fields):
            return None
        return day, "/".join(fields), str(doc["signal_id"])
    except (ValueError, KeyError, TypeError):
        return None


def _setting(home: LmcpHome) -> int:
    """The lowest of the weekly setting, the older daily one, and the published bound."""
    try:
        doc = json.loads(home.settings.read_bytes())
    except (OSError, ValueError):
        return WEEKLY_SIGNAL_LIMIT
    if not isinstance(doc, dict):
        return WEEKLY_SIGNAL_LIMIT
    limit = WEEKLY_SIGNAL_LIMIT
    for name in (LIMIT_SETTING, LEGACY_LIMIT_SETTING):
        value = doc.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            limit = min(limit, value)
    return limit
