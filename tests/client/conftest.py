from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from client.paths import LmcpHome
from client.runtime import Runtime


@pytest.fixture
def home(tmp_path: Path) -> LmcpHome:
    return LmcpHome(tmp_path / "lmcp-home").ensure()


class Recorder:
    """An httpx transport that records every request and answers from a script."""

    def __init__(self, *responses: httpx.Response | Exception) -> None:
        self.requests: list[httpx.Request] = []
        self._script = list(responses)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step: httpx.Response | Exception = (
            self._script.pop(0) if self._script else httpx.Response(200, json={"accepted": 1})
        )
        if isinstance(step, Exception):
            raise step
        return step

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


@pytest.fixture
def make_runtime(
    home: LmcpHome,
) -> Iterator[Callable[..., tuple[Runtime, Recorder]]]:
    made: list[Runtime] = []

    def make(
        *responses: httpx.Response | Exception,
        env: dict[str, str] | None = None,
        mode: str | None = None,
    ) -> tuple[Runtime, Recorder]:
        """``mode``: the user's choice (``lmcp signals off|local|on``) written first."""
        if mode is not None:
            home.settings.write_text(json.dumps({"anonymous_signals": mode}))
        recorder = Recorder(*responses)
        environ = {"LMCP_HOME": str(home.root), **(env or {})}
        rt = Runtime.from_env(environ, transport=recorder.transport)
        made.append(rt)
        return rt, recorder

    yield make
    for rt in made:
        rt.close()
