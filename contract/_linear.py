"""What the secret and personal-data scanners share: text normalisation and linear-time rules.

Every pattern here and in the scanners is linear by construction (no re2 needed):
- only bounded quantifiers (``{m,n}``, ``?``); no ``*``, ``+`` or ``{m,}`` anywhere;
- a rule starts with a lookbehind that refuses to start inside a run of its own characters, so
  its possible starts never overlap and each scans at most a constant number of characters;
- a rule runs only when one of its literal hints occurs (a substring search);
- a text longer than ``MAX_SCAN_CHARS`` is refused whole, never scanned in part.
A test checks the first point on every pattern and times each rule's adversarial input.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "MAX_SCAN_CHARS",
    "Normalised",
    "Rule",
    "normalise",
    "Taken",
    "unbounded_quantifier",
]

#: Texts longer than this are refused as unscannable (the largest document field is 197 KB).
MAX_SCAN_CHARS = 1 << 20


@dataclass(frozen=True, slots=True)
class Rule:
    """One named pattern, run only when a hint occurs in the text."""

    id: str
    hints: tuple[str, ...]
    pattern: re.Pattern[str]
    #: Hints are searched in the lower-cased text (for case-insensitive rules).
    fold: bool = False


@dataclass(frozen=True, slots=True)
class Normalised:
    """``text`` without zero-width and other format characters, with a map back to offsets."""

    text: str
    lower: str
    _origin: tuple[int, ...] | None

    def origin(self, offset: int) -> int:
        """The offset in the original text of ``offset`` in the normalised one."""
        if self._origin is None:
            return offset
        return self._origin[offset] if offset < len(self._origin) else offset


def normalise(text: str) -> Normalised:
    """Drop format characters (category Cf: zero-width spaces, joiners, bidi marks).

    A token split by an invisible character is still the token to whoever pastes it.
    """
    if text.isascii():
        return Normalised(text, text.lower(), None)
    kept: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if unicodedata.category(char) != "Cf":
            kept.append(char)
            origin.append(index)
    clean = "".join(kept)
    return Normalised(clean, clean.lower(), tuple(origin))


class Taken:
    """The spans already reported, as a mask: checking a span costs its length, not the hits."""

    def __init__(self, size: int) -> None:
        self._mask = bytearray(size)

    def overlaps(self, span: tuple[int, int]) -> bool:
        return self._mask.find(1, span[0], span[1]) != -1

    def add(self, span: tuple[int, int]) -> None:
        self._mask[span[0] : span[1]] = b"\x01" * (span[1] - span[0])


# Outside a character class: ``*``, ``+`` or ``{m,}`` (escaped characters skipped).
_UNBOUNDED = re.compile(r"\\.|\[(?:\\.|[^\]\\]){0,200}\]|([*+]|\{\d{1,4},\})")


def unbounded_quantifier(source: str) -> bool:
    """True when a pattern's source holds an unbounded quantifier (used by the tests)."""
    return any(match.group(1) for match in _UNBOUNDED.finditer(source))
