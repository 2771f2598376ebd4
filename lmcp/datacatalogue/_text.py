"""Shared text helpers of the data catalogue's sections (how a value or a vocabulary is shown)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

#: Vocabularies longer than this are listed once, in the vocabulary section, not per field.
INLINE_VALUES = 8


def snake(name: str) -> str:
    """A vocabulary's name from its enum's: ``ToolName`` -> ``tool_name``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def values_text(vocab: str, members: Sequence[str]) -> str:
    if len(members) <= INLINE_VALUES:
        return ", ".join(members)
    return f"{len(members)} values of `{vocab}`"


def short(text: str, most: int = 120) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def sample(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | dict):
        return short(json.dumps(value, default=str, ensure_ascii=False))
    return short(json.dumps(str(value), ensure_ascii=False))
