"""The tools tests' fixtures (a home, a host with the built-in tools, ``call``), shared here."""

from tests.tools.conftest import call, home, host

__all__ = ["call", "home", "host"]
