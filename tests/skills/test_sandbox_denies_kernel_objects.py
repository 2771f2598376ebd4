"""The Cloud Skill sandbox refuses every kernel object a script could take outside its bounds:
memory no process's Rss shows, or a pool the host shares. Each test runs the attack in the real
sandbox (real bubblewrap) and asserts two things: the script was refused, and, sampled from
outside while it held what it could (``tests/skills/_outside.py``), the sandbox held none of it.
(The objects it may take, but only so many of, are counted: ``test_sandbox_counts_...``.)
"""

from __future__ import annotations

import errno
import json
from typing import Any

import pytest

from client.skills._execute import ScriptLimits, find_sandbox, interpreter_for, run_script
from tests._servers import HANG_S
from tests.skills._outside import Held, holding, marker

SANDBOX = find_sandbox()
pytestmark = [
    pytest.mark.slow,  # every test starts the sandbox
    pytest.mark.skipif(SANDBOX is None, reason="bubblewrap cannot run here"),
]
#: How long a script keeps what it took, so that the sampler sees it (never a bound).
HOLD_S = "1.0"

# The scripts call the kernel directly: an attacker needs no library's consent.
PREAMBLE = (
    "import ctypes, json, mmap, os, socket, sys, time\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def call(nr, *a):\n"
    "    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])\n"
    "    return 0 if r >= 0 else ctypes.get_errno()\n"
    "def ptr(data):\n"
    "    b = ctypes.create_string_buffer(data, max(len(data), 8)); KEEP.append(b)\n"
    "    return ctypes.addressof(b)\n"
    "KEEP = []\n"
    "def hold(report):\n"
    "    print(json.dumps(report), flush=True); time.sleep(float(sys.argv[2]))\n"
)


def _attack(script: str) -> tuple[dict[str, Any], Held]:
    """Run ``script`` in the sandbox while sampling it; its report (last line) and the maxima."""
    python = interpreter_for("text/x-python")
    assert python is not None
    word = marker()
    with holding(word) as held:
        run = run_script(
            PREAMBLE + script, python, [word, HOLD_S], ScriptLimits(timeout_s=HANG_S), SANDBOX
        )
    assert run.stdout, (run.stopped_by, run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1]), held


def test_no_socket_of_any_family_is_created_so_none_buffers_kernel_memory() -> None:
    report, held = _attack(
        "out, kept = {}, []\n"
        "for name, (family, kind) in {'unix_stream_pair': (1, 1), 'unix_dgram_pair': (1, 2)}"
        ".items():\n"
        "    try:\n        kept += socket.socketpair(family, kind); out[name] = 0\n"
        "    except OSError as e:\n        out[name] = e.errno\n"
        "for name, (family, kind) in {'unix': (1, 1), 'tcp': (2, 1), 'udp': (2, 2),\n"
        "                             'tcp6': (10, 1), 'netlink': (16, 3)}.items():\n"
        "    try:\n        kept.append(socket.socket(family, kind)); out[name] = 0\n"
        "    except OSError as e:\n        out[name] = e.errno\n"
        "queued = 0\n"  # what the attack does with them: fill their buffers, never read
        "for s in kept:\n"
        "    s.setblocking(False)\n"
        "    try:\n"
        "        while queued < (4 << 20):\n            queued += s.send(b'x' * 65536)\n"
        "    except OSError:\n        pass\n"
        "out['queued'] = queued\nhold(out)\n"
    )
    assert report.pop("queued") == 0
    assert report == dict.fromkeys(report, errno.EPERM) and len(report) == 7, report
    assert held.samples > 0 and held["socket"] == 0, held.maxima


def test_no_pseudo_terminal_is_taken_from_the_hosts_pool() -> None:
    report, held = _attack(
        "out, fds = {'dev': sorted(os.listdir('/dev'))}, []\n"
        "for path in ('/dev/ptmx', '/dev/pts/ptmx'):\n"
        "    for _ in range(16):\n"
        "        try:\n            fds.append(os.open(path, os.O_RDWR | os.O_NOCTTY))\n"
        "        except OSError as e:\n            out[path] = e.errno; break\n"
        "out['opened'] = len(fds)\nhold(out)\n"
    )
    assert report == {
        "dev": ["null", "random", "shm", "urandom"],
        "/dev/ptmx": errno.ENOENT,
        "/dev/pts/ptmx": errno.ENOENT,
        "opened": 0,
    }
    # kernel.pty.nr is the host's: the script tried 32; others may open a few meanwhile
    assert held.samples > 0 and held["ptys"] < 16, held.maxima


