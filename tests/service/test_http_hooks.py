"""``service/http.py`` subclasses uvicorn's ``HttpToolsProtocol``, which is not a public API:
this checks that every hook it overrides, and every attribute it reads, is still there with the
shape it was written against (``pyproject.toml`` allows only the uvicorn series it was run on)."""

from __future__ import annotations

import inspect

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from service.http import ServingLimits, guarded_protocol

HOOKS = {
    "connection_made": ["self", "transport"],
    "connection_lost": ["self", "exc"],
    "data_received": ["self", "data"],
    "send_400_response": ["self", "msg"],
    "on_message_begin": ["self"],
    "on_headers_complete": ["self"],
    "on_message_complete": ["self"],
    "on_response_complete": ["self"],
    "shutdown": ["self"],
}


def test_every_overridden_hook_exists_with_its_parameters() -> None:
    guarded = guarded_protocol(ServingLimits())
    for name, parameters in HOOKS.items():
        assert name in vars(guarded), name  # we override it...
        hook = getattr(HttpToolsProtocol, name)  # ...and uvicorn still calls it so
        assert list(inspect.signature(hook).parameters) == parameters, name


def test_the_attributes_read_are_still_set_by_uvicorn() -> None:
    made = inspect.getsource(HttpToolsProtocol.__init__) + inspect.getsource(
        HttpToolsProtocol.connection_made
    )
    for attribute in (
        "self.transport",
        "self.client",
        "self.loop",
        "self.cycle",
        "self.flow",
        "self.timeout_keep_alive",
    ):
        assert attribute in made, attribute
    cycle = inspect.getsource(RequestResponseCycle.__init__)
    for attribute in ("self.response_complete", "self.disconnected", "self.message_event"):
        assert attribute in cycle, attribute
    # The cycle calls the protocol's hook once its answer is complete (then, idle, the
    # protocol sets its idle deadline).
    assert "on_response=self.on_response_complete" in inspect.getsource(
        HttpToolsProtocol.on_headers_complete
    )
    # A request's cycle is the one on_headers_complete leaves in ``self.cycle``.
    assert "self.cycle = RequestResponseCycle(" in inspect.getsource(
        HttpToolsProtocol.on_headers_complete
    )
