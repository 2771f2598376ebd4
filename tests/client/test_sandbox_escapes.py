"""The Cloud Skill sandbox holds for any caller, root included: each escape an attacker tries.

CI runs these as root, the caller for whom bubblewrap used to keep every capability. Each
script reports what it managed as JSON; the test asserts that nothing got past its bound.
The classes: capabilities and uid (remount, chown, setuid, device nodes), the watchdog (stop
it, trace it, outnumber it), every writable place (scratch, ``/tmp``, ``/dev/shm``, ``/dev``),
every limit that could be per process (forks, memory in children, memory outside processes),
host facts (the mount table, ``/usr/local``, the host's Python prefix, the scratch path).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from client.skills._execute import (
    ScriptLimits,
    ScriptRun,
    find_sandbox,
    interpreter_for,
    run_script,
)
from client.skills._sandbox import MOUNT, SandboxLimits

pytestmark = [
    pytest.mark.slow,  # every test starts the sandbox
    pytest.mark.skipif(find_sandbox() is None, reason="bubblewrap cannot run here"),
]

LIMITS = SandboxLimits()
MIB = 1024 * 1024

# The scripts call the kernel directly: an attacker does not need the tools to be mounted.
LIBC = (
    "import ctypes, json, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def call(nr, *a):\n"
    "    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])\n"
    "    return 'ok' if r >= 0 else os.strerror(ctypes.get_errno())\n"
)


def _run(script: str, *args: str, timeout_s: float = 30.0) -> ScriptRun:
    python = interpreter_for("text/x-python")
    assert python is not None
    return run_script(script, python, list(args), ScriptLimits(timeout_s=timeout_s), find_sandbox())


def _report(run: ScriptRun) -> Any:
    assert run.stdout, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_script_cannot_remount_the_host_usr_and_write_into_it() -> None:
    marker = f"lmcp-escape-{uuid.uuid4().hex}"
    script = LIBC + (
        "MS_REMOUNT, MS_BIND = 32, 4096\n"
        "out = {}\n"
        "for target in ('/usr', '/', '/python', '/usr/local/share'):\n"
        "    r = libc.mount(b'none', target.encode(), None, MS_REMOUNT | MS_BIND, None)\n"
        "    out['mount ' + target] = r == 0\n"
        "import subprocess\n"
        "try:\n"
        "    subprocess.run(['mount', '-o', 'remount,bind,rw', '/usr'], capture_output=True)\n"
        "except OSError:\n    pass\n"
        "for target in ('/usr/local/share/', '/usr/', '/python/lib/', '/'):\n"
        "    try:\n        open(target + sys.argv[1], 'w').write('x')\n"
        "        out['write ' + target] = True\n"
        "    except OSError:\n        out['write ' + target] = False\n"
        "print(json.dumps(out))\n"
    )
    report = _report(_run(script, marker))
    assert not any(report.values()), report
    for host in ("/usr/local/share", "/usr", sys.base_prefix, "/"):
        assert not (Path(host) / marker).exists()


def test_a_script_runs_as_nobody_with_no_capability_and_no_new_privileges() -> None:
    script = LIBC + (
        "out = {'uid': os.getuid(), 'euid': os.geteuid(), 'gid': os.getgid(),\n"
        "       'groups': os.getgroups()}\n"
        "out['no_new_privs'] = libc.prctl(39, 0, 0, 0, 0)\n"  # PR_GET_NO_NEW_PRIVS
        "out['caps_in_bounding_set'] = [c for c in range(41) if libc.prctl(23, c, 0, 0, 0) == 1]\n"
        "for name, fn in (('setuid0', lambda: os.setuid(0)), ('setgid0', lambda: os.setgid(0)),\n"
        "                 ('chown', lambda: os.chown('f', 0, 0)),\n"
        "                 ('mknod', lambda: os.mknod('n', 0o20666, os.makedev(1, 3)))):\n"
        "    open('f', 'w').close()\n"
        "    try:\n        fn(); out[name] = True\n"
        "    except OSError:\n        out[name] = False\n"
        "print(json.dumps(out))\n"
    )
    report = _report(_run(script))
    assert (report["uid"], report["euid"], report["gid"], report["groups"]) == (
        65534,
        65534,
        65534,
        [],
    )
    assert report["no_new_privs"] == 1 and report["caps_in_bounding_set"] == []
    assert not any(report[k] for k in ("setuid0", "setgid0", "chown", "mknod")), report


def test_mount_ptrace_keyring_namespace_and_kernel_calls_are_denied_by_seccomp() -> None:
    calls = {
        "mount": (165, 0, 0, 0, 0, 0),
        "unshare_user": (272, 0x10000000),
        "setns": (308, 0, 0),
        "ptrace_attach_init": (101, 16, 1, 0, 0),
        "keyctl_session": (250, 0, -3, 0),
        "add_key": (248, 0, 0, 0, 0, 0),
        "bpf": (321, 0, 0, 0),
        "io_uring_setup": (425, 1, 0),
        "userfaultfd": (323, 0),
        "perf_event_open": (298, 0, 0, -1, -1, 0),
        "open_tree": (428, -100, 0, 0),
        "memfd_create": (319, 0, 0),
        "shmget": (29, 0, 1 << 20, 0o1600),
        "msgget": (68, 0, 0o1600),
    }
    script = LIBC + (
        "calls = json.loads(sys.argv[1])\n"
        "print(json.dumps({k: call(*v) for k, v in calls.items()}))\n"
    )
    report = _report(_run(script, json.dumps(calls)))
    assert report == dict.fromkeys(calls, os.strerror(1)), report  # EPERM, every one


def test_the_watchdog_cannot_be_stopped_or_traced_and_200_forks_stop_at_the_limit() -> None:
    script = LIBC + (
        "import signal, time\n"
        "out = {'ppid': os.getppid()}\n"
        "for pid in {os.getppid(), 1}:\n"
        "    try:\n        os.kill(pid, signal.SIGSTOP); out[f'stop {pid}'] = True\n"
        "    except OSError:\n        out[f'stop {pid}'] = False\n"
        "    out[f'trace {pid}'] = call(101, 16, pid, 0, 0)\n"  # PTRACE_ATTACH
        "kids = 0\n"
        "for _ in range(200):\n"
        "    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n"
        "    if pid == 0:\n        time.sleep(30); os._exit(0)\n"
        "    kids += 1\n"
        "out['forks'] = kids\n"
        "print(json.dumps(out), flush=True)\n"
        "time.sleep(30)\n"
    )
    run = _run(script, timeout_s=10.0)
    report = _report(run)
    assert report["forks"] < LIMITS.processes, report
    assert not any(v == "ok" for k, v in report.items() if k.startswith("trace")), report
    # SIGSTOP reached nothing that counts: the watchdog outside ended the run at its deadline
    assert run.timed_out and run.stopped_by == "deadline"


@pytest.mark.parametrize("place", [MOUNT, "/tmp", "/dev/shm", "/dev"])
def test_a_gib_written_to_a_writable_place_stops_at_its_size(place: str) -> None:
    # 8 MiB files: below the per-file limit, so only the place's own size can stop them.
    script = (
        "import json, os, sys\nplace, total = sys.argv[1], 0\nchunk = b'x' * (1 << 20)\n"
        "try:\n"
        "    for n in range(128):\n"
        "        with open(f'{place}/f{n}', 'wb') as f:\n"
        "            for _ in range(8):\n"
        "                f.write(chunk); f.flush(); total += len(chunk)\n"
        "except OSError:\n    pass\n"
        "print(json.dumps({'written': total}))\n"
    )
    report = _report(_run(script, place))
    cap = 64 * MIB if place == MOUNT else 16 * MIB  # the documented sizes (SandboxLimits)
    assert report["written"] <= cap, report


def test_16_children_of_200_mib_are_stopped_by_the_total_memory_limit() -> None:
    script = (
        "import os, sys, time\n"
        "for _ in range(16):\n"
        "    if os.fork() == 0:\n"
        "        block = b'x' * (200 * 1024 * 1024)\n"  # written: resident, not lazily zero
        "        print('allocated', flush=True); time.sleep(30); os._exit(0)\n"
        "time.sleep(30)\n"
    )
    run = _run(script, timeout_s=20.0)
    assert run.stdout.count("allocated") < 16, run.stdout
    assert run.stopped_by == "memory", (run.stopped_by, run.stderr)


def test_shared_anonymous_memory_in_children_is_refused() -> None:
    # Its pages would outlive their mapping (MADV_DONTNEED, a partial munmap) in no Rss; the
    # shared memory a script may have is a file in /dev/shm, bounded by that tmpfs's size.
    script = (
        "import mmap, os, time\n"
        "for _ in range(16):\n"
        "    if os.fork() == 0:\n"
        "        try:\n"
        "            m = mmap.mmap(-1, 200 * 1024 * 1024, flags=mmap.MAP_SHARED)\n"
        "        except OSError as e:\n"
        "            print('refused', e.errno, flush=True); os._exit(0)\n"
        "        for at in range(0, len(m), 1 << 20):\n"
        "            m[at:at + (1 << 20)] = b'x' * (1 << 20)\n"
        "        print('mapped', flush=True); time.sleep(30); os._exit(0)\n"
        "    os.wait()\n"
    )
    run = _run(script, timeout_s=20.0)
    assert run.stdout == "refused 1\n" * 16, (run.stdout, run.stopped_by)


def test_the_mount_table_and_the_filesystem_show_no_host_fact() -> None:
    script = (
        "import json, os, sys\nout = {}\n"
        "for p in ('/proc/self/mountinfo', '/proc/mounts', '/proc/1/environ'):\n"
        "    try:\n        out[p] = open(p).read()\n"
        "    except OSError:\n        out[p] = None\n"
        "for p in ('/usr/local/etc', '/usr/local', '/etc', '/root', '/home', sys.argv[1]):\n"
        "    try:\n        out[p] = os.listdir(p)\n"
        "    except OSError:\n        out[p] = None\n"
        "out['prefix'] = sys.prefix\nout['cwd'] = os.getcwd()\n"
        "print(json.dumps(out))\n"
    )
    host_prefix = os.path.realpath(sys.base_prefix)
    report = _report(_run(script, host_prefix))
    shown = json.dumps({k: v for k, v in report.items() if k != host_prefix})
    assert host_prefix not in shown and "lmcp-skill-" not in shown
    assert all(report[p] is None for p in report if p.startswith("/")), report
    assert (report["prefix"], report["cwd"]) == ("/python", MOUNT)
