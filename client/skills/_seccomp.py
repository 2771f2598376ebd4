"""The seccomp filter a Cloud Skill script runs under: a small classic-BPF program, built here.

bubblewrap loads it (``--seccomp FD``) right before it starts the script, after it has set up
the sandbox, with ``no_new_privs`` set. The filter is a deny list of the calls a script never
needs and an escape does: mounting and the new mount API, ``ptrace`` and reading other
processes' memory, keyrings, namespaces, modules, kexec, BPF, ``io_uring``, ``userfaultfd``,
clocks; and every kernel object that would hold memory outside the sandbox's accounting or
take from a pool the host shares (``DENIED``, by call; ``DENIED_WHEN``, by one argument):
SysV IPC and ``memfd``, sockets, epoll, inotify, event/timer/signal descriptors, POSIX timers,
AIO contexts, message queues, Landlock rulesets, more seccomp filters, shared anonymous
mappings, larger pipes, OFD locks, leases and directory notifications. What the script may
still create is counted from outside (``client/skills/_watchdog.py``). A denied call fails with
``EPERM``; a call of another architecture's ABI (i386, x32) kills the process, since its
numbers would bypass the list. The numbers are x86_64's; on another architecture there is no
filter (the sandbox holds without it: no capabilities, an unprivileged uid) and
``seccomp_filter()`` returns ``None``.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

__all__ = ["DENIED", "DENIED_WHEN", "ArgRule", "seccomp_filter"]

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
    # kernel objects no process's Rss shows, or pools shared with the host: socket buffers
    # (the network is unshared already), epoll items, inotify instances and watches, event,
    # timer and signal descriptors, POSIX timers, AIO rings (aio-max-nr), message queues,
    # Landlock rules, stacked seccomp filters
    "socket": 41, "socketpair": 53, "epoll_create": 213, "epoll_create1": 291,
    "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254, "eventfd": 284,
    "eventfd2": 290, "timerfd_create": 283, "signalfd": 282, "signalfd4": 289,
    "timer_create": 222, "io_setup": 206, "io_destroy": 207, "io_getevents": 208,
    "io_submit": 209, "io_cancel": 210, "io_pgetevents": 333, "mq_open": 240,
    "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446, "seccomp": 317,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ArgRule:
    """Deny call ``number`` when its argument ``arg`` (its low 32 bits), masked, is a value."""

    number: int
    arg: int
    values: tuple[int, ...]
    mask: int = 0xFFFFFFFF


#: Calls denied for some values of one argument (every one an ``int`` or flag word).
DENIED_WHEN: dict[str, ArgRule] = {
    # MAP_SHARED | MAP_ANONYMOUS: its pages stay allocated after MADV_DONTNEED or a partial
    # munmap, in no process's Rss (a file in /dev/shm is the shared memory that is counted)
    "mmap": ArgRule(9, 3, (0x21,), mask=0x21),
    # F_SETPIPE_SZ (a pipe keeps its 64 KiB), F_OFD_SETLK(W) (OFD locks name no process to
    # count them against), F_SETLEASE, F_NOTIFY
    "fcntl": ArgRule(72, 1, (1031, 37, 38, 1024, 1026)),
    # PR_SET_SECCOMP (stacked filters), PR_SET_DUMPABLE (hiding /proc from the watchdog)
    "prctl": ArgRule(157, 0, (22, 4)),
}

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_ARGS_AT = 16  # offsetof(struct seccomp_data, args): 8 bytes each, little-endian
_DENY = "deny"

# One instruction: (code, k, label jumped to when true, label when false); a str is a label.
_Item = tuple[int, int, str | None, str | None] | str


def _assemble(items: list[_Item]) -> bytes:
    """The program, with each jump's label turned into its forward distance (at most 255)."""
    at: dict[str, int] = {}
    count = 0
    for item in items:
        if isinstance(item, str):
            at[item] = count
        else:
            count += 1
    out = []
    index = 0
    for item in items:
        if isinstance(item, str):
            continue
        code, k, true, false = item
        jumps = [0 if label is None else at[label] - index - 1 for label in (true, false)]
        if not all(0 <= jump <= 255 for jump in jumps):
            raise ValueError("a seccomp jump reaches too far")
        out.append(struct.pack("=HBBI", code, jumps[0], jumps[1], k))
        index += 1
    return b"".join(out)


def seccomp_filter() -> bytes | None:
    """The compiled program (``struct sock_filter[]``), or ``None`` off x86_64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    items: list[_Item] = [
        (_LD_W_ABS, 4, None, None),  # seccomp_data.arch
        (_JEQ_K, _AUDIT_ARCH_X86_64, "native", None),
        (_RET_K, _KILL_PROCESS, None, None),
        "native",
        (_LD_W_ABS, 0, None, None),  # seccomp_data.nr
        (_JGE_K, _X32_BIT, _DENY, None),
    ]
    items += [(_JEQ_K, number, _DENY, None) for number in sorted(set(DENIED.values()))]
    items += [(_JEQ_K, rule.number, name, None) for name, rule in DENIED_WHEN.items()]
    items.append((_RET_K, _ALLOW, None, None))
    for name, rule in DENIED_WHEN.items():
        items += [name, (_LD_W_ABS, _ARGS_AT + 8 * rule.arg, None, None)]
        if rule.mask != 0xFFFFFFFF:
            items.append((_AND_K, rule.mask, None, None))
        items += [(_JEQ_K, value, _DENY, None) for value in rule.values]
        items.append((_RET_K, _ALLOW, None, None))
    items += [_DENY, (_RET_K, _ERRNO | errno.EPERM, None, None)]
    return _assemble(items)
