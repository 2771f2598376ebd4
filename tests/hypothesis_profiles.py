"""The hypothesis profiles, registered once for the whole suite (the root ``conftest.py``
loads one).

``ci`` runs every property test with the full budget (what ``make test`` and CI run); ``dev``
runs a tenth of it so ``make test-fast`` stays quick on a laptop. ``HYPOTHESIS_PROFILE`` picks
one; without it, ``ci`` when ``CI`` is set, else ``dev``.

A test may cap its budget with :func:`at_most` when each example is expensive (a real DuckDB
flush, a server round trip); the cap never raises the profile's count, so ``dev`` stays fast.
"""

from __future__ import annotations

import os

from hypothesis import settings

__all__ = ["CI_EXAMPLES", "DEV_EXAMPLES", "PROFILE_ENV", "at_most", "load"]

PROFILE_ENV = "HYPOTHESIS_PROFILE"
CI_EXAMPLES = 100
DEV_EXAMPLES = 10

# deadline=None everywhere: the machine is shared, so per-example wall time is noise, not a bug.
settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None)
settings.register_profile("dev", max_examples=DEV_EXAMPLES, deadline=None)


def load() -> str:
    """Load the profile named by the environment; returns its name."""
    name = os.environ.get(PROFILE_ENV) or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(name)
    return name


def at_most(examples: int) -> int:
    """``examples``, or the active profile's count when that is lower (``dev``)."""
    return min(examples, settings().max_examples)
