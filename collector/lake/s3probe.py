"""A minimal S3 client (AWS Signature V4, stdlib only) and the conditional-write probe.

delta-rs commits version N of a table by creating ``_delta_log/N.json`` with
``If-None-Match: *``: the store must let exactly one of several concurrent creators win.
``probe_conditional_put`` races ``writers`` PUTs of one new key, several rounds, and reports
how many were answered 200 in each round and whose body the key finally holds. A store that
answers 200 to more than one, or keeps a body whose writer was refused, is unsafe for
concurrent commits.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

__all__ = ["ProbeRound", "S3Client", "probe_conditional_put"]


def _sign(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


class S3Client:
    """Path-style requests to one S3 endpoint, signed with SigV4 (plain HTTP on loopback)."""

    def __init__(self, endpoint: str, key_id: str, secret: str, region: str) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._key_id = key_id
        self._secret = secret
        self._region = region
        self._host = urllib.parse.urlsplit(self.endpoint).netloc

    def _headers(
        self, method: str, path: str, body: bytes, extra: dict[str, str]
    ) -> dict[str, str]:
        now = dt.datetime.now(dt.UTC)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        payload = hashlib.sha256(body).hexdigest()
        headers = {"host": self._host, "x-amz-content-sha256": payload, "x-amz-date": stamp}
        headers.update({k.lower(): v for k, v in extra.items()})
        names = sorted(headers)
        canonical = "\n".join(
            [
                method,
                urllib.parse.quote(path, safe="/-_.~"),
                "",
                "".join(f"{n}:{headers[n].strip()}\n" for n in names),
                ";".join(names),
                payload,
            ]
        )
        scope = f"{day}/{self._region}/s3/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        key = _sign(("AWS4" + self._secret).encode(), day)
        for part in (self._region, "s3", "aws4_request"):
            key = _sign(key, part)
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self._key_id}/{scope}, "
            f"SignedHeaders={';'.join(names)}, Signature={signature}"
        )
        del headers["host"]
        return headers

    def call(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """The status and body of one request (HTTP errors are answers, not exceptions)."""
        signed = self._headers(method, path, body, headers or {})
        req = urllib.request.Request(
            self.endpoint + urllib.parse.quote(path, safe="/-_.~"),
            data=body if method in ("PUT", "POST") else None,
            method=method,
            headers=signed,
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return int(resp.status), bytes(resp.read())
        except urllib.error.HTTPError as exc:
            return int(exc.code), bytes(exc.read())

    def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> int:
        return self.call(method, path, body, headers)[0]


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
    client: S3Client, bucket: str, *, writers: int = 3, rounds: int = 20
) -> list[ProbeRound]:
    """Race ``writers`` ``If-None-Match: *`` PUTs of one fresh key, ``rounds`` times."""
    out: list[ProbeRound] = []
    for _ in range(rounds):
        key = f"/{bucket}/probe/{secrets.token_hex(8)}.json"
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
            statuses[i] = client.request("PUT", key, bodies[i], {"If-None-Match": "*"})

        threads = [threading.Thread(target=put, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        _, stored = client.call("GET", key)
        won = [bodies[i] for i in range(writers) if statuses[i] == 200]
        out.append(ProbeRound(len(won), stored in won))
    return out
