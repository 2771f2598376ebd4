"""The store must let exactly one of several concurrent creators of a key win: delta-rs's
commits on S3 rely on it (``If-None-Match: *``). SeaweedFS 4.16 once answered 200 to three
concurrent conditional PUTs (seaweedfs#8800); this checks the version installed."""

from __future__ import annotations

import pytest

from lakedev.s3 import probe_conditional_put, put_status, s3_client
from lakedev.seaweed import LoopbackSeaweed

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("writers", [3, 8])
def test_concurrent_conditional_puts_have_one_winner(
    seaweed: LoopbackSeaweed, writers: int
) -> None:
    client = s3_client(seaweed.endpoint, seaweed.key_id, seaweed.secret, seaweed.region)
    rounds = probe_conditional_put(client, seaweed.bucket, writers=writers, rounds=40 // writers)
    assert [r.winners for r in rounds] == [1] * len(rounds)
    assert all(r.kept_a_winner for r in rounds)


def test_a_second_create_is_refused_and_changes_nothing(seaweed: LoopbackSeaweed) -> None:
    client = s3_client(seaweed.endpoint, seaweed.key_id, seaweed.secret, seaweed.region)
    key = "probe/once.json"
    assert put_status(client, seaweed.bucket, key, b"first", conditional=True) == 200
    assert put_status(client, seaweed.bucket, key, b"second", conditional=True) == 412
    assert client.get_object(Bucket=seaweed.bucket, Key=key)["Body"].read() == b"first"


def test_the_probe_catches_a_store_without_conditional_writes(seaweed: LoopbackSeaweed) -> None:
    """The probe itself can fail: plain PUTs (no condition) all win, and it says so."""
    client = s3_client(seaweed.endpoint, seaweed.key_id, seaweed.secret, seaweed.region)
    rounds = probe_conditional_put(client, seaweed.bucket, writers=3, rounds=3, conditional=False)
    assert not any(r.safe for r in rounds)
