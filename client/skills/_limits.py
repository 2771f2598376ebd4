"""The sandbox's limits: one value shared by the sandbox that sets them (``_sandbox``), the
watchdog that enforces the totals from outside (``_watchdog``) and the runner (``_execute``).

Every limit is a total over the whole sandbox unless it says otherwise. Memory the kernel holds
for the script (socket and pipe buffers, tmpfs inodes, mappings, locks) is either denied to it
or counted here: see ``docs/cloud-skills.md``, *The sandbox*, for which and why.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MOUNT", "SandboxLimits"]

#: Where the scratch folder (a tmpfs) appears inside the sandbox.
MOUNT = "/work"


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    #: anonymous + shared resident memory and page tables of every process (the watchdog);
    #: also each process's address space
    memory_bytes: int = 256 * 1024 * 1024
    file_bytes: int = 16 * 1024 * 1024
    #: per process (an rlimit)
    open_files: int = 64
    #: every process of the sandbox, the script included
    processes: int = 32
    #: the scratch tmpfs ``/work``; ``/tmp`` and ``/dev/shm`` get ``tmp_bytes`` each
    scratch_bytes: int = 64 * 1024 * 1024
    tmp_bytes: int = 16 * 1024 * 1024
    #: open descriptors of every process: each pipe among them buffers at most 64 KiB
    descriptors: int = 256
    #: memory mappings (VMAs) of every process: each is kernel memory, mapped or not
    mappings: int = 16384
    #: POSIX record locks held (``fcntl``/``lockf``): each is kernel memory, and one file
    #: can carry any number of them
    locks: int = 1024
    #: inodes used in the writable tmpfs places together: files, directories, links, and a
    #: unit per KiB of extended attributes (``--size`` bounds data pages, not these)
    inodes: int = 8192
    #: signals queued at once (``sigqueue``; an rlimit, counted for the whole sandbox)
    queued_signals: int = 64

    def places(self) -> tuple[tuple[str, int], ...]:
        """The writable places, each its own tmpfs: (where inside, its size in bytes)."""
        tmp = "/tmp"  # noqa: S108 - the sandbox's own tmpfs
        return ((MOUNT, self.scratch_bytes), (tmp, self.tmp_bytes), ("/dev/shm", self.tmp_bytes))
