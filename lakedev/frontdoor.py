"""The shipped front door (``deploy/haproxy.cfg``) run on loopback for N collectors.

``FrontDoor(addresses)`` takes the shipped file as it is, replaces its example ``server``
lines by one per collector address (``host:port``), binds a free loopback port, runs
Debian's ``haproxy`` in the foreground (its own process group, stopped on exit), and waits
until it forwards ``/readyz`` to a collector that answers 200.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import httpx

__all__ = ["CONFIG", "FrontDoor", "find_haproxy", "render"]

CONFIG = Path(__file__).resolve().parent.parent / "deploy" / "haproxy.cfg"
_SERVER = re.compile(r"^    server collector\d+ .*\n", re.MULTILINE)


def find_haproxy() -> str | None:
    return shutil.which("haproxy") or (
        "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").is_file() else None
    )


def render(addresses: list[str], text: str | None = None) -> str:
    """The shipped configuration with one ``server`` line per address (``host:port``)."""
    base = CONFIG.read_text() if text is None else text
    lines = "".join(
        f"    server collector{i} {address} check\n" for i, address in enumerate(addresses, 1)
    )
    first = _SERVER.search(base)
    if first is None:
        raise ValueError("the configuration has no server line to replace")
    return base[: first.start()] + lines + _SERVER.sub("", base[first.start() :])


class FrontDoor:
    def __init__(self, addresses: list[str], *, folder: Path | None = None) -> None:
        self.addresses = addresses
        self.folder = folder or Path(tempfile.mkdtemp(prefix="lmcp-haproxy-"))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> FrontDoor:
        binary = find_haproxy()
        if binary is None:
            raise RuntimeError("no haproxy binary (the Makefile installs Debian's haproxy)")
        config = self.folder / "haproxy.cfg"
        config.write_text(render(self.addresses))
        env = dict(os.environ, LMCP_FRONT_DOOR_BIND=f"127.0.0.1:{self.port}")
        with (self.folder / "haproxy.log").open("ab") as log:
            self._proc = subprocess.Popen(
                [binary, "-db", "-f", str(config)], env=env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self) -> None:
        """Until ``/readyz`` through the front door answers 200 (haproxy alive meanwhile)."""
        with httpx.Client(trust_env=False, timeout=5.0) as client:
            while True:
                if self._proc is None or self._proc.poll() is not None:
                    raise RuntimeError(f"haproxy exited; see {self.folder / 'haproxy.log'}")
                try:
                    if client.get(self.url + "/readyz").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.05)

    def wait_marked_down(self, number: int) -> None:
        """Until haproxy has marked ``collector<number>`` down (it says so on stderr): a
        server starts up and is marked down only after ``fall`` failed checks."""
        line = f"Server collectors/collector{number} is DOWN".encode()
        log = self.folder / "haproxy.log"
        while line not in log.read_bytes():
            if self._proc is None or self._proc.poll() is not None:
                raise RuntimeError(f"haproxy exited; see {log}")
            time.sleep(0.05)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def __enter__(self) -> FrontDoor:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
