"""The wire contract: the friction signal, shared by client and collector.

Imports only the standard library and pydantic (a privacy test proves it).
"""

from contract.schema._enums import (
    ArgType,
    ErrorCategory,
    ErrorClass,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    SizeBucket,
)
from contract.schema._models import (
    MAX_ARGS,
    MAX_ATTEMPT_COUNT,
    MAX_BATCH,
    RING_SIZE,
    SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    AppState,
    ArgShape,
    ClientInfo,
    FrictionSignal,
    RingEntry,
    SignalBatch,
)
from contract.schema._names import ArgName, ToolName

__all__ = [
    "MAX_ARGS",
    "MAX_ATTEMPT_COUNT",
    "MAX_BATCH",
    "RING_SIZE",
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "AppState",
    "ArgName",
    "ArgShape",
    "ArgType",
    "ClientInfo",
    "ErrorCategory",
    "ErrorClass",
    "FrictionSignal",
    "FrictionType",
    "IntentCategory",
    "Outcome",
    "Platform",
    "RingEntry",
    "SignalBatch",
    "SizeBucket",
    "ToolName",
]
