"""The friction signal, version 1: the previous version, still accepted by the collector.

Kept only so that a collector can read what older clients send and map it to version 2
(``contract.schema.upgrade``); nothing builds a v1 signal any more. Its one difference from v2:
``attempt_count`` is the agent's raw integer (1-100), where v2 carries a bucket.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import UUID4, BaseModel, ConfigDict, Field
from pydantic.types import FailFast

from contract.schema._enums import ErrorCategory, ErrorClass, FrictionType, IntentCategory
from contract.schema._models import (
    MAX_ARGS,
    MAX_BATCH,
    RING_SIZE,
    AppState,
    ArgShape,
    ClientInfo,
    RingEntry,
)
from contract.schema._names import ToolName

__all__ = ["MAX_ATTEMPT_COUNT", "FrictionSignalV1", "SignalBatchV1"]

MAX_ATTEMPT_COUNT = 100


# The class names and docstrings are v1's own, so that the JSON Schemas generated from them are
# byte for byte the ones v1 shipped (docs/schema/*.v1.json): exported under V1 names.
class FrictionSignal(BaseModel):
    """One anonymous friction signal, schema version 1."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        title="FrictionSignal",
        json_schema_extra={"$id": "https://lmcp.invalid/schema/friction-signal.v1.json"},
    )

    schema_version: Literal[1] = Field(description="Wire format version.")
    signal_id: UUID4 = Field(
        description="Random per signal, for de-duplication of retries; derived from nothing."
    )
    day: dt.date = Field(description="The UTC day the signal was built: no finer time exists.")
    friction_type: FrictionType
    error_category: ErrorCategory | None = None
    intent_category: IntentCategory | None = None
    tool_attempted: ToolName = Field(description="The catalogue tool involved, or `other`.")
    attempt_count: Annotated[int, Field(ge=1, le=MAX_ATTEMPT_COUNT)] | None = None
    error_class: ErrorClass
    args: Annotated[tuple[ArgShape, ...], FailFast(), Field(max_length=MAX_ARGS)] = ()
    ring: Annotated[tuple[RingEntry, ...], FailFast(), Field(max_length=RING_SIZE)] = Field(
        default=(), description="The last tool calls, oldest first, the failed call last."
    )
    app: AppState = AppState()
    client: ClientInfo


class SignalBatch(BaseModel):
    """The body of ``POST /v1/signals``."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, title="SignalBatch")

    signals: Annotated[
        tuple[FrictionSignal, ...], FailFast(), Field(min_length=1, max_length=MAX_BATCH)
    ]


FrictionSignalV1 = FrictionSignal
SignalBatchV1 = SignalBatch
