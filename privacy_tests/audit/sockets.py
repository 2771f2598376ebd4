"""A socket-layer guard: count (and optionally refuse) every outgoing connection and name lookup.

The consent audit needs proof at the lowest level Python code reaches: not "the sender was not
called" but "no socket connected". ``SocketGuard`` patches, for the duration of a ``with`` block:

- ``socket.socket.connect`` / ``connect_ex`` / ``sendto`` (every TCP/UDP client, httpx included),
- ``socket.create_connection`` (the stdlib helper),
- ``socket.getaddrinfo`` (a DNS lookup can leak a name by itself).

Each attempt is recorded as ``(operation, family, address)``; with ``block=True`` it raises
``ConnectionRefusedError`` (an ``OSError``, so well-behaved clients see a transport error).
Local ``AF_UNIX`` socket pairs (asyncio's self-pipe) are counted apart and never blocked.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Any

__all__ = ["SocketGuard"]

_NET_FAMILIES = {socket.AF_INET, socket.AF_INET6}


class SocketGuard:
    """``with SocketGuard(block=True) as guard: ...`` then ``assert guard.attempts == []``."""

    def __init__(self, *, block: bool = True) -> None:
        self.block = block
        self.attempts: list[tuple[str, str, str]] = []
        self.local: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._saved: list[tuple[Any, str, Any]] = []

    # -- recording -------------------------------------------------------------------------
    def _record(self, operation: str, family: int | None, address: object) -> None:
        fam = socket.AddressFamily(family).name if family is not None else "?"
        with self._lock:
            if family is not None and family not in _NET_FAMILIES:
                self.local.append((operation, fam))
                return
            self.attempts.append((operation, fam, repr(address)))
        if self.block:
            raise ConnectionRefusedError(f"SocketGuard: {operation} refused by the privacy audit")

    # -- patching --------------------------------------------------------------------------
    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def __enter__(self) -> SocketGuard:
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_sendto = socket.socket.sendto
        real_create = socket.create_connection
        real_getaddrinfo = socket.getaddrinfo

        def connect(sock: socket.socket, address: Any) -> None:
            guard._record("connect", sock.family, address)
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard._record("connect_ex", sock.family, address)
            return real_connect_ex(sock, address)

        def sendto(sock: socket.socket, *args: Any) -> int:
            guard._record("sendto", sock.family, args[-1])
            return int(real_sendto(sock, *args))

        def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            guard._record("create_connection", socket.AF_INET, address)
            return real_create(address, *args, **kwargs)

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            guard._record("getaddrinfo", socket.AF_INET, (host, port))
            return real_getaddrinfo(host, port, *args, **kwargs)

        self._patch(socket.socket, "connect", connect)
        self._patch(socket.socket, "connect_ex", connect_ex)
        self._patch(socket.socket, "sendto", sendto)
        self._patch(socket, "create_connection", create_connection)
        self._patch(socket, "getaddrinfo", getaddrinfo)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        while self._saved:
            owner, name, original = self._saved.pop()
            setattr(owner, name, original)

    @property
    def count(self) -> int:
        """Network attempts (connections, datagrams, name lookups) seen inside the block."""
        return len(self.attempts)
