"""The privacy audits' closing figures, printed at the end of every run that produced them.

``test_audit_pipeline.py`` (hypothesis-drawn canaries) and ``test_audit_generated.py`` (every
kind x encoding x position) record how many canary cases ran across how many sinks in
``test-artifacts/privacy-audit*.json``; this hook prints them in pytest's terminal summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
FIGURES = (ARTIFACTS / "privacy-audit.json", ARTIFACTS / "privacy-audit-generated.json")
_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for path in FIGURES:
        try:
            if path.stat().st_mtime < _STARTED:
                continue  # from an earlier run
            figures = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        terminalreporter.write_sep("-", f"privacy audit ({path.stem})")
        terminalreporter.write_line(
            f"{figures['canary_cases']} canary cases ({figures['canary_kinds']} kinds) x "
            f"{figures['sinks']} sinks = {figures['canary_sink_checks']} canary-sink checks over "
            f"{figures['bytes_scanned']:,} bytes; {figures['signals_stored']} signals stored"
            + (f"; {figures['seconds']} s, seed {figures['seed']}" if "seed" in figures else "")
        )
