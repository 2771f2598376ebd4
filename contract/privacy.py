"""The published privacy parameters of one installation's contributions, and what they bound.

The client enforces, before a signal is built, at most ``PER_KEY_WEEKLY_LIMIT`` signal per
(tool, error class, friction type) and at most ``WEEKLY_SIGNAL_LIMIT`` signals in all per UTC
week (``contract/limits.py``, enforced by ``client/contributions.py``); ``contract.accountant``
turns that bound into the releases' guarantee.

``covert_channel()`` bounds what a malicious or prompt-injected agent can move out through
signals: the log2 of the number of distinct signals it can cause (every field it can influence,
by its choice of enum values and of which tools to call), per signal and per week under the
limit. ``docs/signal-schema.md`` quotes these numbers; a test checks they match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from contract.catalogue import load_catalogue
from contract.limits import WEEKLY_SIGNAL_LIMIT
from contract.schema import (
    MAX_ARGS,
    RING_SIZE,
    ArgType,
    AttemptsBucket,
    ErrorCategory,
    ErrorClass,
    FrictionType,
    IntentCategory,
    Outcome,
    SizeBucket,
    ToolName,
)

__all__ = [
    "ChannelBound",
    "channel_fields",
    "covert_channel",
    "distinct_signals",
]


#: Types whose size is bucketed; the others carry no size.
_SIZED = (ArgType.string, ArgType.array, ArgType.object)


@dataclass(frozen=True, slots=True)
class ChannelBound:
    """Distinct signals an agent can cause, and the bits that makes, per signal and per week."""

    signals_per_week: int
    distinct_signals: int
    bits_per_signal: float
    bits_per_week: float


def _shapes_of_one_value() -> int:
    unsized = len(ArgType) - len(_SIZED)
    return len(_SIZED) * len(SizeBucket) + unsized


def _arg_combinations(declared: int) -> int:
    """The ``args`` of one failed call: each declared name absent or one shape; plus the one
    folded ``other`` entry, absent or object-of-n-keys (n >= 1: every size bucket but 0)."""
    per_declared = 1 + _shapes_of_one_value()
    other = 1 + (len(SizeBucket) - 1)
    return int(per_declared ** min(declared, MAX_ARGS)) * other


def _ring_combinations() -> int:
    """The ring: up to ``RING_SIZE`` entries, each a tool name and an outcome, in order."""
    entry = len(ToolName) * len(Outcome)
    return sum(entry**k for k in range(RING_SIZE + 1))


def channel_fields() -> dict[str, int]:
    """How many values each part of a signal can take (``docs/signal-schema.md`` lists them)."""
    catalogue = load_catalogue()
    declared = {t.tool_name: len(t.arg_names) for t in catalogue}
    return {
        "friction_type": len(FrictionType),
        "error_category": len(ErrorCategory) + 1,  # each optional enum: None is one more value
        "intent_category": len(IntentCategory) + 1,
        "attempts": len(AttemptsBucket) + 1,
        "error_class": len(ErrorClass),
        "tool_attempted and args": sum(
            _arg_combinations(declared.get(tool, 0)) for tool in ToolName
        ),
        "ring": _ring_combinations(),
        "app": 3**3,  # installed, running, permitted: each true, false or unknown
    }


def distinct_signals() -> int:
    """How many different signals (ignoring the random id, the day and the client) exist."""
    return math.prod(channel_fields().values())


def covert_channel(limit: int = WEEKLY_SIGNAL_LIMIT) -> ChannelBound:
    """The bound for ``limit`` signals a week: a week's output is a set of at most ``limit``
    signals, so at most sum(N**k, k = 0..limit) different weeks."""
    n = distinct_signals()
    weeks = sum(n**k for k in range(limit + 1))
    return ChannelBound(limit, n, math.log2(n), math.log2(weeks))
