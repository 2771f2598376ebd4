"""Hostile bodies for ``bench_collector``: 1 MiB bodies built to cost the refusal path the
most, and the CPU to refuse each (target: the worst <= 5 ms)."""

from __future__ import annotations

import statistics
import time

from benchmarks._timing import table, verdict

__all__ = ["hostile", "hostile_bodies"]


def hostile_bodies(size: int = 1 << 20) -> dict[str, bytes]:
    """Bodies of ``size`` bytes built to cost the refusal path the most, by kind."""
    import json

    from tests.factories import signal_json

    def repeated(head: bytes, item: bytes, tail: bytes) -> bytes:
        return head + b",".join([item] * ((size - len(head) - len(tail)) // (len(item) + 1))) + tail

    one = json.dumps(signal_json()).encode()
    valid = [json.dumps(signal_json()).encode() for _ in range(499)]
    padded = b'{"signals":[' + b",".join(valid) + b","
    last = one.replace(b'"friction_type": "', b'"friction_type": "x')
    late = padded + b" " * max(0, size - len(padded) - len(last) - 2) + last + b"]}"
    return {
        "escaped-quote keys in a signal": repeated(b'{"signals":[{', rb'"123\"day":0', b"}]}"),
        # Longer keys: fewer colons than 500 full signals hold, so a count of structure alone
        # lets them through (the body the old guard validated for ~0.9 s).
        "escaped-quote keys, under the colon bound": repeated(
            b'{"signals":[{', rb'"123456789\"day":0', b"}]}"
        ),
        "the same in a v2 signal": repeated(
            b'{"signals":[{"schema_version":2,', rb'"123456789\"day":0', b"}]}"
        ),
        "escaped-quote keys at the top": repeated(b"{", rb'"123\"signals":0', b"}"),
        "escaped-quote keys in args": repeated(
            b'{"signals":[{"args":[{', rb'"1\"name":0', b"}]}]}"
        ),
        "a declared key repeated": repeated(b'{"signals":[{', b'"day":0', b"}]}"),
        "unknown keys in a signal": repeated(b'{"signals":[{', b'"k":0', b"}]}"),
        "empty objects": repeated(b'{"signals":[', b"{}", b"]}"),
        "zeros": repeated(b'{"signals":[', b"0", b"]}"),
        "one object, then zeros": repeated(b'{"signals":[{}', b"0", b"]}"),
        "empty objects in args": repeated(b'{"signals":[{"args":[', b"{}", b"]}]}"),
        "499 valid signals, the last wrong": late,
        "escaped string": b'{"signals":[{"friction_type":"' + b"\\u0061" * (size // 7) + b'"}]}',
        "nested arrays": b'{"signals":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    }


def hostile(repeat: int = 5) -> None:
    """CPU (this thread) to refuse each hostile body, median of ``repeat``; target <= 5 ms."""
    from collector.ingest import validate_batch
    from service.errors import ProblemError

    rows = []
    worst = 0.0
    for name, body in hostile_bodies().items():
        times = []
        code = ""
        for _ in range(repeat):
            started = time.thread_time()
            try:
                validate_batch(body)
                code = "accepted"
            except ProblemError as problem:
                code = f"{problem.status} {problem.code}"
            times.append((time.thread_time() - started) * 1000)
        ms = statistics.median(times)
        worst = max(worst, ms)
        rows.append([name, f"{len(body):,}", code, f"{ms:.2f}", f"{min(times):.2f}"])
    rows.append(["worst", "", "", f"{worst:.2f}  (<= 5 ms: {verdict(worst <= 5)})", ""])
    # The least of the repeats is the body's own cost; the median adds what the machine's
    # other work took from this core meanwhile (the verdict is on the median).
    table(
        f"hostile bodies: CPU to refuse (ms, median and least of {repeat})",
        ["body", "bytes", "answer", "ms", "least"],
        rows,
    )
