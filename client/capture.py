"""Capture: argument values become shapes here, and go no further.

``shape_of`` and ``capture_args`` are pure functions. Nothing in this module keeps, logs or
raises with a value: the only things that leave it are enum members.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.catalogue import Tool
from contract.schema import (
    MAX_ARGS,
    SIZE_BOUNDS,
    ArgName,
    ArgShape,
    ArgType,
    SizeBucket,
    size_bucket,
)

__all__ = ["BUCKET_BOUNDS", "bucket", "capture_args", "shape_of"]

#: Upper bounds (inclusive) of each bucket, in order: the contract's (``contract/schema``).
BUCKET_BOUNDS = SIZE_BOUNDS
#: The bucket of a non-negative size (bytes, items or keys): the contract's.
bucket = size_bucket


def _utf8_len(text: str) -> int:
    # Every code point is 1-4 bytes: skip the encode when the bucket is already decided.
    n = len(text)
    if n == 0:
        return 0
    if n > 1024 * 1024:
        return n  # more than 1 MiB of code points is over 1 MiB of bytes
    return len(text.encode("utf-8", "surrogatepass"))


def shape_of(value: object) -> tuple[ArgType, SizeBucket | None]:
    """The JSON type and size bucket of one value."""
    if value is None:
        return ArgType.null, None
    if isinstance(value, bool):
        return ArgType.boolean, None
    if isinstance(value, int):
        return ArgType.integer, None
    if isinstance(value, float):
        return ArgType.number, None
    if isinstance(value, str):
        return ArgType.string, bucket(_utf8_len(value))
    if isinstance(value, Mapping):
        return ArgType.object, bucket(len(value))
    if isinstance(value, list | tuple):
        return ArgType.array, bucket(len(value))
    # Not JSON: report it as the closest JSON type without looking inside.
    return ArgType.object, None


def capture_args(tool: Tool | None, args: Mapping[str, Any]) -> tuple[ArgShape, ...]:
    """One shape per declared argument, sorted, and at most one ``other`` shape.

    A name is kept only when the tool's schema declares it. Every other key (a key can carry a
    value too) is folded into ONE ``other`` entry, the undeclared arguments seen as one object:
    type ``object``, size the bucket of how many there were. Their own types and sizes are not
    kept: an agent choosing many undeclared keys could otherwise spell out a value in shapes.
    """
    declared = tool.arg_names if tool is not None else {}
    shapes = []
    undeclared = 0
    for key, value in args.items():
        name = declared.get(key) if isinstance(key, str) else None
        if name is None or name is ArgName.other:
            undeclared += 1
            continue
        arg_type, size = shape_of(value)
        shapes.append(ArgShape(name=name, type=arg_type, size=size))
    shapes.sort(key=lambda s: s.name.value)
    if undeclared:
        shapes.append(ArgShape(name=ArgName.other, type=ArgType.object, size=bucket(undeclared)))
    return tuple(shapes[:MAX_ARGS])
