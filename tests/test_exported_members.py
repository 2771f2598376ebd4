"""The public surface is deliberate: every name in ``__all__`` exists, and nothing else leaks."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "contract.schema",
    "contract.catalogue",
    "client.capture",
    "client.ring",
    "client.host",
    "client.errors",
    "client.consent",
    "client.contributions",
    "contract.privacy",
    "client.outbox",
    "client.sender",
    "client.friction",
    "client.runtime",
    "contract.secrets_scan",
    "client.apps",
    "client.paths",
    "lmcp.datacatalogue",
    "client.tools",
    "client.recipes",
    "client.skills",
    "client.mcp_server",
    "collector.app",
    "collector.settings",
    "collector.errors",
    "collector.db",
    "collector.auth",
    "collector.ingest",
    "collector.writer",
    "cloudskills.routes",
    "analysis",
    "analysis.report",
    "analysis.web",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist_and_are_public(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported), "duplicate names in __all__"
    for member in exported:
        assert hasattr(module, member), f"{name}.{member} is in __all__ but missing"
        assert not member.startswith("_")


def test_schema_surface() -> None:
    import contract.schema as schema

    assert set(schema.__all__) == {
        "MAX_ARGS", "MAX_ATTEMPT_COUNT", "MAX_BATCH", "RING_SIZE", "SCHEMA_VERSION",
        "SUPPORTED_SCHEMA_VERSIONS", "AppState", "ArgName", "ArgShape", "ArgType", "ClientInfo",
        "ErrorCategory", "ErrorClass", "FrictionSignal", "FrictionType", "IntentCategory",
        "Outcome", "Platform", "RingEntry", "SignalBatch", "SizeBucket", "ToolName",
        # signal v2 and the previous version the collector still accepts
        "AttemptsBucket", "attempts_bucket", "FrictionSignalV1", "SignalBatchV1", "AnySignal",
        "AcceptedBatch", "upgrade",
    }  # fmt: skip
