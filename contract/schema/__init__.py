"""The wire contract: the friction signal, shared by client and collector.

Imports only the standard library and pydantic (a privacy test proves it).
"""

from contract.schema._compat import AcceptedBatch, AnySignal, attempts_bucket, upgrade
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
from contract.schema._models import (
    MAX_ARGS,
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
from contract.schema._v1 import MAX_ATTEMPT_COUNT, FrictionSignalV1, SignalBatchV1

__all__ = [
    "MAX_ARGS",
    "MAX_ATTEMPT_COUNT",
    "MAX_BATCH",
    "RING_SIZE",
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "AcceptedBatch",
    "AnySignal",
    "AppState",
    "ArgName",
    "ArgShape",
    "ArgType",
    "AttemptsBucket",
    "ClientInfo",
    "ErrorCategory",
    "ErrorClass",
    "FrictionSignal",
    "FrictionSignalV1",
    "FrictionType",
    "IntentCategory",
    "Outcome",
    "Platform",
    "RingEntry",
    "SignalBatch",
    "SignalBatchV1",
    "SizeBucket",
    "ToolName",
    "attempts_bucket",
    "upgrade",
]
