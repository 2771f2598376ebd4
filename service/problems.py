"""Reading an error answer of either service: its stable code and its value-free detail.

Every HTTP error of the collector and of Cloud Skills is RFC 9457 ``application/problem+json``
(``service/errors.py`` writes it); its ``detail`` names fields and rules and never a submitted
value, so a client may show it as it is.
"""

from __future__ import annotations

import json

__all__ = ["problem_of"]


def problem_of(body: bytes) -> tuple[str, str | None]:
    """The problem's ``code`` (``"error"`` when there is none) and its ``detail``, if any."""
    try:
        doc = json.loads(body)
    except ValueError:
        return "error", None
    if not isinstance(doc, dict):
        return "error", None
    code, detail = doc.get("code"), doc.get("detail")
    return (
        code if isinstance(code, str) and code else "error",
        detail if isinstance(detail, str) and detail else None,
    )
