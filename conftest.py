"""Suite-wide setup: the hypothesis profile (``tests/hypothesis_profiles.py``), loaded before any
test module is imported so per-test caps (``at_most``) see it.
"""

from __future__ import annotations

import pytest

from tests import hypothesis_profiles

_PROFILE = hypothesis_profiles.load()


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {_PROFILE} (set {hypothesis_profiles.PROFILE_ENV}=ci|dev)"
