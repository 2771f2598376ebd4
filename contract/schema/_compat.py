"""Wire compatibility: the collector accepts the current and the previous signal version.

``AcceptedBatch`` is what a collector validates: each signal is v1 or v2, told apart by its
``schema_version`` (a pydantic discriminated union). ``upgrade`` maps a v1 signal to v2 before
anything is stored, so storage and analysis only ever see the current shape: the attempt count
becomes its bucket, and the undeclared arguments' shapes (v1: one ``other`` entry per key)
become the one ``other`` entry a v2 client builds. The policy (which side upgrades first, what
bumps the version) is in ``docs/signal-schema.md``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.types import FailFast

from contract.schema._enums import ArgType, AttemptsBucket
from contract.schema._models import MAX_BATCH, SCHEMA_VERSION, ArgShape, FrictionSignal
from contract.schema._names import ArgName
from contract.schema._sizes import size_bucket
from contract.schema._v1 import FrictionSignalV1

__all__ = ["AcceptedBatch", "AnySignal", "attempts_bucket", "upgrade"]

#: A signal of any version the collector accepts, chosen by its ``schema_version``.
AnySignal = Annotated[FrictionSignal | FrictionSignalV1, Field(discriminator="schema_version")]

#: Inclusive upper bounds of each bucket, in order; anything larger is ``more``.
_BUCKETS: tuple[tuple[int, AttemptsBucket], ...] = (
    (1, AttemptsBucket.one),
    (2, AttemptsBucket.two),
    (5, AttemptsBucket.three_to_five),
    (10, AttemptsBucket.six_to_ten),
)


def attempts_bucket(count: int | None) -> AttemptsBucket | None:
    """The bucket of an attempt count (``None`` stays ``None``; counts below 1 raise)."""
    if count is None:
        return None
    if count < 1:
        raise ValueError("an attempt count is at least 1")
    for bound, bucket in _BUCKETS:
        if count <= bound:
            return bucket
    return AttemptsBucket.more


def _folded_args(args: tuple[ArgShape, ...]) -> tuple[ArgShape, ...]:
    """``args`` with every ``other`` entry folded into ONE, after the declared ones: type
    ``object``, size the bucket of how many there were (what a v2 client builds from the same
    call). A v1 client sent one ``other`` entry per undeclared key, each with its own type and
    size: several in one signal would count several times in one cell of a release."""
    undeclared = sum(1 for a in args if a.name is ArgName.other)
    if not undeclared:
        return args
    kept = tuple(a for a in args if a.name is not ArgName.other)
    other = ArgShape(name=ArgName.other, type=ArgType.object, size=size_bucket(undeclared))
    return (*kept, other)


def upgrade(signal: FrictionSignal | FrictionSignalV1) -> FrictionSignal:
    """The signal in the current version: v1's raw ``attempt_count`` becomes its bucket, and
    its undeclared arguments' shapes the one ``other`` shape (``_folded_args``)."""
    if isinstance(signal, FrictionSignal):
        return signal
    # model_construct: every field was validated by the v1 model, the bucket is an enum member
    # and the folded args are validated shapes, so the v2 model's rules hold without validating
    # again (this is the hot path).
    fields = {name: getattr(signal, name) for name in _SHARED}
    fields["args"] = _folded_args(signal.args)
    return FrictionSignal.model_construct(
        schema_version=SCHEMA_VERSION, attempts=attempts_bucket(signal.attempt_count), **fields
    )


#: The fields v1 and v2 share, unchanged.
_SHARED = tuple(
    name for name in FrictionSignal.model_fields if name not in ("schema_version", "attempts")
)


class AcceptedBatch(BaseModel):
    """The body of ``POST /v1/signals`` as the collector accepts it: v1 and v2 signals."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, title="SignalBatch")

    signals: Annotated[tuple[AnySignal, ...], FailFast(), Field(min_length=1, max_length=MAX_BATCH)]
