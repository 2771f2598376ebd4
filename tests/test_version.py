"""The version is written once, in pyproject.toml; everything that reports one reads it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from client.friction import default_client_info
from contract.version import package_version
from service.serving import service_version
from tests._packages import PACKAGES

ROOT = Path(__file__).resolve().parent.parent


def test_every_reported_version_is_pyprojects() -> None:
    written = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    assert package_version() == written
    assert default_client_info().version == written  # ClientInfo.version on every signal
    assert service_version() == written  # the collector's OpenAPI and telemetry resource


def test_no_package_writes_a_version_of_its_own() -> None:
    assignment = re.compile(r"^\s*__version__\s*=|version\s*=\s*[\"']\d+\.\d+\.\d+[\"']", re.M)
    offenders = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if assignment.search(path.read_text("utf-8"))
    ]
    assert offenders == []
