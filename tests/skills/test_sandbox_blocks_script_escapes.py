"""The bubblewrap sandbox a Cloud Skill script runs in: each escape is tried, inside it, and
must fail: reading the token from the parent's environment, connecting out, reading the host's
files, writing outside its folder, allocating 768 MiB, a file or process count past its limit,
a ``setsid`` grandchild outliving the deadline. (The same attacks as root:
``tests/client/test_sandbox_escapes.py``.)
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from pathlib import Path

import pytest

from client.skills._execute import (
    ScriptLimits,
    ScriptRun,
    find_sandbox,
    interpreter_for,
    run_script,
)
from tests._servers import HANG_S, run_child, wait_until

SANDBOX = find_sandbox()
pytestmark = [
    pytest.mark.slow,  # every test starts the sandbox
    pytest.mark.skipif(SANDBOX is None, reason="bubblewrap cannot run here"),
]
PY = interpreter_for("text/x-python")
REPO = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str, timeout_s: float = 10.0) -> ScriptRun:
    assert PY is not None
    return run_script(script, PY, list(args), ScriptLimits(timeout_s=timeout_s), SANDBOX)


def test_sandbox_script_cannot_read_the_token_from_the_parent_environ() -> None:
    token = f"test-token-{uuid.uuid4().hex}"
    script = (
        "import os,sys\nfound=[]\n"
        "procs = os.listdir('/proc') if os.path.isdir('/proc') else []\n"
        "for pid in [os.getppid()] + [p for p in procs if p.isdigit()]:\n"
        "    try: data=open(f'/proc/{pid}/environ','rb').read()\n"
        "    except OSError: continue\n"
        "    found.append(sys.argv[1].encode() in data)\n"
        "print('LEAK' if any(found) else 'clean')\n"
    )
    # The host process is started WITH the token in its environment, as the MCP server was.
    host = (
        "import sys\nfrom client.skills._execute import *\nfrom client.skills._sandbox import *\n"
        "run=run_script(sys.argv[1], interpreter_for('text/x-python'), [sys.argv[2]],"
        f" ScriptLimits(timeout_s={HANG_S}), find_sandbox())\nprint(run.stdout, end='')\n"
    )
    env = {**os.environ, "LMCP_SKILLS_TOKEN": token}
    done = run_child(
        [sys.executable, "-c", host, script, token],
        env=env,
        check=True,
        hang_s=2 * HANG_S,  # only a hang: the script's own limit is HANG_S
    )
    assert done.stdout == "clean\n", done.stderr


def test_sandbox_script_cannot_connect_out() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        run = _run(
            "import socket,sys\n"
            "try:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\n"
            "    print('connected')\n"
            "except OSError as e:\n    print('refused', type(e).__name__)\n",
            str(port),
        )
    finally:
        listener.close()
    assert run.stdout.startswith("refused"), run.stdout + run.stderr


def test_sandbox_script_cannot_read_etc_hostname() -> None:
    run = _run(
        "try:\n    print(open('/etc/hostname').read())\nexcept OSError as e:\n"
        "    print('denied', type(e).__name__)\n"
    )
    assert run.stdout.startswith("denied"), run.stdout


def test_sandbox_script_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    target = tmp_path / "escape.txt"
    run = _run(
        "import sys\nok=[]\n"
        "for p in (sys.argv[1], '/usr/escape', '/srv/../escape', '/python/escape'):\n"
        "    try:\n        open(p,'w').write('x'); ok.append(p)\n"
        "    except OSError:\n        pass\n"
        "open('inside.txt','w').write('fine')\nprint(len(ok))\n",
        str(target),
    )
    assert run.stdout == "0\n", run.stdout + run.stderr
    assert not target.exists()


def test_sandbox_script_cannot_allocate_768_mib() -> None:
    run = _run("b = bytearray(768 * 1024 * 1024)\nprint('allocated')\n")
    assert "allocated" not in run.stdout
    assert run.exit_code != 0 and "MemoryError" in run.stderr


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_sandbox_setsid_grandchild_dies_at_the_deadline() -> None:
    # The grandchild sleeps past the hang limit (a unique number of seconds: its marker), the
    # script longer still, then would print: cut at the deadline, it never does; seen gone,
    # the grandchild was stopped.
    outlives = int(2 * HANG_S)
    marker = f"{outlives + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 1000:03d}7"
    run = _run(
        "import subprocess, time, sys\n"
        "subprocess.Popen(['/bin/sh', '-c', 'sleep ' + sys.argv[1]], start_new_session=True)\n"
        f"time.sleep({outlives})\nprint('woke')\n",
        marker,
        timeout_s=1.0,
    )
    assert run.timed_out and "woke" not in run.stdout
    wait_until(lambda: _processes_with(f"sleep {marker}") == [], what="the grandchild's end")


def test_sandbox_limits_file_size_and_process_count() -> None:
    big = _run(
        "try:\n    open('big','wb').write(b'x' * (32 * 1024 * 1024))\n    print('wrote')\n"
        "except OSError as e:\n    print('refused', type(e).__name__)\n"
    )
    assert big.stdout.startswith("refused"), big.stdout + big.stderr
    forks = _run(
        "import subprocess\nkids = []\n"
        "try:\n    for _ in range(200):\n"
        "        kids.append(subprocess.Popen(['/bin/sh', '-c', 'sleep 5']))\n"
        "except OSError:\n    pass\nprint(len(kids))\n",
        timeout_s=10.0,
    )
    # Either fork fails (RLIMIT_NPROC, for a non-root user) or the launcher kills the tree.
    stopped = "process limit reached" in forks.stderr and forks.exit_code != 0
    capped = forks.stdout.strip().isdigit() and int(forks.stdout) < 200
    assert stopped or capped, forks.stdout + forks.stderr
