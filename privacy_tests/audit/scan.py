"""Sink scanners: search bytes for a canary's marker, raw and in every encoding a leak could take.

Forms searched for each marker:

- raw UTF-8, UTF-16-LE and UTF-16-BE (a Windows log, a JSON ``\\u`` escape is covered by raw
  because markers are ASCII);
- base64 and URL-safe base64 at all three byte alignments (a marker inside a longer encoded
  value shifts its base64 text by its offset modulo 3), with or without padding;
- hexadecimal, in either case;
- percent-encoding (identical to raw for an ASCII marker; kept so the list reads complete);
- for numbers: their decimal digits, and their little/big-endian int64 and float64 bytes (a
  number stored in a binary column).

``find_leaks`` checks every (sink, canary, form); ``assert_no_leaks`` fails with ONE message per
leak that names the sink, the canary's kind and the form -- never the planted value.
"""

from __future__ import annotations

import base64
import binascii
import struct
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from privacy_tests.audit.canaries import Canary

__all__ = ["Leak", "ScanStats", "assert_no_leaks", "find_leaks", "forms"]


def _b64_cores(raw: bytes, *, urlsafe: bool) -> list[tuple[str, bytes]]:
    """The base64 text that must appear whenever ``raw`` is encoded at any offset."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    name = "base64url" if urlsafe else "base64"
    out: list[tuple[str, bytes]] = []
    for offset in range(3):
        encoded = encode(b"\0" * offset + raw)
        # Characters touched by the padding prefix or by the unknown bytes after the marker
        # depend on the neighbours; the core in between does not.
        start = -(-offset * 4 // 3)  # ceil(offset * 4 / 3)
        usable = (offset + len(raw)) // 3 * 4
        core = encoded[start:usable]
        if len(core) >= 8:
            out.append((f"{name}@{offset}", core))
    return out


@cache
def forms(marker: str, number: int | None = None) -> tuple[tuple[str, bytes], ...]:
    """Every (form name, bytes) under which ``marker`` could appear in a sink."""
    raw = marker.encode("utf-8")
    found: list[tuple[str, bytes]] = [
        ("raw", raw),
        ("utf-16-le", marker.encode("utf-16-le")),
        ("utf-16-be", marker.encode("utf-16-be")),
        ("hex", binascii.hexlify(raw)),
        ("url", urllib.parse.quote(marker, safe="").encode()),
        ("url-plus", urllib.parse.quote_plus(marker).encode()),
    ]
    found += _b64_cores(raw, urlsafe=False)
    found += _b64_cores(raw, urlsafe=True)
    if number is not None:
        if -(2**63) <= number < 2**63:
            found += [
                ("int64-le", struct.pack("<q", number)),
                ("int64-be", struct.pack(">q", number)),
            ]
        found += [
            ("float64-le", struct.pack("<d", float(number))),
            ("float64-be", struct.pack(">d", float(number))),
        ]
    unique: dict[bytes, str] = {}
    for name, data in found:
        unique.setdefault(data, name)
    return tuple((name, data) for data, name in unique.items())


@dataclass(frozen=True, slots=True)
class Leak:
    sink: str
    kind: str
    form: str

    def __str__(self) -> str:
        return f"a canary of kind {self.kind!r} leaked into sink {self.sink!r} (form: {self.form})"


@dataclass
class ScanStats:
    """What a scan covered, for the audit's closing figures."""

    sinks: set[str]
    canaries: int = 0
    checks: int = 0
    bytes_scanned: int = 0


def find_leaks(
    sinks: Mapping[str, bytes],
    planted: Iterable[Canary],
    stats: ScanStats | None = None,
) -> list[Leak]:
    """Every (sink, canary, form) where a marker appears."""
    cases = list(planted)
    leaks: list[Leak] = []
    for sink, data in sinks.items():
        lowered = data.lower()
        for case in cases:
            for form, needle in forms(case.marker, case.number):
                haystack = lowered if form == "hex" else data  # hex in either case
                if needle in haystack:
                    leaks.append(Leak(sink, case.kind.value, form))
                    break
        if stats is not None:
            stats.sinks.add(sink)
            stats.bytes_scanned += len(data)
            stats.checks += len(cases)
    if stats is not None:
        stats.canaries += len(cases)
    return leaks


def assert_no_leaks(
    sinks: Mapping[str, bytes], planted: Iterable[Canary], stats: ScanStats | None = None
) -> None:
    """Fail with one line per leak, naming the sink and the canary's kind."""
    leaks = find_leaks(sinks, planted, stats)
    if leaks:
        raise AssertionError("\n".join(sorted({str(leak) for leak in leaks})))
