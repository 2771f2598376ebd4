"""The privacy audit's closing figures, printed at the end of every run that produced them.

``test_audit_pipeline.py`` records how many canary cases ran across how many sinks in
``test-artifacts/privacy-audit.json``; this hook prints them in pytest's terminal summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

FIGURES = Path(__file__).resolve().parent.parent / "test-artifacts" / "privacy-audit.json"
_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    try:
        if FIGURES.stat().st_mtime < _STARTED:
            return  # from an earlier run
        figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    terminalreporter.write_sep("-", "privacy audit")
    terminalreporter.write_line(
        f"{figures['canary_cases']} canary cases ({figures['canary_kinds']} kinds) x "
        f"{figures['sinks']} sinks = {figures['canary_sink_checks']} canary-sink checks over "
        f"{figures['bytes_scanned']:,} bytes; {figures['signals_stored']} signals stored"
    )
