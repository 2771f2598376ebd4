"""The synthetic file of the analysis tests, shared with the UX tests of the triage CLI."""

from tests.analysis.conftest import synth_path

__all__ = ["synth_path"]
