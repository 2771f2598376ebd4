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

An encoded marker as planted (``Canary.aliases``: reversed, split, zero-width-joined, ...) is
searched as text, UTF-16, hex, URL- and JSON-escaped.

``find_leaks`` checks every (sink, canary, form) through a ``NeedleIndex`` (thousands of
canaries in one pass per shared anchor); ``assert_no_leaks`` fails with ONE message per
leak that names the sink, the canary's kind and the form -- never the planted value.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import urllib.parse
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from privacy_tests.audit.canaries import Canary

__all__ = [
    "Leak",
    "NeedleIndex",
    "ScanStats",
    "alias_forms",
    "assert_no_leaks",
    "find_leaks",
    "forms",
]


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
    #: Where and how the case was planted (a position and an encoding: never the value).
    where: str = ""

    def __str__(self) -> str:
        at = f"; planted at {self.where}" if self.where else ""
        return (
            f"a canary of kind {self.kind!r} leaked into sink {self.sink!r} (form: {self.form}{at})"
        )


@dataclass
class ScanStats:
    """What a scan covered, for the audit's closing figures."""

    sinks: set[str]
    canaries: int = 0
    checks: int = 0
    bytes_scanned: int = 0


def alias_forms(alias: str) -> tuple[tuple[str, bytes], ...]:
    """The forms an encoded marker (reversed, split, ...) is searched in: as text, UTF-16, hex,
    URL- and JSON-escaped (its base64 is the double encoding of a value: not searched)."""
    raw = alias.encode("utf-8")
    found = {
        raw: "alias",
        alias.encode("utf-16-le"): "alias-utf-16-le",
        alias.encode("utf-16-be"): "alias-utf-16-be",
        binascii.hexlify(raw): "alias-hex",
        urllib.parse.quote(alias, safe="").encode(): "alias-url",
        json.dumps(alias)[1:-1].encode(): "alias-json",
    }
    return tuple((name, data) for data, name in found.items())


#: Forms searched in the lower-cased sink (hex in either case).
_LOWER = frozenset({"hex", "alias-hex"})
#: An anchor shared by at least this many needles is searched for once (see NeedleIndex).
_SHARED = 8
_ANCHOR = 4


class NeedleIndex:
    """Every form of every case, searched in one pass per shared anchor.

    Markers share their first characters (``cnry``, a number's fixed digits), so the forms of
    thousands of markers share few 4-byte prefixes (or, reversed, suffixes): each such anchor
    is found with ``bytes.find`` and the window around each hit is looked up in a dict. Needles
    sharing no anchor (a number's binary forms) are searched one by one. The result is the
    naive search's: which (sink, case) pairs hold some form of the case."""

    def __init__(self, cases: Sequence[Canary]) -> None:
        entries: list[tuple[int, str, bytes, bool]] = []
        for i, case in enumerate(cases):
            needles = list(forms(case.marker, case.number))
            for alias in case.aliases:
                needles += alias_forms(alias)
            entries += [(i, form, data, form in _LOWER) for form, data in needles]
        prefixes = Counter((low, d[:_ANCHOR]) for _, _, d, low in entries)
        suffixes = Counter((low, d[-_ANCHOR:]) for _, _, d, low in entries)
        #: (lower, anchor, is_prefix) -> needle length -> needle -> [(case, form)]
        self.anchored: dict[tuple[bool, bytes, bool], dict[int, dict[bytes, list[Hit]]]] = {}
        self.naive: list[tuple[bool, bytes, Hit]] = []
        for i, form, data, low in entries:
            if prefixes[(low, data[:_ANCHOR])] >= _SHARED:
                key = (low, data[:_ANCHOR], True)
            elif suffixes[(low, data[-_ANCHOR:])] >= _SHARED:
                key = (low, data[-_ANCHOR:], False)
            else:
                self.naive.append((low, data, (i, form)))
                continue
            table = self.anchored.setdefault(key, {}).setdefault(len(data), {})
            table.setdefault(data, []).append((i, form))

    def search(self, data: bytes) -> dict[int, str]:
        """Case index -> the first form found of that case in ``data``."""
        lowered = data.lower()
        found: dict[int, str] = {}
        for (low, anchor, is_prefix), by_len in self.anchored.items():
            hay = lowered if low else data
            pos = hay.find(anchor)
            while pos >= 0:
                for length, table in by_len.items():
                    start = pos if is_prefix else pos + _ANCHOR - length
                    for i, form in table.get(hay[start : start + length], ()) if start >= 0 else ():
                        found.setdefault(i, form)
                pos = hay.find(anchor, pos + 1)
        for low, needle, (i, form) in self.naive:
            if i not in found and needle in (lowered if low else data):
                found[i] = form
        return found


Hit = tuple[int, str]


def find_leaks(
    sinks: Mapping[str, bytes],
    planted: Iterable[Canary],
    stats: ScanStats | None = None,
    index: NeedleIndex | None = None,
    where: Mapping[str, str] | None = None,
) -> list[Leak]:
    """Every (sink, canary) where a form of its marker appears (one leak per pair). Pass an
    ``index`` of ``planted`` to reuse it across calls; ``where`` (marker -> position and
    encoding) to name where a leaked case was planted."""
    cases = list(planted)
    index = index or NeedleIndex(cases)
    leaks: list[Leak] = []
    for sink, data in sinks.items():
        for i, form in sorted(index.search(data).items()):
            marker = cases[i].marker
            leaks.append(Leak(sink, cases[i].kind.value, form, (where or {}).get(marker, "")))
        if stats is not None:
            stats.sinks.add(sink)
            stats.bytes_scanned += len(data)
            stats.checks += len(cases)
    if stats is not None:
        stats.canaries += len(cases)
    return leaks


def assert_no_leaks(
    sinks: Mapping[str, bytes],
    planted: Iterable[Canary],
    stats: ScanStats | None = None,
    index: NeedleIndex | None = None,
    where: Mapping[str, str] | None = None,
) -> None:
    """Fail with one line per leak, naming the sink and the canary's kind."""
    leaks = find_leaks(sinks, planted, stats, index, where)
    if leaks:
        raise AssertionError("\n".join(sorted({str(leak) for leak in leaks})))
