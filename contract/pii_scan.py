"""Personal data in free text: e-mail addresses, phone numbers, payment cards and IBANs.

Cloud Skills refuse a document that holds any, as they refuse secrets. A hit names the rule and
the offset -- never the value. Candidates are found by linear-time patterns (see
``contract._linear``) and then checked in Python: a card number must pass Luhn and start like a
card, an IBAN must pass ISO 7064 mod-97 with its country's length, an e-mail address must not be
at a reserved domain (``example.com``, ``.test``, ...), a phone number must be international
(``+``/``00``), North-American shaped, or named as a phone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from contract._linear import MAX_SCAN_CHARS, Normalised, Taken, normalise

__all__ = ["PiiHit", "find_personal_data", "iban_valid", "luhn_valid", "scan_json_pii"]


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
_IBAN_LENGTH = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30,
    "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29,
    "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip
#: Group shapes a written card number takes (digits per group); unseparated runs also count.
_CARD_SHAPES = {(4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 1), (4, 4, 4, 2)}


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


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


def iban_valid(candidate: str) -> bool:
    """ISO 13616: the country's length and the ISO 7064 mod-97-10 check."""
    if _IBAN_LENGTH.get(candidate[:2]) != len(candidate):
        return False
    moved = candidate[4:] + candidate[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _email(match: re.Match[str]) -> bool:
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


def _phone_digits(text: str) -> bool:
    groups = re.split(r"[ ().\-]{1,3}", text.strip("()+ "))
    digits = "".join(groups)
    while len(digits) > 15 and len(groups) > 1:  # a number followed by another figure
        groups.pop()
        digits = "".join(groups)
    return digits.isdigit() and 8 <= len(digits) <= 15


def _card(match: re.Match[str]) -> bool:
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
            and luhn_valid(digits)
        ):
            return True
    return False


def _iban(match: re.Match[str]) -> bool:
    compact = match.group(0).replace(" ", "")
    length = _IBAN_LENGTH.get(compact[:2])
    return length is not None and len(compact) >= length and iban_valid(compact[:length])


_HINT = re.compile(r"[0-9@]")
MAX_HITS_PER_RULE = 32
_Check = Callable[[re.Match[str]], bool]
#: (rule, hint, pattern, check, the group whose span is reported)
_RULES: tuple[tuple[str, str, re.Pattern[str], _Check, int], ...] = (
    ("email_address", "@", _EMAIL, _email, 0),
    ("iban", "", _IBAN, _iban, 0),
    ("payment_card", "", _CARD, _card, 0),
    ("phone_number", "", _PHONE_INTL, lambda m: _phone_digits(m.group(0)), 0),
    ("phone_number", "", _PHONE_NANP, lambda m: True, 0),
    ("phone_number", "", _PHONE_NAMED, lambda m: _phone_digits(m.group(1)), 1),
)
#: Every pattern, for the tests that check linearity.
PATTERNS: tuple[re.Pattern[str], ...] = tuple(rule[2] for rule in _RULES)


def _scan(norm: Normalised) -> list[tuple[str, int]]:
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
                # Each candidate costs a Python check: past the bound, refuse (fail closed)
                # rather than let personal data hide behind decoys.
                found.append(("too_many_candidates", span[0]))
                break
            if not check(match):
                continue
            taken.add(span)
            found.append((rule, span[0]))
            hits += 1
    return found


def find_personal_data(text: str) -> list[PiiHit]:
    """Every personal-data span in ``text``: rule ids and offsets, never the values."""
    if len(text) > MAX_SCAN_CHARS:
        return [PiiHit("too_large_to_scan", 0)]
    if not _HINT.search(text):
        return []
    norm = normalise(text)
    hits = [PiiHit(rule, norm.origin(start)) for rule, start in _scan(norm)]
    hits.sort(key=lambda h: h.start)
    return hits


def scan_json_pii(value: object, location: str = "") -> list[tuple[str, str, int]]:
    """(location, rule, offset) for personal data in the strings (and keys) of a JSON value."""
    found: list[tuple[str, str, int]] = []
    if isinstance(value, str):
        found.extend((location or "$", h.rule, h.start) for h in find_personal_data(value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{location}.{key}" if location else str(key)
            if isinstance(key, str):
                found.extend((location or "$", h.rule, h.start) for h in find_personal_data(key))
            found.extend(scan_json_pii(item, where))
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for index, item in enumerate(value):
            found.extend(scan_json_pii(item, f"{location}[{index}]"))
    return found
