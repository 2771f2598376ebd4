"""Data that costs, built once per test run and shared by the pytest-xdist workers: ``built_once``.

Each worker is a process of its own, so a session fixture runs once per worker: three workers
built the synthetic file (seconds of release sampling) three times. ``built_once`` builds a
file once in the run's temporary folder, which every worker of the run shares; the first
worker to ask builds it under a lock, the others wait for it (waiting costs no CPU) and use it.
A build that fails leaves nothing marked built: the next worker to ask tries again.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["built_once"]


def _run_folder(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    # Under xdist, each worker's base is <the run's base>/popen-gwN: its parent is shared.
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """The file ``name`` as ``build(path)`` wrote it, built by one worker of this run only."""
    folder = _run_folder(factory) / "built-once"
    folder.mkdir(exist_ok=True)
    target = folder / name
    built = folder / f"{name}.built"
    with (folder / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, failed or not
        if not built.exists():
            build(target)
            built.touch()
    return target
