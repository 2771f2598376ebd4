"""An S3 client (boto3) for a loopback store, and the conditional-write probe.

delta-rs commits version N of a table by creating ``_delta_log/N.json`` with
``If-None-Match: *``: the store must let exactly one of several concurrent creators win.
``probe_conditional_put`` races ``writers`` PUTs of one new key, several rounds, and reports
how many were answered 200 in each round and whose body the key finally holds. A store that
answers 200 to more than one, or keeps a body whose writer was refused, is unsafe for
concurrent commits.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

__all__ = ["ProbeRound", "probe_conditional_put", "put_status", "s3_client"]


def s3_client(endpoint: str, key_id: str, secret: str, region: str) -> Any:
    """A path-style S3 client of ``endpoint`` (retries off: each call is one request)."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        region_name=region,
        config=Config(
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1, "mode": "standard"},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )


def put_status(client: Any, bucket: str, key: str, body: bytes, *, conditional: bool) -> int:
    """The HTTP status of one PUT of ``key`` (``If-None-Match: *`` when ``conditional``)."""
    extra = {"IfNoneMatch": "*"} if conditional else {}
    try:
        answer = client.put_object(Bucket=bucket, Key=key, Body=body, **extra)
    except ClientError as exc:
        return int(exc.response["ResponseMetadata"]["HTTPStatusCode"])
    return int(answer["ResponseMetadata"]["HTTPStatusCode"])


@dataclass(frozen=True, slots=True)
class ProbeRound:
    #: How many of the racing PUTs were answered 200.
    winners: int
    #: Whether the key holds the body of a writer that was answered 200.
    kept_a_winner: bool

    @property
    def safe(self) -> bool:
        return self.winners == 1 and self.kept_a_winner


def probe_conditional_put(
    client: Any, bucket: str, *, writers: int = 3, rounds: int = 20, conditional: bool = True
) -> list[ProbeRound]:
    """Race ``writers`` PUTs of one fresh key (``If-None-Match: *`` unless not
    ``conditional``), ``rounds`` times."""
    out: list[ProbeRound] = []
    for _ in range(rounds):
        key = f"probe/{secrets.token_hex(8)}.json"
        bodies = [secrets.token_hex(16).encode() for _ in range(writers)]
        statuses = [0] * writers
        barrier = threading.Barrier(writers)

        def put(
            i: int,
            key: str = key,
            bodies: list[bytes] = bodies,
            statuses: list[int] = statuses,
            barrier: threading.Barrier = barrier,
        ) -> None:
            barrier.wait()
            statuses[i] = put_status(client, bucket, key, bodies[i], conditional=conditional)

        threads = [threading.Thread(target=put, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stored = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        won = [bodies[i] for i in range(writers) if statuses[i] == 200]
        out.append(ProbeRound(len(won), stored in won))
    return out
