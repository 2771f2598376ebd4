"""The released LMCP versions (``versions.json``): the versions cube's known domain.

A released cube's keys must be public and known before any signal arrives (no threshold, no
partition selection): a version outside this list is released as ``other``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

__all__ = ["OTHER_VERSION", "released_versions"]

OTHER_VERSION = "other"


@cache
def released_versions() -> tuple[str, ...]:
    raw = resources.files("contract.catalogue").joinpath("versions.json").read_text("utf-8")
    versions = tuple(str(v) for v in json.loads(raw)["versions"])
    if len(set(versions)) != len(versions) or OTHER_VERSION in versions:
        raise ValueError("versions.json lists each version once and never 'other'")
    return versions
