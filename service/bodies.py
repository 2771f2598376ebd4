"""Request bodies held to their route's budget before the application reads a byte of them.

A framework reads a body when a route asks for it, and bounds it afterwards if at all: FastAPI's
``Form`` parameters have Starlette parse the whole form (up to 1,000 fields of 1 MiB each, file
parts spooled to disk) before a field's ``max_length`` is checked. ``BodyGuard`` sits in front
of the application as raw ASGI and holds every request to the budget of its method and path
(``budgets``; anything not listed, an unknown path included, takes no body):

- a ``Content-Length`` over the budget is answered 413 ``body_too_large`` at once, before the
  application runs (a client sending ``Expect: 100-continue`` is never asked for the body);
- a body of unknown length (chunked) is counted as the application receives it: past the budget
  the guard answers 413 itself and the application sees the client gone (``http.disconnect``);
  a route that takes no body refuses one announced by ``Transfer-Encoding`` at once;
- a ``Content-Encoding`` other than ``identity`` is answered 415 ``unsupported_content_encoding``:
  nothing behind the guard decodes one (ingestion, which does, is dispatched before it and
  bounds its own output: ``collector.ingest``).

A refusal closes the connection (``Connection: close``): the rest of the body is never read.
The routes and their budgets: ``docs/operations.md`` (*Limits*).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import problem_response

__all__ = ["BodyGuard"]

_CLOSE = {"Connection": "close"}


async def _refuse(status: int, code: str, detail: str, scope: Scope, send: Send) -> None:
    async def nothing() -> Message:  # the answer reads nothing of the request
        return {"type": "http.disconnect"}

    await problem_response(status, code, detail, headers=_CLOSE)(scope, nothing, send)


async def _too_large(budget: int, scope: Scope, send: Send) -> None:
    detail = (
        f"The request body exceeds {budget} bytes." if budget else "This request takes no body."
    )
    await _refuse(413, "body_too_large", detail, scope, send)


class BodyGuard:
    """Raw ASGI middleware: each request's body within ``budgets[(method, path)]`` bytes.

    A path may be a route template (``/v1/skills/{slug}``); anything not listed gets 0.
    """

    def __init__(self, app: ASGIApp, budgets: Mapping[tuple[str, str], int]) -> None:
        self.app = app
        self._exact: dict[tuple[str, str], int] = {}
        self._templates: list[tuple[str, re.Pattern[str], int]] = []
        for (method, path), budget in budgets.items():
            if budget < 0:
                raise ValueError("a body budget is a number of bytes, at least 0")
            if "{" in path:
                self._templates.append((method, compile_path(path)[0], budget))
            else:
                self._exact[(method, path)] = budget

    def budget(self, method: str, path: str) -> int:
        """The bytes a request of ``method`` on ``path`` may send (0: no body)."""
        found = self._exact.get((method, path))
        if found is not None:
            return found
        for listed, pattern, budget in self._templates:
            if listed == method and pattern.fullmatch(path):
                return budget
        return 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length: bytes | None = None
        chunked = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                chunked = True
            elif name == b"content-encoding" and value.strip().lower() != b"identity":
                detail = "No Content-Encoding is accepted here."
                await _refuse(415, "unsupported_content_encoding", detail, scope, send)
                return
        if length is None and not chunked:  # HTTP/1.1: no body at all
            await self.app(scope, receive, send)
            return
        budget = self.budget(scope["method"], scope["path"])
        if length is not None:
            if not length.isdigit():
                detail = "Content-Length is not a number."
                await _refuse(400, "bad_content_length", detail, scope, send)
            elif int(length) > budget:
                await _too_large(budget, scope, send)
            else:  # the server frames the body by its length: no more bytes can come
                await self.app(scope, receive, send)
            return
        if budget == 0:
            await _too_large(budget, scope, send)
            return
        await _Counted(budget)(self.app, scope, receive, send)


class _Counted:
    """One request of unknown length, counted against ``budget`` as the application reads."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.received = 0
        self.refused = False  # over the budget: the application gets nothing more
        self.answered = False  # the guard's 413 went out: the application's answer does not
        self.started = False

    async def __call__(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        async def counting_receive() -> Message:
            if self.refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.budget:
                    self.refused = True
                    if not self.started:
                        self.answered = True
                        await _too_large(self.budget, scope, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if self.answered:
                return
            if message["type"] == "http.response.start":
                self.started = True
            await send(message)

        try:
            await app(scope, counting_receive, guarded_send)
        except Exception:
            if not self.refused:
                raise
            # The application's reaction to a body cut short (a disconnect): already answered.
