"""Canary values: realistic private data, each carrying a unique marker to search sinks for.

A canary is planted somewhere a user's data really goes (a tool argument, a recipe param, a note,
a file, a mail) and every sink of the pipeline is then searched for its ``marker``. The marker is
a substring of the planted value (or, for numbers, the number itself), so finding it anywhere --
raw or encoded -- means a value escaped.

Markers are ``cnry`` + 12 characters of an unambiguous alphabet: long enough that they never
occur by chance in a database file or a log, short enough to sit inside any realistic value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from hypothesis import strategies as st

__all__ = [
    "MARKER_ALPHABET",
    "Canary",
    "CanaryKind",
    "canaries",
    "canary",
    "canary_of",
    "marker",
]

MARKER_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"


class CanaryKind(StrEnum):
    """What a canary imitates: the private data the pipeline must never carry."""

    email = "email address"
    home_path_macos = "home-directory path (macOS)"
    home_path_windows = "home-directory path (Windows)"
    account = "account name"
    bearer_token = "bearer token"
    long_unicode = "long unicode text"
    large_number = "large number"
    note_title = "note title"
    mail_body = "mail body"
    recipe_name = "recipe name"
    param_value = "recipe param value"


@dataclass(frozen=True, slots=True)
class Canary:
    """One planted value. ``value`` is what is planted; ``marker`` is what sinks are searched for.

    ``number`` is set for numeric canaries, whose binary forms (int64, float64) are searched too.
    """

    kind: CanaryKind
    value: str | int
    marker: str
    number: int | None = None
    #: The marker as planted when an encoding rewrote it (reversed, split, ...): searched too.
    aliases: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The value as text (numbers as their decimal digits), for places that take strings."""
        return str(self.value)


def marker() -> st.SearchStrategy[str]:
    """A fresh marker: ``cnry`` + 12 characters."""
    return st.text(alphabet=MARKER_ALPHABET, min_size=12, max_size=12).map(lambda s: "cnry" + s)


def _build(kind: CanaryKind, tag: str, filler: str, number: int) -> Canary:
    """The planted value of ``kind`` around marker ``tag``."""
    if kind is CanaryKind.email:
        return Canary(kind, f"{tag}.smith@example.com", tag)
    if kind is CanaryKind.home_path_macos:
        return Canary(kind, f"/Users/{tag}/Documents/taxes 2026.pdf", tag)
    if kind is CanaryKind.home_path_windows:
        return Canary(kind, f"C:\\Users\\{tag}\\AppData\\Roaming\\notes.txt", tag)
    if kind is CanaryKind.account:
        return Canary(kind, f"CORP\\{tag}", tag)
    if kind is CanaryKind.bearer_token:
        return Canary(kind, f"Bearer ghp_{tag}{'Q' * 24}", tag)
    if kind is CanaryKind.long_unicode:
        return Canary(kind, f"日本語のメモ — ünïcødé ✓ {filler} {tag} " * 40, tag)
    if kind is CanaryKind.large_number:
        return Canary(kind, number, str(number), number=number)
    if kind is CanaryKind.note_title:
        return Canary(kind, f"Diagnosis {tag} (private)", tag)
    if kind is CanaryKind.mail_body:
        return Canary(kind, f"Hi,\n\nthe code for the safe is {tag}.\n\n— sent from my phone", tag)
    if kind is CanaryKind.recipe_name:
        return Canary(kind, f"weekly {tag} report", tag)
    return Canary(kind, f"{tag}-{filler}"[:60], tag)


def canary_of(kind: CanaryKind, tag: str, *, filler: str = "", number: int = 0) -> Canary:
    """A canary of ``kind`` built around ``tag`` (for hand-written cases)."""
    return _build(kind, tag, filler, number or 3_141_592_653_589_793)


_FILLER = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=20
)


def _high_entropy(number: int) -> bool:
    """Binary forms (int64, float64) that cannot occur by chance in a database file: no zero
    byte and at least six distinct bytes among the low seven (boundary values such as 2**62 are
    mostly zero bytes, which any binary file holds)."""
    low = number.to_bytes(8, "little")[:7]
    return 0 not in low and len(set(low)) >= 6


#: Large numbers (16 digits, exact as floats too), far from any count or size the pipeline
#: stores, with high-entropy binary forms.
_NUMBER = st.integers(min_value=2**50, max_value=2**53 - 1).filter(_high_entropy)


@st.composite
def canary(draw: st.DrawFn, kind: CanaryKind | None = None) -> Canary:
    """One canary, of ``kind`` or of a drawn kind."""
    chosen = kind if kind is not None else draw(st.sampled_from(list(CanaryKind)))
    return _build(chosen, draw(marker()), draw(_FILLER), draw(_NUMBER))


@st.composite
def canaries(draw: st.DrawFn) -> dict[CanaryKind, Canary]:
    """One canary of every kind, with distinct markers."""
    out: dict[CanaryKind, Canary] = {}
    seen: set[str] = set()
    for kind in CanaryKind:
        case = draw(canary(kind).filter(lambda c: c.marker not in seen))
        seen.add(case.marker)
        out[kind] = case
    return out