def test_no_shared_memory_is_taken_that_no_process_rss_shows() -> None:
    # Touched, then MADV_DONTNEED: the pages stay in the shared object, out of every Rss.
    report, held = _attack(
        "out, kept = {}, []\n"
        "def take(name, make):\n"
        "    try:\n        m = make()\n"
        "    except OSError as e:\n        out[name] = e.errno; return\n"
        "    for at in range(0, len(m), 1 << 20):\n"
        "        m[at:at + (1 << 20)] = b'x' * (1 << 20)\n"
        "    m.madvise(mmap.MADV_DONTNEED); kept.append(m); out[name] = 0\n"
        "take('anonymous', lambda: mmap.mmap(-1, 8 << 20))\n"
        "take('dev_zero', lambda: mmap.mmap(os.open('/dev/zero', os.O_RDWR), 8 << 20))\n"
        "take('memfd', lambda: mmap.mmap(os.memfd_create('m'), 0))\n"
        "hold(out)\n"
    )
    assert report == {"anonymous": errno.EPERM, "dev_zero": errno.ENOENT, "memfd": errno.EPERM}
    assert held.samples > 0 and held["shared_anonymous"] == 0, held.maxima


# name: (what the script does 16 times, each result an errno or 0; what the sampler counts)
KERNEL_OBJECTS = {
    "epoll": ("call(291, 0)", "anon_inode:[eventpoll]"),
    "inotify": ("call(294, 0)", "anon_inode:inotify"),
    "eventfd": ("call(290, 0, 0)", "anon_inode:[eventfd]"),
    "timerfd": ("call(283, 1, 0)", "anon_inode:[timerfd]"),
    "signalfd": ("call(289, -1, ptr(bytes(8)), 8, 0)", "anon_inode:[signalfd]"),
    "landlock": ("call(444, ptr((4).to_bytes(8, 'little')), 8, 0)", "anon_inode:landlock-ruleset"),
    "posix_timer": ("call(222, 1, 0, ptr(bytes(8)))", "queued_signals"),
    "aio_context": ("call(206, 256, ptr(bytes(8)))", "aio_events"),
    # one more filter each time: RET ALLOW (a struct sock_fprog of one instruction)
    "seccomp_filter": (
        "call(317, 1, 0, ptr((1).to_bytes(8, 'little') + ptr((6).to_bytes(2, 'little')"
        " + bytes(2) + (0x7FFF0000).to_bytes(4, 'little')).to_bytes(8, 'little')))",
        "seccomp_filters",
    ),
    "ofd_lock": (
        # F_OFD_SETLK, a write lock on a byte of its own: each a lock that names no process
        "call(72, FD, 37, ptr((1).to_bytes(2, 'little') + bytes(6)"
        " + (2 * len(tries)).to_bytes(8, 'little') + (1).to_bytes(8, 'little') + bytes(8)))",
        "place_locks",
    ),
}


@pytest.mark.parametrize("name", sorted(KERNEL_OBJECTS))
def test_kernel_objects_outside_the_accounting_are_refused(name: str) -> None:
    action, counted = KERNEL_OBJECTS[name]
    report, held = _attack(
        "FD = os.open('/work/locked', os.O_RDWR | os.O_CREAT)\ntries = []\n"
        f"for _ in range(16):\n    tries.append({action})\n"
        "hold({'tries': tries})\n"
    )
    assert report["tries"] == [errno.EPERM] * 16, report
    # bubblewrap's own seccomp filter is one; a child's exit queues a signal for a moment
    tolerated = {"seccomp_filters": 1, "queued_signals": 1}.get(counted, 0)
    assert held.samples > 0 and held[counted] <= tolerated, held.maxima


def test_no_memory_is_locked_and_few_signals_are_queued() -> None:
    report, held = _attack(
        "import resource as r, signal\n"
        "out = {n: r.getrlimit(getattr(r, 'RLIMIT_' + n))[0] for n in"
        " ('MEMLOCK', 'SIGPENDING', 'RTPRIO', 'NICE')}\n"
        # lock pages of the read-only runtime: host page cache no process's Rss counts
        "libc.mmap.restype = ctypes.c_void_p\n"
        "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,"
        " ctypes.c_int, ctypes.c_long]\n"
        "at = libc.mmap(None, 4 << 20, 1, 2, os.open(sys.executable, os.O_RDONLY), 0)\n"
        "locked = libc.mlock(ctypes.c_void_p(at), 4 << 20)\n"
        "out['mlock'] = 0 if locked == 0 else ctypes.get_errno()\n"
        # real-time signals queued to itself, blocked so that each stays queued
        "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])\n"
        "info = (int(signal.SIGRTMIN)).to_bytes(4, 'little') + bytes(4)"
        " + (-1).to_bytes(4, 'little', signed=True) + bytes(116)\n"
        "out['queued'] = sum(call(129, os.getpid(), int(signal.SIGRTMIN), ptr(info)) == 0"
        " for _ in range(256))\n"
        "hold(out)\n"
    )
    assert report["mlock"] == errno.EPERM and report["queued"] <= 64, report
    assert (report["MEMLOCK"], report["SIGPENDING"], report["RTPRIO"], report["NICE"]) == (
        0,
        64,
        0,
        0,
    )
    assert held.samples > 0 and held["locked_bytes"] == 0, held.maxima
    assert held["queued_signals"] <= 64 + 1, held.maxima  # + a child's exit, for a moment
