"""The sandbox's limits: one value shared by the sandbox that sets them (``_sandbox``), the
watchdog that enforces the totals from outside (``_watchdog``) and the runner (``_execute``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MOUNT", "SandboxLimits"]

#: Where the scratch folder (a tmpfs) appears inside the sandbox.
MOUNT = "/work"


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    #: the sum over every process of the sandbox (the watchdog), and each one's address space
    memory_bytes: int = 256 * 1024 * 1024
    file_bytes: int = 16 * 1024 * 1024
    open_files: int = 64
    #: every process of the sandbox, the script included
    processes: int = 32
    #: the scratch tmpfs ``/work``; ``/tmp`` and ``/dev/shm`` get ``tmp_bytes`` each
    scratch_bytes: int = 64 * 1024 * 1024
    tmp_bytes: int = 16 * 1024 * 1024
    #: signals queued at once (``sigqueue``; an rlimit, counted for the whole sandbox)
    queued_signals: int = 64

    def places(self) -> tuple[tuple[str, int], ...]:
        """The writable places, each its own tmpfs: (where inside, its size in bytes)."""
        tmp = "/tmp"  # noqa: S108 - the sandbox's own tmpfs
        return ((MOUNT, self.scratch_bytes), (tmp, self.tmp_bytes), ("/dev/shm", self.tmp_bytes))
