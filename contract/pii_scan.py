"""Personal data in free text: e-mail addresses, phone numbers, payment cards, IBANs, US social
security numbers and postal addresses.

Cloud Skills refuse a document that holds any, as they refuse secrets. A hit names the rule and
the offset -- never the value. Candidates are found by linear-time patterns (see
``contract._linear``) and then checked.

Where the checks live (the layer rule: ``contract`` imports the standard library and pydantic
only). This module keeps the pure rules: the candidate patterns, the shapes a written card
number takes and the ranges it starts with, the reserved e-mail domains, the street-address
forms, the bounds on hits and candidates, the scan itself. The checks that need a maintained
library -- the Luhn checksum, an IBAN's country length and mod-97, whether nine digits are an
issuable SSN, whether a number is a possible phone number -- are a :class:`PiiChecks` the
caller passes in: the Cloud Skills service gives ``cloudskills.pii_checks.LIBRARY_CHECKS``
(python-stdnum and phonenumbers), where that dependency is allowed. A phone number named as
one (``phone: ...``) without a country code has no country to validate against: it counts when
it has as many digits as E.164 allows. Where a phone number and an SSN share digits, the SSN
wins when named as one or written in its own shape (``003-10-0001``, though its ``00`` reads as an
international prefix); a ``+``, or another grouping (``0033 6 ...``), makes it a phone number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from contract._linear import MAX_SCAN_CHARS, Normalised, Taken, normalise

__all__ = ["PATTERNS", "PiiChecks", "PiiHit", "find_personal_data", "scan_json_pii"]


class PiiChecks(Protocol):
    """The library-backed checks of candidates (``cloudskills.pii_checks``)."""

    def card(self, digits: str) -> bool:
        """``digits`` pass the Luhn checksum."""
        ...

    def iban(self, compact: str) -> bool:
        """``compact`` (no spaces) is a complete, valid IBAN."""
        ...

    def ssn(self, digits: str) -> bool:
        """Nine digits that are a US social security number as issued (area, group, serial)."""
        ...

    def phone(self, text: str, region: str | None) -> bool:
        """``text`` is a possible phone number: international (``+``) when ``region`` is
        None, else a valid one of that region."""
        ...


@dataclass(frozen=True, slots=True)
class PiiHit:
    rule: str
    start: int


_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@([A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){1,8})"
)
_RESERVED_DOMAINS = ("example.com", "example.org", "example.net")
_RESERVED_TLDS = ("example", "test", "invalid", "localhost", "local")
_PHONE_INTL = re.compile(r"(?<![0-9A-Za-z+])(?:\+|00)[1-9][0-9 ().\-]{6,22}[0-9]")
_PHONE_NANP = re.compile(
    r"(?<![0-9A-Za-z])\(?[2-9][0-9]{2}\)?[ .\-]?[2-9][0-9]{2}[ .\-][0-9]{4}(?![0-9])"
)
_PHONE_NAMED = re.compile(
    r"(?i)(?<![a-z])(?:phone|tel|mobile|cell|fax)[a-z]{0,6}\.?\s{0,3}[:=]?\s{0,3}"
    r"([0-9][0-9 ().\-]{6,18}[0-9])"
)
_CARD = re.compile(r"(?<![0-9])[0-9][0-9 \-]{11,22}[0-9]")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}")
#: ``078-05-1120``, ``078 05 1120``: three, two and four digits, one separator throughout.
_SSN = re.compile(r"(?<![0-9A-Za-z\-])[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}(?![0-9A-Za-z]|-[0-9])")
_SSN_NAMED = re.compile(
    r"(?i)(?<![a-z])(?:ssn|social security(?: number| no\.?)?)\s{0,3}[:#=]?\s{0,3}"
    r"([0-9]{3}-?[0-9]{2}-?[0-9]{4})(?![0-9])"
)
_STREET_TYPES = (
    "Street|St|Road|Rd|Avenue|Ave|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Square|Sq|"
    "Terrace|Ter|Parkway|Pkwy|Highway|Hwy|Way|Circle|Cir|Crescent|Cres|Close|Mews|Grove|"
    "Gardens|Row|Alley|Trail|Plaza|Freeway|Expressway"
)
#: ``221B Baker Street``, ``1600 Pennsylvania Avenue NW``, ``350 5th Ave``, ``12-14 St. John's
#: Wood Rd``: a house number, one to four capitalised (or ordinal) words, a street type.
_STREET = re.compile(
    r"(?<![0-9A-Za-z])[0-9]{1,5}[A-Za-z]?(?:[\-/][0-9]{1,5}[A-Za-z]?)?,?[ ]{1,3}"
    r"(?:(?:[A-Z][A-Za-z'\-]{0,24}\.?|[0-9]{1,3}(?:st|nd|rd|th))[ ]{1,3}){1,4}"
    rf"(?i:{_STREET_TYPES})(?![A-Za-z])"
)
#: ``12 rue de la Paix``, ``8 bis avenue Victor Hugo``: number, street type, capitalised name.
_STREET_FR = re.compile(
    r"(?<![0-9A-Za-z])[0-9]{1,4}(?:[ ]?(?:bis|ter))?,?[ ]{1,3}"
    r"(?i:rue|avenue|boulevard|bd|place|chemin|all[ée]e|impasse|quai|cours)[ ]{1,3}"
    r"(?:(?:de|du|des|la|le|l'|d')[ ]{0,2}){0,3}[A-ZÀ-Ý][A-Za-zÀ-ÿ'\-]{1,30}"
)
#: ``Hauptstraße 5``, ``Lindenweg 12a``: a name ending in a street type, then the number.
_STREET_DE = re.compile(
    r"(?<![A-Za-zÄÖÜäöüß])[A-ZÄÖÜ][a-zäöüß]{1,30}"
    r"(?:straße|strasse|str\.|weg|gasse|allee|platz|ring|damm)[ ]{1,3}[0-9]{1,4}[a-z]?"
    r"(?![0-9A-Za-z])"
)
_PO_BOX = re.compile(r"(?i)(?<![a-z0-9])p\.?[ ]?o\.?[ ]?box[ ]{1,3}[0-9]{1,6}(?![0-9])")
#: Group shapes a written card number takes (digits per group); unseparated runs also count.
_CARD_SHAPES = {(4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 1), (4, 4, 4, 2)}
#: ISO 13616: an IBAN has 15 to 34 characters.
_IBAN_LENGTHS = range(34, 14, -1)


def _card_prefix(digits: str) -> bool:
    """Starts like a payment card (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay)."""
    two, four = int(digits[:2]), int(digits[:4])
    return (
        digits[0] == "4"
        or 51 <= two <= 55
        or 2221 <= four <= 2720
        or two in (34, 37, 35, 36, 38, 30, 62, 65)
        or four == 6011
    )


def _email(match: re.Match[str], checks: PiiChecks) -> bool:
    before = match.string[max(0, match.start() - 7) : match.start()]
    if before.endswith((":", "/")) and not before.lower().endswith("mailto:"):
        return False  # the user-info of a URL (``scheme://user:password@host``)
    domain = match.group(1).lower()
    tld = domain.rsplit(".", 1)[-1]
    if not tld.isalpha() or len(tld) < 2 or match.group(0).lower().startswith("git@"):
        return False
    return (
        domain not in _RESERVED_DOMAINS
        and not domain.endswith(tuple(f".{d}" for d in _RESERVED_DOMAINS))
        and tld not in _RESERVED_TLDS
    )


def _e164_length(text: str) -> bool:
    """As many digits as a phone number can have (E.164: at most 15; at least 8 here)."""
    groups = re.split(r"[ ().\-]{1,3}", text.strip("()+ "))
    digits = "".join(groups)
    while len(digits) > 15 and len(groups) > 1:  # a number followed by another figure
        groups.pop()
        digits = "".join(groups)
    return digits.isdigit() and 8 <= len(digits) <= 15


def _phone_intl(match: re.Match[str], checks: PiiChecks) -> bool:
    text = match.group(0)
    if text.startswith("00"):
        # SSN areas 001-009 begin with the "00" of an international prefix: a candidate that
        # begins as an issuable SSN (3-2-4, one separator) is one, and left to the SSN rule.
        # No international number is written with its country code split as "00X-XX-...".
        ssn = _SSN.match(match.string, match.start())
        if ssn is not None and _ssn(ssn, checks):
            return False
        text = "+" + text[2:]
    return checks.phone(text, None)


def _card(match: re.Match[str], checks: PiiChecks) -> bool:
    groups = re.split(r"[ \-]", match.group(0))
    if any(not g for g in groups):
        return False
    for end in range(len(groups), 0, -1):
        head = groups[:end]
        digits = "".join(head)
        shaped = len(head) == 1 or tuple(len(g) for g in head) in _CARD_SHAPES
        if (
            shaped
            and 13 <= len(digits) <= 19
            and digits.strip("0")
            and _card_prefix(digits)
            and checks.card(digits)
        ):
            return True
    return False


def _iban(match: re.Match[str], checks: PiiChecks) -> bool:
    # The pattern may run on into what follows: the longest valid head is the IBAN.
    compact = match.group(0).replace(" ", "")
    return any(checks.iban(compact[:n]) for n in _IBAN_LENGTHS if n <= len(compact))


def _ssn(match: re.Match[str], checks: PiiChecks) -> bool:
    return checks.ssn(match.group(0).replace(match.group(1), ""))


def _ssn_named(match: re.Match[str], checks: PiiChecks) -> bool:
    return checks.ssn(match.group(1).replace("-", ""))


def _always(match: re.Match[str], checks: PiiChecks) -> bool:
    return True


_HINT = re.compile(r"[0-9@]")
MAX_HITS_PER_RULE = 32
_Check = Callable[[re.Match[str], PiiChecks], bool]
#: (rule, hint, pattern, check, the group whose span is reported)
_RULES: tuple[tuple[str, str, re.Pattern[str], _Check, int], ...] = (
    ("email_address", "@", _EMAIL, _email, 0),
    ("iban", "", _IBAN, _iban, 0),
    ("payment_card", "", _CARD, _card, 0),
    # An SSN named as one first: the name decides, whatever the digits also resemble.
    ("us_ssn", "", _SSN_NAMED, _ssn_named, 1),
    # Then an international number: its groups may look like an SSN ("+672 10 6609"); one
    # that begins as an issuable SSN ("003-10-0001", "00" as in "0033") is left to the next.
    ("phone_number", "", _PHONE_INTL, _phone_intl, 0),
    ("us_ssn", "", _SSN, _ssn, 0),
    ("phone_number", "", _PHONE_NANP, lambda m, c: c.phone(m.group(0), "US"), 0),
    ("phone_number", "", _PHONE_NAMED, lambda m, c: _e164_length(m.group(1)), 1),
    ("postal_address", "", _STREET, _always, 0),
    ("postal_address", "", _STREET_FR, _always, 0),
    ("postal_address", "", _STREET_DE, _always, 0),
    ("postal_address", "", _PO_BOX, _always, 0),
)
#: Every pattern, for the tests that check linearity.
PATTERNS: tuple[re.Pattern[str], ...] = tuple(rule[2] for rule in _RULES)


def _scan(norm: Normalised, checks: PiiChecks) -> list[tuple[str, int]]:
    text = norm.text
    taken = Taken(len(text))
    found: list[tuple[str, int]] = []
    for rule, hint, pattern, check, group in _RULES:
        if hint and hint not in text:
            continue
        hits = checked = 0
        for match in pattern.finditer(text):
            span = match.span(group)
            if taken.overlaps(span):
                continue
            checked += 1
            if hits >= MAX_HITS_PER_RULE:
                break
            if checked > 64 * MAX_HITS_PER_RULE:
                # Each candidate costs a check: past the bound, refuse (fail closed) rather
                # than let personal data hide behind decoys.
                found.append(("too_many_candidates", span[0]))
                break
            if not check(match, checks):
                continue
            taken.add(span)
            found.append((rule, span[0]))
            hits += 1
    return found


def find_personal_data(text: str, checks: PiiChecks) -> list[PiiHit]:
    """Every personal-data span in ``text``: rule ids and offsets, never the values."""
    if len(text) > MAX_SCAN_CHARS:
        return [PiiHit("too_large_to_scan", 0)]
    if not _HINT.search(text):
        return []
    norm = normalise(text)
    hits = [PiiHit(rule, norm.origin(start)) for rule, start in _scan(norm, checks)]
    hits.sort(key=lambda h: h.start)
    return hits


def scan_json_pii(
    value: object, checks: PiiChecks, location: str = ""
) -> list[tuple[str, str, int]]:
    """(location, rule, offset) for personal data in the strings (and keys) of a JSON value."""
    found: list[tuple[str, str, int]] = []
    if isinstance(value, str):
        found.extend((location or "$", h.rule, h.start) for h in find_personal_data(value, checks))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{location}.{key}" if location else str(key)
            if isinstance(key, str):
                found.extend(
                    (location or "$", h.rule, h.start) for h in find_personal_data(key, checks)
                )
            found.extend(scan_json_pii(item, checks, where))
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for index, item in enumerate(value):
            found.extend(scan_json_pii(item, checks, f"{location}[{index}]"))
    return found
