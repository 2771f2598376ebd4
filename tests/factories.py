"""The one place tests build friction signals: a model, its wire JSON, a batch body, a strategy.

``make_signal()`` is a complete, valid signal (every optional field filled); any field can be
overridden, with a model value or its wire spelling (``tool_attempted="other"``,
``client={"version": "0.1.0", "platform": "linux"}``): overrides are validated as the wire
is, and the argument names as the collector's rule has them (each one the tool's, or
``other``, at most once), so a test cannot build a signal the collector would refuse (a body
it refuses is written by hand, from ``signal_json``). ``make_signal(**BARE)`` is the smallest
valid signal (every optional field at its default).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from contract.catalogue import load_catalogue
from contract.days import utc_today
from contract.schema import (
    MAX_ARGS,
    RING_SIZE,
    AppState,
    ArgName,
    ArgShape,
    ArgType,
    AttemptsBucket,
    ClientInfo,
    ErrorCategory,
    ErrorClass,
    FrictionSignal,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    RingEntry,
    SizeBucket,
    ToolName,
)

__all__ = [
    "BARE",
    "TODAY",
    "app_states",
    "arg_shapes",
    "batch_body",
    "carried_args",
    "carried_names",
    "make_signal",
    "ring_entries",
    "signal_json",
    "signals",
]

#: The test calendar's "today": the day every default signal was built.
#: The real UTC day: the collector counts a signal in the period of its day and refuses a day
#: more than ``LATE_DAYS`` old, so a fixed date would be refused a few days after it was written.
TODAY = utc_today()

#: Every optional field at its default: ``make_signal(**BARE)`` is the smallest valid signal.
BARE: Mapping[str, Any] = {
    "error_category": None,
    "intent_category": None,
    "attempts": None,
    "args": (),
    "ring": (),
    "app": AppState(),
}


def make_signal(**overrides: Any) -> FrictionSignal:
    """A valid signal with a fresh id; ``overrides`` replace fields (model or wire values)."""
    fields: dict[str, Any] = {
        "schema_version": 2,
        "signal_id": uuid.uuid4(),
        "day": TODAY,
        "friction_type": FrictionType.cannot_complete,
        "error_category": ErrorCategory.timeout,
        "intent_category": IntentCategory.manage_note,
        "tool_attempted": ToolName.read_note,
        "attempts": AttemptsBucket.two,
        "error_class": ErrorClass.timeout,
        "args": (ArgShape(name=ArgName.note_name, type=ArgType.string, size=SizeBucket.up_to_16),),
        "ring": (
            RingEntry(tool=ToolName.list_notes, outcome=Outcome.ok),
            RingEntry(tool=ToolName.create_note, outcome=Outcome.preview),
            RingEntry(tool=ToolName.read_note, outcome=Outcome.failed),
        ),
        "app": AppState(installed=True, running=False, permitted=None),
        "client": ClientInfo(version="1.2.3", platform=Platform.macos),
    }
    tool = str(overrides.get("tool_attempted", ToolName.read_note))
    if "args" not in overrides and ArgName.note_name.value not in carried_names(tool):
        # Another tool's signal carries one of its own arguments (or ``other``), never the
        # default's note_name: the collector refuses a name its tool does not declare.
        declared = sorted(carried_names(tool) - {ArgName.other.value})
        fields["args"] = (
            ArgShape(name=ArgName(declared[0]), type=ArgType.string, size=SizeBucket.up_to_16)
            if declared
            else ArgShape(name=ArgName.other, type=ArgType.object, size=SizeBucket.up_to_16),
        )
    fields.update(overrides)
    # Lax mode lets an override use a wire spelling (str -> enum, dict -> model); the
    # constraints (catalogue names, bounds, lengths) are still checked.
    signal = FrictionSignal.model_validate(fields, strict=False)
    names = [a.name.value for a in signal.args]
    if len(set(names)) < len(names) or not carried_names(signal.tool_attempted) >= set(names):
        raise ValueError(
            "make_signal: the collector refuses these args (collector.ingest.check_args); "
            "write such a body by hand"
        )
    return signal


def carried_names(tool: str) -> frozenset[str]:
    """The argument names a signal of ``tool`` (its wire name) may carry: the collector's rule
    (``Catalogue.signal_arg_names``); none for a name outside the catalogue."""
    return _carried().get(str(tool), frozenset())


@functools.cache
def _carried() -> dict[str, frozenset[str]]:
    return load_catalogue().signal_arg_names()


def signal_json(signal: FrictionSignal | None = None, /, **overrides: Any) -> dict[str, Any]:
    """The wire JSON of ``signal`` (or of ``make_signal(**overrides)``), as a client sends it."""
    return (signal if signal is not None else make_signal(**overrides)).model_dump(mode="json")


def batch_body(signals: Sequence[FrictionSignal] | Sequence[dict[str, Any]]) -> bytes:
    """The body of ``POST /v1/signals`` holding ``signals`` (models or wire JSON)."""
    items = [s if isinstance(s, dict) else signal_json(s) for s in signals]
    return json.dumps({"signals": items}).encode()


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


ring_entries = st.builds(
    RingEntry, tool=st.sampled_from(ToolName), outcome=st.sampled_from(Outcome)
)
arg_shapes = st.builds(
    ArgShape,
    name=st.sampled_from(ArgName),
    type=st.sampled_from(ArgType),
    size=_opt(st.sampled_from(SizeBucket)),
)
app_states = st.builds(
    AppState,
    installed=_opt(st.booleans()),
    running=_opt(st.booleans()),
    permitted=_opt(st.booleans()),
)


def _shapes_named(name: str) -> st.SearchStrategy[ArgShape]:
    return st.builds(
        ArgShape,
        name=st.just(ArgName(name)),
        type=st.sampled_from(ArgType),
        size=_opt(st.sampled_from(SizeBucket)),
    )


def carried_args(tool: ToolName, max_size: int = 4) -> st.SearchStrategy[tuple[ArgShape, ...]]:
    """Argument shapes a signal of ``tool`` may carry, in any order: names the tool declares
    or ``other``, each at most once (the collector's rule); any type and size."""
    names = st.lists(st.sampled_from(sorted(carried_names(tool))), unique=True, max_size=max_size)
    return names.flatmap(lambda drawn: st.tuples(*map(_shapes_named, drawn)))


#: Any signal the collector accepts (for property tests): every field any valid value, and
#: args of names its tool may carry (``carried_args``).
signals = st.sampled_from(ToolName).flatmap(
    lambda tool: st.builds(
        FrictionSignal,
        schema_version=st.just(2),
        signal_id=st.uuids(version=4),
        day=st.dates(dt.date(2020, 1, 1), dt.date(2030, 12, 31)),
        friction_type=st.sampled_from(FrictionType),
        error_category=_opt(st.sampled_from(ErrorCategory)),
        intent_category=_opt(st.sampled_from(IntentCategory)),
        tool_attempted=st.just(tool),
        attempts=_opt(st.sampled_from(AttemptsBucket)),
        error_class=st.sampled_from(ErrorClass),
        args=carried_args(tool, max_size=min(MAX_ARGS, 4)),
        ring=st.lists(ring_entries, max_size=RING_SIZE).map(tuple),
        app=app_states,
        client=st.builds(
            ClientInfo,
            version=st.tuples(st.integers(0, 999), st.integers(0, 999), st.integers(0, 9999)).map(
                lambda t: f"{t[0]}.{t[1]}.{t[2]}"
            ),
            platform=st.sampled_from(Platform),
        ),
    )
)
