"""Hypothesis budgets come from the profiles (tests/hypothesis_profiles.py), not from tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests import hypothesis_profiles
from tests.hypothesis_profiles import CI_EXAMPLES, DEV_EXAMPLES, PROFILE_ENV, at_most, load

ROOT = Path(__file__).resolve().parent.parent
#: The privacy audit's own budget (documented there, raised with LMCP_AUDIT_EXAMPLES).
OWN_BUDGET = {"privacy_tests/test_audit_pipeline.py"}


@pytest.fixture
def restore_profile() -> Iterator[None]:
    """Requested before ``monkeypatch``: it runs after the environment is restored."""
    yield
    load()


@pytest.mark.parametrize(
    ("env", "name", "examples"),
    [
        ({PROFILE_ENV: "ci"}, "ci", CI_EXAMPLES),
        ({PROFILE_ENV: "dev"}, "dev", DEV_EXAMPLES),
        ({"CI": "true"}, "ci", CI_EXAMPLES),
        ({}, "dev", DEV_EXAMPLES),
    ],
    ids=["env-ci", "env-dev", "on-ci", "default"],
)
def test_the_environment_picks_the_profile(
    restore_profile: None,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    name: str,
    examples: int,
) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert load() == name
    assert settings().max_examples == examples
    assert at_most(25) == min(25, examples) and at_most(10_000) == examples


def test_no_test_hard_codes_its_example_count() -> None:
    """A bare ``max_examples=<n>`` would ignore the profile: only ``at_most(n)`` may cap it."""
    bare = re.compile(r"max_examples\s*=\s*(?!at_most\()")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("tests", "privacy_tests")
        for path in (ROOT / folder).rglob("*.py")
        if path not in (Path(hypothesis_profiles.__file__), Path(__file__))
        and str(path.relative_to(ROOT)) not in OWN_BUDGET
        and bare.search(path.read_text("utf-8"))
    ]
    assert offenders == []
