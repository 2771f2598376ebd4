"""The seccomp filter a Cloud Skill script runs under: a small classic-BPF program, built here.

bubblewrap loads it (``--seccomp FD``) right before it starts the script, after it has set up
the sandbox, with ``no_new_privs`` set. The filter is a deny list of the calls a script never
needs and an escape does: mounting and the new mount API, ``ptrace`` and reading other
processes' memory, keyrings, namespaces, modules, kexec, BPF, ``io_uring``, ``userfaultfd``,
clocks, and every kind of memory that would outlive or escape the sandbox's accounting (SysV
IPC segments and ``memfd``). A denied call fails with ``EPERM``; a call of another
architecture's ABI (i386, x32) kills the process, since its numbers would bypass the list.
The numbers are x86_64's; on another architecture there is no filter (the sandbox holds
without it: no capabilities, an unprivileged uid) and ``seccomp_filter()`` returns ``None``.
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["DENIED", "seccomp_filter"]

#: x86_64 system call numbers denied to a script (``asm/unistd_64.h``).
DENIED: dict[str, int] = {
    # mounts, old and new API, and the mount table
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429,
    "open_tree": 428, "mount_setattr": 442, "statmount": 457, "listmount": 458,
    "open_tree_attr": 467, "open_by_handle_at": 304, "name_to_handle_at": 303,
    # other processes
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "pidfd_getfd": 438, "process_madvise": 440,
    # namespaces, keyrings
    "unshare": 272, "setns": 308, "add_key": 248, "request_key": 249, "keyctl": 250,
    # the kernel itself
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "create_module": 174, "get_kernel_syms": 177, "query_module": 178,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "syslog": 103, "lookup_dcookie": 212,
    "uselib": 134, "_sysctl": 156, "nfsservctl": 180, "personality": 135, "fanotify_init": 300,
    "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "quotactl": 179,
    "quotactl_fd": 443, "vhangup": 153, "iopl": 172, "ioperm": 173, "sethostname": 170,
    "setdomainname": 171, "move_pages": 279, "migrate_pages": 256,
    # clocks
    "settimeofday": 164, "clock_settime": 227, "adjtimex": 159, "clock_adjtime": 305,
    # memory outside the accounting: SysV IPC outlives its processes, memfd is unbounded
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65,
    "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "memfd_create": 319, "memfd_secret": 447,
}  # fmt: skip

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000


def _insn(code: int, jt: int = 0, jf: int = 0, k: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_filter() -> bytes | None:
    """The compiled program (``struct sock_filter[]``), or ``None`` off x86_64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    numbers = sorted(set(DENIED.values()))
    deny_at = len(numbers) + 1  # jump distance from the first comparison to the EPERM return
    program = [
        _insn(_LD_W_ABS, k=4),  # seccomp_data.arch
        _insn(_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
        _insn(_RET_K, k=_KILL_PROCESS),
        _insn(_LD_W_ABS, k=0),  # seccomp_data.nr
        _insn(_JGE_K, deny_at, 0, _X32_BIT),
    ]
    for index, number in enumerate(numbers):
        program.append(_insn(_JEQ_K, deny_at - 1 - index, 0, number))
    program.append(_insn(_RET_K, k=_ALLOW))
    program.append(_insn(_RET_K, k=_ERRNO | errno.EPERM))
    return b"".join(program)
