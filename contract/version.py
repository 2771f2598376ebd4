"""The product's version: ``version`` in pyproject.toml, the one place it is written.

Everything that reports a version (the client's ``ClientInfo.version``, the MCP server's
``serverInfo``, the collector's OpenAPI document and telemetry resource) reads it here, from
the installed distribution's metadata.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["DISTRIBUTION", "UNKNOWN_VERSION", "install_hint", "package_version"]

DISTRIBUTION = "lmcp-friction"
#: A source tree that was never installed has no metadata; a valid x.y.z keeps signals valid.
UNKNOWN_VERSION = "0.0.0"


def package_version() -> str:
    """The installed ``lmcp-friction`` version, or ``0.0.0`` when it is not installed."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return UNKNOWN_VERSION


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` of this distribution (its name on the index)."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"
