from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from client.apps import FileAppProbe
from client.host import ToolHost, ToolResult
from client.paths import LmcpHome
from client.tools import builtin_handlers


@pytest.fixture
def home(tmp_path: Path) -> LmcpHome:
    return LmcpHome(tmp_path / "lmcp-home").ensure()


@pytest.fixture
def host(home: LmcpHome) -> ToolHost:
    probe = FileAppProbe(home.apps)
    tool_host = ToolHost(app_probe=probe)
    tool_host.register_all(builtin_handlers(home, probe))
    return tool_host


Call = Callable[..., ToolResult]


@pytest.fixture
def call(host: ToolHost) -> Call:
    def do(tool: str, **args: Any) -> ToolResult:
        return host.dispatch(tool, args)

    return do


def set_apps(home: LmcpHome, states: dict[str, dict[str, bool]]) -> None:
    home.apps.write_text(json.dumps(states), encoding="utf-8")
