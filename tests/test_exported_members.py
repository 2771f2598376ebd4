"""The public surface is deliberate: ``__all__`` is exactly the module's public names.

A module's public names are those it defines at top level (a ``def``, a ``class``, an
assignment) without a leading underscore, and, for a package, the names it imports from its
own submodules (its re-exports, also the lazy ones: what a package with a module ``__getattr__``
imports under ``if TYPE_CHECKING:``). Names imported from elsewhere are dependencies, not surface;
loggers, type variables and modules are never surface. Anything else must be in ``__all__``
or start with an underscore.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
import sys
import types
import typing
from pathlib import Path

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
    "contract.limits",
    "client.outbox",
    "client.sender",
    "client.friction",
    "client.runtime",
    "contract.secrets_scan",
    "contract.version",
    "client.apps",
    "client.paths",
    "lmcp.datacatalogue",
    "lmcp.privacy_params",
    "collector.releases.published",
    "collector.webhook",
    "analysis.alerts",
    "analysis.publish",
    "analysis._cli_remote",
    "client.tools",
    "client.recipes",
    "client.skills",
    "client.mcp_server",
    "client.mcp_stdio",
    "collector.app",
    "collector.settings",
    "collector.errors",
    "collector.db",
    "collector.ingest",
    "collector.writer",
    "service.auth",
    "service.db",
    "service.errors",
    "service.bodies",
    "service.serving",
    "service.sql",
    "contract.days",
    "cloudskills.app",
    "cloudskills.routes",
    "cloudskills.settings",
    "analysis",
    "analysis.report",
    "analysis.web",
]


def _lazy_imports(tree: ast.Module) -> list[ast.stmt]:
    """A package with a module ``__getattr__`` re-exports lazily what its top-level
    ``if TYPE_CHECKING:`` block imports (``contract.schema``: the models, on first use)."""
    if not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        return []
    return [
        inner
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in node.body
    ]


def _defined_names(module: types.ModuleType) -> set[str]:
    """Top-level names ``module``'s source binds, and a package's imports from its submodules."""
    tree = ast.parse(inspect.getsource(module))
    package = module.__name__ if hasattr(module, "__path__") else None
    names: set[str] = set()
    for node in [*tree.body, *(_lazy_imports(tree) if package else [])]:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and package is not None:
            if node.level > 0 or (node.module or "").startswith(package + "."):
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def public_names(module: types.ModuleType) -> set[str]:
    never_surface = (logging.Logger, typing.TypeVar, typing.ParamSpec, types.ModuleType)
    return {
        name
        for name in _defined_names(module)
        if not name.startswith("_") and not isinstance(getattr(module, name), never_surface)
    }


@pytest.mark.parametrize("name", MODULES)
def test_all_is_exactly_the_public_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported), "duplicate names in __all__"
    for member in exported:
        assert hasattr(module, member), f"{name}.{member} is in __all__ but missing"
    public = public_names(module)
    assert sorted(public - set(exported)) == [], f"public in {name} but not in __all__"
    assert sorted(set(exported) - public) == [], f"in {name}.__all__ but not defined there"


def test_the_rule_sees_a_leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attacker's test: a public helper left out of ``__all__`` is caught."""
    (tmp_path / "leaky_module_xyz.py").write_text(
        'import logging\n__all__ = ["api"]\nlog = logging.getLogger()\n'
        "def api() -> None: ...\ndef helper() -> None: ...\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("leaky_module_xyz")
    try:
        assert public_names(module) == {"api", "helper"}
    finally:
        sys.modules.pop("leaky_module_xyz", None)


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
        # the size buckets' bounds: the client's capture and the v1 upgrade
        "SIZE_BOUNDS", "size_bucket",
        # a valid signal's JSON, model_dump_json's bytes written sooner (the sender's body)
        "signal_json",
    }  # fmt: skip
