"""Script execution on the client: a time limit, a scrubbed environment, a temporary working
directory, bounded output, and nothing left running."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from client.skills._execute import (
    ScriptLimits,
    interpreter_for,
    run_script,
    scrubbed_env,
)
from tests._servers import HANG_S, alive, wait_until

pytestmark = pytest.mark.slow  # every test here starts a process

PY = interpreter_for("text/x-python")
SH = interpreter_for("text/x-shellscript")
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX process groups and /bin/sh")


#: A script or child sleeping this long outlives any hang limit: if the test sees it end, it
#: was stopped.
OUTLIVES_S = int(2 * HANG_S)


def test_runs_a_python_script_with_its_arguments() -> None:
    assert PY is not None
    run = run_script("import sys\nprint(sys.argv[1:])\n", PY, ["a b", "--x"])
    assert (run.exit_code, run.stdout, run.timed_out) == (0, "['a b', '--x']\n", False)


def test_reports_a_non_zero_exit_and_stderr() -> None:
    assert PY is not None
    run = run_script("import sys\nsys.stderr.write('bad')\nsys.exit(3)\n", PY, [])
    assert (run.exit_code, run.stderr) == (3, "bad")


def test_time_limit_stops_the_script() -> None:
    assert PY is not None
    # Cut short, not waited for: a script sat out to its end would print after its sleep.
    script = f"import time\ntime.sleep({OUTLIVES_S})\nprint('woke')\n"
    run = run_script(script, PY, [], ScriptLimits(timeout_s=0.5))
    assert run.timed_out and run.exit_code is None and "woke" not in run.stdout


def test_scrubbed_environment_holds_nothing_of_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    assert PY is not None
    monkeypatch.setenv("LMCP_SKILLS_TOKEN", "test-token-must-not-leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-must-not-leak")
    run = run_script("import os, json\nprint(json.dumps(dict(os.environ)))\n", PY, [])
    env = json.loads(run.stdout)
    assert "must-not-leak" not in run.stdout
    allowed = set(scrubbed_env("/x")) | {"LC_CTYPE", "PWD", "SHLVL", "_"}
    assert set(env) <= allowed
    assert env["HOME"] == env["TMPDIR"]


def test_python_runs_isolated_from_python_variables_and_user_site(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert PY is not None
    (tmp_path / "sitecustomize.py").write_text("print('hijacked')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    run = run_script("import sys\nprint(sys.flags.isolated)\n", PY, [])
    assert run.stdout == "1\n"


def test_runs_in_a_temporary_working_directory_removed_afterwards() -> None:
    assert PY is not None
    script = "import os\nopen('left-behind.txt', 'w').write('x')\nprint(os.getcwd())\n"
    run = run_script(script, PY, [])
    workdir = Path(run.stdout.strip())
    assert workdir.name.startswith("lmcp-skill-")
    assert workdir != Path.cwd()
    assert not workdir.exists()


def test_output_is_bounded_and_marked_truncated() -> None:
    assert PY is not None
    script = "import sys\nsys.stdout.write('x' * 1_000_000)\nsys.stderr.write('e' * 10)\n"
    run = run_script(script, PY, [], ScriptLimits(max_output_bytes=1000))
    assert len(run.stdout) == 1000 and run.stdout_truncated
    assert run.stderr == "e" * 10 and not run.stderr_truncated


def test_stdin_is_closed() -> None:
    assert PY is not None
    run = run_script("import sys\nprint(repr(sys.stdin.read()))\n", PY, [])
    assert run.stdout == "''\n"


@posix_only
def test_a_shell_script_runs_with_bin_sh() -> None:
    assert SH is not None
    run = run_script('echo "hello $1"\n', SH, ["there"])
    assert run.stdout == "hello there\n"


@posix_only
def test_nothing_the_script_started_is_left_running(tmp_path: Path) -> None:
    assert SH is not None
    pid_file = tmp_path / "child.pid"
    woke = tmp_path / "woke"
    script = f"(sleep {OUTLIVES_S}; touch {woke}) &\necho $! > {pid_file}\necho started\n"
    run = run_script(script, SH, [])
    # The run ends with the script, not with its child (which holds the output pipes): a run
    # that waited for the child would see it end by itself, and the file it leaves.
    assert run.stdout == "started\n"
    child = int(pid_file.read_text())
    # Killed, not left to end by itself: it would sleep past the hang limit.
    wait_until(lambda: not alive(child), what="the script's background child")
    assert not woke.exists()


def test_only_known_interpreters() -> None:
    assert interpreter_for("text/x-ruby") is None
    assert PY is not None and PY.argv == (sys.executable, "-I")


def test_platforms_without_waitid_still_time_out_and_clean_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert PY is not None
    monkeypatch.delattr(os, "waitid", raising=False)
    quick = run_script("print('ok')\n", PY, [])
    assert (quick.exit_code, quick.stdout) == (0, "ok\n")
    slow = run_script("import time\ntime.sleep(60)\n", PY, [], ScriptLimits(timeout_s=0.3))
    assert slow.timed_out
