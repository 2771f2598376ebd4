"""What a triage question is asked about: the period and the filters.

Pure values. ``Filters.parse`` turns untrusted strings (query string, CLI options) into enum
members and dates; its errors name the field and the rule, never the value that was given.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from contract.schema import Platform, ToolName

__all__ = [
    "DEFAULT_DAYS",
    "FilterError",
    "Filters",
    "Period",
    "Version",
    "FILTER_LABELS",
    "checked_filters",
    "form_day",
    "unavailable_sentence",
]

#: The default period: the last four released weeks (``analysis._period.resolve``).
DEFAULT_DAYS = 28
#: The longest period a question may span (keeps every query bounded).
MAX_DAYS = 3660
_E = TypeVar("_E", Platform, ToolName)
_VERSION = re.compile(r"^(0|[1-9][0-9]{0,2})(?:\.(0|[1-9][0-9]{0,2})(?:\.(0|[1-9][0-9]{0,3}))?)?$")


class FilterError(ValueError):
    """A filter value is unusable. The message names the field and the rule, not the value."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"filter '{field}' {rule}")
        self.field = field
        self.rule = rule


@dataclass(frozen=True, slots=True)
class Version:
    """A client version or a prefix of one: ``1``, ``1.4`` or ``1.4.2``."""

    major: int
    minor: int | None = None
    patch: int | None = None

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION.match(text)
        if match is None:
            raise FilterError("version", "must look like 1, 1.4 or 1.4.2")
        major, minor, patch = match.groups()
        return cls(
            int(major),
            None if minor is None else int(minor),
            None if patch is None else int(patch),
        )

    def __str__(self) -> str:
        return ".".join(str(p) for p in (self.major, self.minor, self.patch) if p is not None)


@dataclass(frozen=True, slots=True)
class Period:
    """An inclusive range of UTC days."""

    start: dt.date
    end: dt.date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def previous(self) -> Period:
        """The period of the same length right before this one."""
        length = dt.timedelta(days=self.days)
        return Period(self.start - length, self.start - dt.timedelta(days=1))

    def following(self) -> Period:
        """The period of the same length right after this one."""
        length = dt.timedelta(days=self.days)
        return Period(self.end + dt.timedelta(days=1), self.end + length)


@dataclass(frozen=True, slots=True)
class Filters:
    """Which signals a question looks at. ``None`` means "any"."""

    start: dt.date | None = None
    end: dt.date | None = None
    platform: Platform | None = None
    version: Version | None = None
    tool: ToolName | None = None

    def __post_init__(self) -> None:
        if self.start is not None and self.end is not None:
            if self.start > self.end:
                raise FilterError("start", "must not be after 'end'")
            if (self.end - self.start).days >= MAX_DAYS:
                raise FilterError("start", f"must be less than {MAX_DAYS} days before 'end'")

    @classmethod
    def parse(cls, values: Mapping[str, str | None]) -> Filters:
        """Filters from strings; empty strings mean "any". Unknown keys are refused."""
        known = {"start", "end", "platform", "version", "tool"}
        for key in values:
            if key not in known:
                raise FilterError(key if key.isidentifier() else "?", "is not a filter")
        raw = {key: (values.get(key) or "").strip() or None for key in known}
        return cls(
            start=_date("start", raw["start"]),
            end=_date("end", raw["end"]),
            platform=_enum("platform", raw["platform"], Platform),
            version=None if raw["version"] is None else Version.parse(raw["version"]),
            tool=_enum("tool", raw["tool"], ToolName),
        )

    def as_strings(self) -> dict[str, str]:
        """The set filters as strings (for a query string); inverse of ``parse``."""
        out: dict[str, str] = {}
        if self.start is not None:
            out["start"] = self.start.isoformat()
        if self.end is not None:
            out["end"] = self.end.isoformat()
        if self.platform is not None:
            out["platform"] = self.platform.value
        if self.version is not None:
            out["version"] = str(self.version)
        if self.tool is not None:
            out["tool"] = self.tool.value
        return out


#: Each filter's label on the dashboard's form: the names a person sees.
FILTER_LABELS: Mapping[str, str] = {
    "start": "From", "end": "To", "platform": "Platform", "version": "Version", "tool": "Tool",
}  # fmt: skip


def unavailable_sentence(title: str, name: str) -> str:
    """Why the figures titled ``title`` (as the page or report shows them) cannot take the
    filter ``name``: their release has no such dimension."""
    label = FILTER_LABELS.get(name, name)
    return (
        f"\u201c{title}\u201d is released without a {name}, so it cannot be filtered by one: "
        f"set {label} to \u201cany\u201d to see it"
    )


def checked_filters(params: Mapping[str, str], allowed: frozenset[str]) -> Filters:
    """A page's filters from its query: ``FilterError`` for a key it does not take (named when
    it is an identifier, never echoed otherwise) or a value it refuses."""
    for key in params:
        if key not in allowed:
            raise FilterError(key if key.isidentifier() else "?", "is not a filter")
    return Filters.parse(params)


def form_day(submitted: Mapping[str, str], key: str, default: str) -> str:
    """What a page's date field shows after a filter error: the day as submitted when it is a
    day (an inverted range stays, to be corrected), else ``default``. A date field holds
    nothing else, and a page never echoes the free text it was sent."""
    text = submitted.get(key)
    try:
        return text if text is not None and _date(key, text) is not None else default
    except FilterError:
        return default


def _date(field: str, text: str | None) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else _bad_date(field)
    except ValueError:
        return _bad_date(field)


def _bad_date(field: str) -> dt.date:
    raise FilterError(field, "must be a date like 2026-01-31")


def _enum(field: str, text: str | None, enum: type[_E]) -> _E | None:
    if text is None:
        return None
    try:
        return enum(text)
    except ValueError:
        # The allowed values are the public enum's, never the value given.
        allowed = ", ".join(member.value for member in enum)
        raise FilterError(field, f"must be one of: {allowed}") from None
