"""The size buckets' bounds: how a size (UTF-8 bytes, items or keys) becomes a ``SizeBucket``.

The client buckets every argument's size with them (``client/capture.py``), and the upgrade of
a v1 signal buckets the number of its undeclared arguments with them, as a v2 client does.
"""

from __future__ import annotations

from contract.schema._enums import SizeBucket

__all__ = ["SIZE_BOUNDS", "size_bucket"]

#: Upper bounds (inclusive) of each bucket, in order; anything larger is ``over_1m``.
SIZE_BOUNDS: tuple[tuple[int, SizeBucket], ...] = (
    (0, SizeBucket.zero),
    (16, SizeBucket.up_to_16),
    (256, SizeBucket.up_to_256),
    (4 * 1024, SizeBucket.up_to_4k),
    (64 * 1024, SizeBucket.up_to_64k),
    (1024 * 1024, SizeBucket.up_to_1m),
)


def size_bucket(size: int) -> SizeBucket:
    """The bucket of a non-negative size (bytes, items or keys)."""
    if size < 0:
        raise ValueError("size must be non-negative")
    for bound, name in SIZE_BOUNDS:
        if size <= bound:
            return name
    return SizeBucket.over_1m
