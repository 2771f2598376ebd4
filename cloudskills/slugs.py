"""The slug contract: 1 to 64 characters, lowercase, and how a slug is derived from a name."""

from __future__ import annotations

import re
import unicodedata

from cloudskills.limits import MAX_SLUG_CHARS

__all__ = ["SLUG_PATTERN", "derive_slug", "is_valid_slug"]

#: Lowercase ASCII letters and digits in runs joined by single hyphens.
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def is_valid_slug(slug: str) -> bool:
    return 1 <= len(slug) <= MAX_SLUG_CHARS and SLUG_PATTERN.match(slug) is not None


def derive_slug(name: str) -> str | None:
    """The slug derived from ``name``, or ``None`` when nothing usable is left.

    Accents are stripped (NFKD), everything is lowercased, each run of other characters becomes
    one hyphen, and the result is cut to 64 characters on a run boundary.
    """
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_name.lower()).strip("-")
    if len(slug) > MAX_SLUG_CHARS:
        slug = slug[:MAX_SLUG_CHARS].rstrip("-")
    return slug if slug and is_valid_slug(slug) else None
