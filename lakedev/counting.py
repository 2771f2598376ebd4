"""A counting HTTP proxy in front of a loopback S3 store: what delta-rs asks the store for.

``CountingProxy(upstream)`` listens on 127.0.0.1 and forwards every request unchanged (the
Host header too, so SigV4 signatures stay valid) to ``upstream``, recording each one's
method, path and query. ``requests_since(mark)`` says what one operation sent: LIST pages
(``GET ?list-type=2``), GETs of objects, PUTs, HEADs.
"""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["CountingProxy", "Sent"]

_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection"}


@dataclass(frozen=True, slots=True)
class Sent:
    method: str
    path: str
    query: str

    @property
    def kind(self) -> str:
        """``list``, ``get``, ``put``, ``head``, ``delete``, or the method."""
        if self.method == "GET" and "list-type=2" in self.query:
            return "list"
        return self.method.lower()


class CountingProxy:
    def __init__(self, upstream: str) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self.sent: list[Sent] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                split = urllib.parse.urlsplit(self.path)
                with proxy._lock:
                    proxy.sent.append(Sent(self.command, split.path, split.query))
                body = self._body()
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in _HOP | {"expect"}
                }
                if body is not None:
                    headers["Content-Length"] = str(len(body))
                upstream = http.client.HTTPConnection(proxy._host, proxy._port, timeout=60)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                    self.send_response(answer.status, answer.reason)
                    head = self.command == "HEAD"  # its length is the object's, not the body's
                    for key, value in answer.getheaders():
                        if key.lower() in _HOP or (key.lower() == "content-length" and not head):
                            continue
                        self.send_header(key, value)
                    if not head:
                        self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away (delta-rs drops a connection it is done with)
                finally:
                    upstream.close()

            def _body(self) -> bytes | None:
                """The request's body, whole: by its length, or its chunks joined."""
                if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                    parts: list[bytes] = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass  # trailers
                            return b"".join(parts)
                        parts.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("content-length") or 0)
                return self.rfile.read(length) if length else None

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def mark(self) -> int:
        with self._lock:
            return len(self.sent)

    def requests_since(self, mark: int) -> Counter[str]:
        """Requests by kind (``Sent.kind``) since ``mark``."""
        with self._lock:
            return Counter(s.kind for s in self.sent[mark:])

    def start(self) -> CountingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> CountingProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
