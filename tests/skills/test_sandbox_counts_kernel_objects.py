"""The kernel objects a Cloud Skill script may take, but only so many of: the watchdog counts
them from outside and stops the run past its limit (``stopped_by``). Each test runs the attack
in the real sandbox (real bubblewrap) with small limits, and asserts that the run was stopped
for that limit AND that, sampled from outside (``tests/skills/_outside.py``), the sandbox never
held what the attack was after. The attacks are paced (a pause every batch), so that what the
sampler sees is what the sandbox keeps, not one burst between two of the watchdog's polls.
(The objects it may not take at all: ``test_sandbox_denies_kernel_objects.py``.)
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import uuid

import pytest

from client.skills._execute import (
    ScriptLimits,
    ScriptRun,
    find_sandbox,
    interpreter_for,
    run_script,
)
from client.skills._sandbox import SandboxLimits
from tests._servers import HANG_S, run_child, wait_until
from tests.skills._outside import Held, holding, marker

SANDBOX = find_sandbox()
pytestmark = [
    pytest.mark.slow,  # every test starts the sandbox
    pytest.mark.skipif(SANDBOX is None, reason="bubblewrap cannot run here"),
]
#: How long a script keeps what it took once it has all of it (never a bound).
HOLD_S = "1.0"

PREAMBLE = (
    "import ctypes, fcntl, json, os, sys, time\n"
    "def paced(batches, each):\n"  # one batch, then a pause: a leak, not a burst
    "    for n in range(batches):\n        each(n); time.sleep(0.002)\n"
    "def hold(report):\n"
    "    print(json.dumps(report), flush=True); time.sleep(float(sys.argv[2]))\n"
)


def _attack(script: str, limits: SandboxLimits) -> tuple[ScriptRun, Held]:
    python = interpreter_for("text/x-python")
    assert python is not None
    word = marker()
    with holding(word, limits) as held:
        run = run_script(
            PREAMBLE + script,
            python,
            [word, HOLD_S],
            ScriptLimits(timeout_s=HANG_S, sandbox=limits),
            SANDBOX,
        )
    return run, held


# name: (one batch of the attack, batches; each batch takes about 64 inode units: an inode, a
# link, or a KiB of extended attributes)
INODE_ATTACKS = {
    "empty_files": (
        "lambda n: [open(f'{PLACES[n % 3]}/{n:04}-{i:0>200}', 'w').close() for i in range(64)]",
        100,
    ),
    "directories": ("lambda n: [os.mkdir(f'{PLACES[n % 3]}/d{n}-{i}') for i in range(64)]", 100),
    "hard_links": ("lambda n: [os.link(ONE, f'/work/l{n}-{i:0>200}') for i in range(64)]", 100),
    "extended_attributes": (
        "lambda n: [os.setxattr(ONE, f'user.{n}.{i}', b'x' * 3000) for i in range(20)]",
        100,
    ),
}


@pytest.mark.parametrize("name", sorted(INODE_ATTACKS))
def test_tmpfs_inodes_past_the_limit_stop_the_run(name: str) -> None:
    # --size bounds the data pages of a tmpfs, not its inodes, links or extended attributes:
    # each is slab the kernel keeps until the mount goes.
    batch, batches = INODE_ATTACKS[name]
    run, held = _attack(
        "PLACES = ('/work', '/tmp', '/dev/shm')\nONE = '/work/one'\nopen(ONE, 'w').close()\n"
        f"paced({batches}, {batch})\nhold({{'all': True}})\n",
        SandboxLimits(inodes=512),
    )
    assert run.stopped_by == "inodes" and '"all"' not in run.stdout, (run.stopped_by, run.stderr)
    assert held.samples > 0 and held["inodes"] < 64 * batches // 2, held.maxima


def test_memory_mappings_past_the_limit_stop_the_run() -> None:
    # Every mapping is a kernel object whether a page of it is touched or not: alternate
    # protections keep neighbours from merging.
    run, held = _attack(
        "libc = ctypes.CDLL(None)\nlibc.mmap.restype = ctypes.c_void_p\n"
        "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,"
        " ctypes.c_int, ctypes.c_long]\n"
        "paced(80, lambda n: [libc.mmap(None, 4096, 1 + (i & 1), 0x22, -1, 0)"
        " for i in range(256)])\n"
        "hold({'all': True})\n",
        SandboxLimits(mappings=1024),
    )
    assert run.stopped_by == "mappings" and '"all"' not in run.stdout, (run.stopped_by, run.stderr)
    assert held.samples > 0 and held["mappings"] < 80 * 256 // 2, held.maxima


def test_posix_locks_past_the_limit_stop_the_run() -> None:
    # A lock per byte range: one file carries any number of them, each kernel memory.
    run, held = _attack(
        "files = [open(f'/work/f{i}', 'w') for i in range(8)]\n"
        "paced(100, lambda n: [fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2 * (8 * n + i))"
        " for f in files for i in range(8)])\n"
        "hold({'all': True})\n",
        SandboxLimits(locks=128),
    )
    assert run.stopped_by == "locks" and '"all"' not in run.stdout, (run.stopped_by, run.stderr)
    assert held.samples > 0 and held["locks"] < 100 * 64 // 2, held.maxima


def test_pipes_stay_small_and_the_descriptors_holding_them_stop_the_run() -> None:
    # Four processes each fill 28 pipes they never read; each tries to grow them to 256 KiB.
    run, held = _attack(
        "r, w = os.pipe()\n"
        "for _ in range(4):\n"
        "    if os.fork() == 0:\n"
        "        os.close(r); grown, kept = 0, []\n"
        "        def fill(n):\n"
        "            global grown\n"
        "            kept.append(os.pipe()); fd = kept[-1][1]\n"
        "            try:\n"  # F_SETPIPE_SZ
        "                fcntl.fcntl(fd, 1031, 1 << 18); grown += 1\n"
        "            except OSError as e:\n                assert e.errno == 1, e\n"
        "            os.set_blocking(fd, False)\n"
        "            try:\n"
        "                while True:\n                    os.write(fd, b'x' * 65536)\n"
        "            except BlockingIOError:\n                pass\n"
        "        paced(28, fill)\n"
        "        os.write(w, b'%d\\n' % grown); time.sleep(30); os._exit(0)\n"
        "os.close(w)\n"
        "hold({'grown': sum(map(int, os.fdopen(r).read().split()))})\n",
        SandboxLimits(descriptors=64),
    )
    assert run.stopped_by == "descriptors" and "grown" not in run.stdout, (
        run.stopped_by,
        run.stdout,
    )
    # unbounded, the attack queues 4 x 28 x 256 KiB; each pipe now holds at most 64 KiB
    assert held.samples > 0 and held["pipe_bytes"] < 4 * 28 * 64 * 1024 // 2, held.maxima


def test_a_pipe_is_never_grown_past_its_default_size() -> None:
    run, held = _attack(
        "fds, out = [], []\n"
        "for _ in range(8):\n"
        "    r, w = os.pipe(); fds.append((r, w))\n"
        "    try:\n        fcntl.fcntl(w, 1031, 1 << 20); out.append(0)\n"
        "    except OSError as e:\n        out.append(e.errno)\n"
        "    os.set_blocking(w, False)\n"
        "    try:\n"
        "        while True:\n            os.write(w, b'x' * 65536)\n"
        "    except BlockingIOError:\n        pass\n"
        "hold({'grow': out})\n",
        SandboxLimits(),
    )
    assert json.loads(run.stdout)["grow"] == [errno.EPERM] * 8, run.stdout + run.stderr
    # (+ the run's own output, waiting in its stdout pipe)
    assert held.samples > 0 and held["pipe_bytes"] <= 8 * 64 * 1024 + 4096, held.maxima


def test_a_process_the_watchdog_may_not_read_stops_the_run() -> None:
    # An executable it may not read makes a process "non-dumpable": its /proc entries turn
    # root's, and the watchdog could no longer count its descriptors or mappings.
    seconds = f"{40 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6:06d}7"  # its marker
    run, _ = _attack(
        "import shutil, subprocess\n"
        "shutil.copy('/bin/sleep', '/work/hidden'); os.chmod('/work/hidden', 0o111)\n"
        f"subprocess.Popen(['/work/hidden', '{seconds}'])\n"
        "time.sleep(30)\nhold({'all': True})\n",
        SandboxLimits(),
    )
    assert run.stopped_by == "unaccounted", (run.stopped_by, run.stderr)

    def gone() -> bool:
        return all(
            seconds.encode() not in _cmdline(pid) for pid in os.listdir("/proc") if pid.isdigit()
        )

    wait_until(gone, what="the hidden process's end")


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read()
    except OSError:
        return b""


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv: drops CAP_SYS_PTRACE from a root caller",
)
def test_a_root_caller_without_cap_sys_ptrace_still_counts_the_sandbox() -> None:
    # A container's default root: it may not read /proc of uid 65534 as root, so the watchdog
    # reads as 65534. Two children of 40 MiB each pass a total of 64 MiB.
    host = (
        "from client.skills._execute import *\nfrom client.skills._sandbox import *\n"
        "script = ('import os, time\\nfor _ in range(2):\\n    if os.fork() == 0:\\n'\n"
        "          '        b = b\"x\" * (40 << 20); time.sleep(30); os._exit(0)\\n'\n"
        "          'time.sleep(30)\\n')\n"
        "run = run_script(script, interpreter_for('text/x-python'), [],"
        f" ScriptLimits(timeout_s={HANG_S}, sandbox=SandboxLimits(memory_bytes=64 << 20)),"
        " find_sandbox())\nprint(run.stopped_by)\n"
    )
    done = run_child(
        [
            "setpriv",
            "--bounding-set=-sys_ptrace",
            "--inh-caps=-sys_ptrace",
            sys.executable,
            "-c",
            host,
        ],
        check=True,
        hang_s=2 * HANG_S,
    )
    assert done.stdout == "memory\n", done.stdout + done.stderr
