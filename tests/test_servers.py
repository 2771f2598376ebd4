"""The test helpers that hold on a busy machine: readiness waits that only a hang ends, stops
that take the whole process group, the guard against a child left running, and cost growth
measured in CPU time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._cost import FACTOR, LINEAR_GROWTH, growth
from tests._leaks import leaked_children
from tests._servers import (
    HANG_S,
    alive,
    child_process,
    children_of,
    counting_listener,
    refused_port,
    run_child,
    stop_group,
    wait_until,
)


class _FakeClock:
    """A clock that moves only when the wait sleeps: a start of any length, in no time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_slow_start_is_waited_for_as_long_as_it_takes_short_of_a_hang() -> None:
    """A start that takes three minutes (a collector at a load average of 20) is waited for:
    the old 20 s deadline failed it. Few polls: the interval grows."""
    clock = _FakeClock()
    polls = wait_until(lambda: clock.now >= 180.0, what="slow", clock=clock, sleep=clock.sleep)
    assert 180.0 <= clock.now < HANG_S
    assert polls < 400


def test_a_hang_is_caught_at_the_limit() -> None:
    clock = _FakeClock()
    with pytest.raises(TimeoutError, match="hung"):
        wait_until(lambda: False, what="stuck", clock=clock, sleep=clock.sleep)
    assert HANG_S <= clock.now < HANG_S + 1


def test_a_process_that_died_fails_the_wait_at_once() -> None:
    clock = _FakeClock()
    with pytest.raises(RuntimeError, match="exited"):
        wait_until(lambda: False, what="dead", alive=lambda: False, clock=clock, sleep=clock.sleep)
    assert clock.now == 0.0


_SPAWNER = (
    "import signal, subprocess, sys, time\n"
    # TERM is ignored from before the test can send it (the pid line is its cue).
    "signal.signal(signal.SIGTERM, lambda *a: None)\n"
    "kid = subprocess.Popen(['sleep', '600'])\n"
    "print(kid.pid, flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.mark.slow  # starts processes
def test_a_failing_test_still_stops_the_child_and_its_grandchildren() -> None:
    """The body raises; the child ignores SIGTERM; its grandchild is in its group. Both are
    gone when the block ends (the old helper sent one SIGTERM to the child alone)."""
    cmd = [sys.executable, "-c", _SPAWNER]
    with pytest.raises(AssertionError, match="the test failed"):
        with child_process(cmd, stdout=subprocess.PIPE, text=True, grace_s=0.5) as child:
            assert child.popen.stdout is not None
            grandchild = int(child.popen.stdout.readline())
            assert children_of(child.pid) == [grandchild]
            raise AssertionError("the test failed")
    assert child.popen.returncode == -signal.SIGKILL
    wait_until(lambda: not alive(grandchild), what="the grandchild's end")


@pytest.mark.slow  # starts a process
def test_the_guard_finds_and_stops_a_child_left_running() -> None:
    with leaked_children() as leaked:
        left = subprocess.Popen(["sleep", "600"])
        done = subprocess.Popen(["true"])
        done.wait()
    assert leaked == [left]
    assert left.returncode == -signal.SIGKILL


@pytest.mark.slow  # starts a process
def test_stop_group_of_a_graceful_child_is_its_own_exit() -> None:
    with child_process([sys.executable, "-c", "import time; time.sleep(600)"]) as child:
        assert stop_group(child.popen) == -signal.SIGTERM


@pytest.mark.slow  # starts a process
def test_run_child_returns_what_the_child_wrote_and_its_exit_code() -> None:
    code = "import sys; print(sys.stdin.read().upper()); sys.stderr.write('e'); sys.exit(3)"
    done = run_child([sys.executable, "-c", code], input="hello")
    assert (done.returncode, done.stdout, done.stderr) == (3, "HELLO\n", "e")
    with pytest.raises(subprocess.CalledProcessError):
        run_child([sys.executable, "-c", code], input="", check=True)


_HANGS = (
    "import pathlib, subprocess, sys, time\n"
    "kid = subprocess.Popen(['sleep', '600'])\n"
    "pathlib.Path(sys.argv[1]).write_text(str(kid.pid))\n"
    "time.sleep(600)\n"
)


@pytest.mark.slow  # starts processes
def test_run_child_stops_the_whole_group_of_a_child_that_hangs(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    with pytest.raises(TimeoutError, match="hung"):
        run_child([sys.executable, "-c", _HANGS, str(pid_file)], hang_s=2.0)
    if pid_file.exists():  # the child got that far before its hang limit (a busy machine may not)
        grandchild = int(pid_file.read_text())
        wait_until(lambda: not alive(grandchild), what="the grandchild's end")


@pytest.mark.slow  # starts a process
def test_alive_is_false_for_a_process_that_ended() -> None:
    assert alive(os.getpid())
    with child_process([sys.executable, "-c", "pass"]) as child:
        child.popen.wait()
    assert not alive(child.pid)


def test_the_counting_listener_records_each_connection_and_answers_200() -> None:
    import httpx

    with counting_listener() as (url, seen):
        with httpx.Client(trust_env=False, timeout=HANG_S) as client:
            answer = client.post(url + "/v1/signals", json={"signals": []})
    assert answer.status_code == 200 and answer.json() == {"accepted": 1, "duplicates": 0}
    assert len(seen) == 1 and seen[0].startswith(b"POST /v1/signals ")


def test_a_refused_port_refuses_for_the_whole_block() -> None:
    import socket

    with refused_port() as port:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=HANG_S).close()


def test_growth_tells_linear_from_quadratic() -> None:
    """The ratio the complexity tests rely on, on work whose growth is known."""
    n = 20_000
    linear = growth(lambda: sum(range(n)), lambda: sum(range(FACTOR * n)))
    m = 300
    quadratic = growth(
        lambda: [i * j for i in range(m) for j in range(m)],
        lambda: [i * j for i in range(FACTOR * m) for j in range(FACTOR * m)],
    )
    assert linear <= LINEAR_GROWTH < quadratic


def test_growth_counts_cpu_not_waiting() -> None:
    """Time spent off the CPU (a busy machine's wait for a core, here a sleep) is not cost."""
    n = 20_000

    def waits_then_works() -> int:
        time.sleep(0.05)
        return sum(range(FACTOR * n))

    assert growth(waits_then_works, lambda: sum(range(FACTOR * n))) < 2
