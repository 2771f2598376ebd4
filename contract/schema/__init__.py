"""The wire contract: the friction signal, shared by client and collector.

Imports only the standard library and pydantic (a privacy test proves it). The enums and the
catalogue's names load with the package; the pydantic models load on first use (``from
contract.schema import FrictionSignal`` works as ever): triage, ``lmcp analysis … --db`` and
the dashboard's filters need the enums only, and building the models costs ~0.1 s at start-up.
"""

from typing import TYPE_CHECKING, Any

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
from contract.schema._sizes import SIZE_BOUNDS, size_bucket

if TYPE_CHECKING:
    from contract.schema._compat import AcceptedBatch, AnySignal, attempts_bucket, upgrade
    from contract.schema._json import signal_json
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
    from contract.schema._v1 import MAX_ATTEMPT_COUNT, FrictionSignalV1, SignalBatchV1

__all__ = [
    "MAX_ARGS",
    "MAX_ATTEMPT_COUNT",
    "MAX_BATCH",
    "RING_SIZE",
    "SCHEMA_VERSION",
    "SIZE_BOUNDS",
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
    "signal_json",
    "size_bucket",
    "upgrade",
]


def __getattr__(name: str) -> Any:
    """A model (or a constant of the models' modules), imported on first use and kept."""
    if name not in __all__:
        raise AttributeError(f"module 'contract.schema' has no attribute {name!r}")
    from contract.schema import _compat, _json, _models, _v1

    for module in (_models, _compat, _v1, _json):
        if hasattr(module, name):
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(name)  # pragma: no cover - every name of __all__ is defined above
