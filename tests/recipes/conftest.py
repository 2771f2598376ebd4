from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from client.apps import FileAppProbe
from client.host import ToolHost, ToolResult
from client.paths import LmcpHome
from client.recipes import recipe_handlers
from client.tools import builtin_handlers

#: The documentation example, identical in the macOS and the Windows reference texts.
DOC_EXAMPLE: dict[str, Any] = {
    "manifest": {
        "description": "Read the local date and time.",
        "name": "Demo morning brief",
        "steps": [{"args": {}, "tool": "get_datetime"}],
    }
}


@pytest.fixture
def home(tmp_path: Path) -> LmcpHome:
    return LmcpHome(tmp_path / "lmcp-home").ensure()


def make_host(home: LmcpHome) -> ToolHost:
    probe = FileAppProbe(home.apps)
    host = ToolHost(app_probe=probe)
    host.register_all(builtin_handlers(home, probe))
    host.register_all(recipe_handlers(home, host))
    return host


@pytest.fixture
def host(home: LmcpHome) -> ToolHost:
    return make_host(home)


Call = Callable[..., ToolResult]


@pytest.fixture
def call(host: ToolHost) -> Call:
    def do(tool: str, **args: Any) -> ToolResult:
        return host.dispatch(tool, args)

    return do


Save = Callable[..., ToolResult]


@pytest.fixture
def save(call: Call) -> Save:
    def do(manifest: dict[str, Any], **kw: Any) -> ToolResult:
        return call("recipe_save", manifest=manifest, **kw)

    return do


def run_saved(call: Call, name: str, **kw: Any) -> ToolResult:
    """``recipe_run`` of the saved recipe ``name``."""
    return call("recipe_run", name=name, **kw)


def set_apps(home: LmcpHome, states: dict[str, dict[str, bool]]) -> None:
    home.apps.write_text(json.dumps(states), encoding="utf-8")


def message(result: ToolResult) -> str:
    assert result.error is not None, result
    return result.error.message
