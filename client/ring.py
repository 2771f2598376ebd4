"""The ring: names and outcomes of the last ten tool calls, oldest first.

Recording is on the hot path of every tool call, so ``Ring.record`` IS ``deque.append`` of a
pre-built, immutable ``RingEntry`` (see ``Tool.ring_entries``): no allocation, no lock (a deque
append is atomic under the GIL).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from contract.schema import RING_SIZE, RingEntry

__all__ = ["Ring"]


class Ring:
    __slots__ = ("_entries", "record")

    def __init__(self, size: int = RING_SIZE) -> None:
        self._entries: deque[RingEntry] = deque(maxlen=size)
        self.record: Callable[[RingEntry], None] = self._entries.append

    def snapshot(self) -> tuple[RingEntry, ...]:
        """The kept entries, oldest first."""
        return tuple(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
