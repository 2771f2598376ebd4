"""What a test may expect of ``report_friction`` against a real collector on a busy machine.

The call tries ONE delivery within a few milliseconds (``client.delivery``); when the machine
is too busy for the collector to answer in time, the signal is queued and the background
thread delivers it. Both are a success for the caller; a test that means "the signal went out"
accepts either, then flushes and checks what the collector stored.
"""

from __future__ import annotations

from collections.abc import Mapping

from client.runtime import Runtime

__all__ = ["QUEUED", "accepted", "deliver_queued"]

#: The reply when the in-call try did not get an answer in time.
QUEUED = {"sent": False, "queued": True, "reason": "collector_not_reached"}


def accepted(reply: Mapping[str, object]) -> bool:
    """Sent in the call, or queued for the background delivery (never refused)."""
    if reply.get("sent") is True:
        return True
    return {k: reply.get(k) for k in QUEUED} == QUEUED


def deliver_queued(rt: Runtime) -> None:
    """Deliver what the runtime queued (the collector is up): nothing stays pending."""
    assert rt.reporter.flush()["pending"] == 0
