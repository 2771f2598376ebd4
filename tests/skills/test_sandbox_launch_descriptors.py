"""The sandbox's launch closes each descriptor it handed bubblewrap exactly once: closed twice,
a number may by then be another thread's file (the MCP server's, the watchdog's reads)."""

from __future__ import annotations

import os

import pytest

from client.skills._sandbox import SandboxLimits, build_sandbox

SANDBOX = build_sandbox()


@pytest.mark.skipif(SANDBOX is None, reason="no bubblewrap or Python runtime to build it from")
def test_a_file_opened_after_the_start_keeps_its_descriptor() -> None:
    assert SANDBOX is not None
    with SANDBOX.launch(("s.py", ""), ["true"], {}, 1.0, SandboxLimits()) as launch:
        handed = list(launch.pass_fds)
        launch.started()  # the child would have its copies now; nothing is run here
        other = os.open(os.devnull, os.O_RDONLY)  # the lowest free number: one just closed
        assert other in handed
    try:
        os.fstat(other)  # still open: the launch did not close it a second time
    finally:
        os.close(other)
