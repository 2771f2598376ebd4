"""The personal-data scan's checks, backed by maintained libraries: python-stdnum (Luhn, IBAN,
US SSN) and phonenumbers (Google's libphonenumber metadata).

``contract.pii_scan`` holds the pure rules and the scan; it may import only the standard
library and pydantic, so these checks are given to it (:data:`LIBRARY_CHECKS`) by the Cloud
Skills service, whose extra carries the two libraries (``docs/architecture.md``).
"""

from __future__ import annotations

import phonenumbers
from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.us import ssn as _ssn

from contract.pii_scan import PiiChecks, PiiHit, find_personal_data, scan_json_pii

__all__ = ["LIBRARY_CHECKS", "LibraryChecks", "personal_data", "personal_data_in_json"]

#: Numbers stdnum refuses because they were printed in advertising and then used by thousands
#: (``078-05-1120`` was on a wallet insert): each was a person's number, and each is what a
#: careless document holds. The scan refuses them like any issuable number.
_PUBLISHED_SSNS = frozenset({"078051120", "457555462", "219099999"})


class LibraryChecks:
    """:class:`contract.pii_scan.PiiChecks` with stdnum and phonenumbers."""

    def card(self, digits: str) -> bool:
        return bool(_luhn.is_valid(digits))

    def iban(self, compact: str) -> bool:
        return bool(_iban.is_valid(compact))

    def ssn(self, digits: str) -> bool:
        return digits in _PUBLISHED_SSNS or bool(_ssn.is_valid(digits))

    def phone(self, text: str, region: str | None) -> bool:
        try:
            number = phonenumbers.parse(text, region)
        except phonenumbers.NumberParseException:
            return False
        if region is None:  # a country code was written: possible there is enough
            return bool(phonenumbers.is_possible_number(number))
        return bool(phonenumbers.is_valid_number(number))


LIBRARY_CHECKS: PiiChecks = LibraryChecks()


def personal_data(text: str) -> list[PiiHit]:
    """``contract.pii_scan.find_personal_data`` with the library checks."""
    return find_personal_data(text, LIBRARY_CHECKS)


def personal_data_in_json(value: object) -> list[tuple[str, str, int]]:
    """``contract.pii_scan.scan_json_pii`` with the library checks."""
    return scan_json_pii(value, LIBRARY_CHECKS)
