"""A small world for the release attacks: a fleet of installations, each within the client's
bound (at most one signal per (tool, error class, friction type) a day, at most C a day),
written through the collector's own write path on chosen received days."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from collections.abc import Sequence
from pathlib import Path

import duckdb

from collector.db import migrate
from collector.store import flush_rows
from contract.schema import FrictionSignal

__all__ = ["D0", "FAR_PAST", "fleet_day", "one_signal", "write_days"]

#: Days far in the past: closed for any real clock, so the collector releases them.
FAR_PAST = dt.date(2025, 1, 6)
D0 = FAR_PAST
_TOOLS = ("read_note", "list_emails", "read_file", "send_email", "search_files", "create_note")
_CLASSES = ("not_found", "permission_denied", "timeout", "invalid_arguments")
_TYPES = ("repeated_failure", "cannot_complete", "workaround_needed")


def one_signal(
    day: dt.date,
    tool: str = "read_note",
    error_class: str = "not_found",
    friction: str = "cannot_complete",
    platform: str = "macos",
) -> FrictionSignal:
    return FrictionSignal.model_validate(
        {
            "schema_version": 2,
            "signal_id": uuid.uuid4(),
            "day": day,
            "friction_type": friction,
            "tool_attempted": tool,
            "error_class": error_class,
            "client": {"version": "1.4.0", "platform": platform},
        },
        strict=False,
    )


def fleet_day(day: dt.date, installations: int, seed: int) -> list[FrictionSignal]:
    """``installations`` installations, each sending 1-5 signals in distinct cells (skewed)."""
    rng = random.Random(seed)
    out: list[FrictionSignal] = []
    for _ in range(installations):
        cells: set[tuple[str, str, str]] = set()
        for _ in range(rng.randint(1, 5)):
            cells.add(
                (
                    _TOOLS[min(int(rng.expovariate(1.2)), len(_TOOLS) - 1)],
                    _CLASSES[min(int(rng.expovariate(1.5)), len(_CLASSES) - 1)],
                    _TYPES[min(int(rng.expovariate(1.5)), len(_TYPES) - 1)],
                )
            )
        platform = rng.choice(("macos", "windows", "linux"))
        out += [one_signal(day, t, c, f, platform) for t, c, f in sorted(cells)]
    return out


def write_days(path: Path, days: Sequence[tuple[dt.date, Sequence[FrictionSignal]]]) -> None:
    """Store each day's signals as received on that day (the collector's flush)."""
    with duckdb.connect(str(path)) as con:
        migrate(con)
        for day, signals in days:
            for start in range(0, len(signals), 5000):
                flush_rows(con, [signals[start : start + 5000]], day)
