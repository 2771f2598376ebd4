"""The friction signal, version 2: the one wire contract between client and collector.

Every field is an enum, a bool, a bounded int, a date, a random UUID4 or a catalogue name.
There is no free-text field, no identifier of a person or machine, and no time finer than a day.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import UUID4, BaseModel, ConfigDict, Field
from pydantic.types import FailFast

from contract.schema._enums import (
    ArgType,
    AttemptsBucket,
    ErrorCategory,
    ErrorClass,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    SizeBucket,
)
from contract.schema._names import ArgName, ToolName

SCHEMA_VERSION: Literal[2] = 2
#: The versions a collector accepts: the current and the previous one (docs/signal-schema.md).
SUPPORTED_SCHEMA_VERSIONS: frozenset[int] = frozenset({1, 2})
RING_SIZE = 10
MAX_ARGS = 32
MAX_BATCH = 500
#: A release version: MAJOR.MINOR.PATCH, small numbers, no pre-release or build suffix.
VERSION_PATTERN = r"^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,3})$"

_CONFIG = ConfigDict(frozen=True, extra="forbid", strict=True, use_enum_values=False)
# Every array is ``FailFast``: validation stops at its first failing item, so a refused batch
# costs one item's errors, never one per item (``collector/guard.py``).


class ArgShape(BaseModel):
    """The shape of one top-level argument of the failed call -- never its value."""

    model_config = _CONFIG

    name: ArgName = Field(description="The declared argument name, or `other` if undeclared.")
    type: ArgType = Field(description="The argument's JSON type.")
    size: SizeBucket | None = Field(
        description="Coarse size: strings by UTF-8 bytes, arrays by items, objects by keys; "
        "null for numbers, booleans and null."
    )


class RingEntry(BaseModel):
    """One of the last tool calls before the failure: its name and how it ended."""

    model_config = _CONFIG

    tool: ToolName
    outcome: Outcome


class AppState(BaseModel):
    """Whether the app behind the failed tool is installed, running and permitted.

    ``None`` means unknown (or not applicable, for LMCP's own tools).
    """

    model_config = _CONFIG

    installed: bool | None = None
    running: bool | None = None
    permitted: bool | None = None


class ClientInfo(BaseModel):
    """The LMCP release and OS family: nothing finer (no build, locale, or machine)."""

    model_config = _CONFIG

    version: Annotated[str, Field(pattern=VERSION_PATTERN, max_length=14)]
    platform: Platform


class FrictionSignal(BaseModel):
    """One anonymous friction signal, schema version 2 (the current one)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        title="FrictionSignal",
        json_schema_extra={"$id": "https://lmcp.invalid/schema/friction-signal.v2.json"},
    )

    schema_version: Literal[2] = Field(description="Wire format version.")
    signal_id: UUID4 = Field(
        description="Random per signal, for de-duplication of retries; derived from nothing."
    )
    day: dt.date = Field(description="The UTC day the signal was built: no finer time exists.")
    friction_type: FrictionType
    error_category: ErrorCategory | None = None
    intent_category: IntentCategory | None = None
    tool_attempted: ToolName = Field(description="The catalogue tool involved, or `other`.")
    attempts: AttemptsBucket | None = Field(
        default=None,
        description="How many times the agent says it tried, bucketed at the client; "
        "null when the agent gave no count.",
    )
    error_class: ErrorClass
    args: Annotated[tuple[ArgShape, ...], FailFast(), Field(max_length=MAX_ARGS)] = ()
    ring: Annotated[tuple[RingEntry, ...], FailFast(), Field(max_length=RING_SIZE)] = Field(
        default=(), description="The last tool calls, oldest first, the failed call last."
    )
    app: AppState = AppState()
    client: ClientInfo


class SignalBatch(BaseModel):
    """The body of ``POST /v1/signals`` as a current client sends it (v2 signals only)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        title="SignalBatch",
        json_schema_extra={"$id": "https://lmcp.invalid/schema/signal-batch.v2.json"},
    )

    signals: Annotated[
        tuple[FrictionSignal, ...], FailFast(), Field(min_length=1, max_length=MAX_BATCH)
    ]
