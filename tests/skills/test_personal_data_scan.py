"""The personal-data scan (``contract.pii_scan`` with ``cloudskills.pii_checks``): each class
found, named by rule and offset, in generated families as well as in known examples; near
misses (a failed checksum, an SSN that cannot be issued, prose with numbers) not; linear time."""

from __future__ import annotations

from collections.abc import Callable

import phonenumbers
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cloudskills.pii_checks import LIBRARY_CHECKS, personal_data
from contract._linear import unbounded_quantifier
from contract.pii_scan import PATTERNS
from tests._cost import FACTOR, LINEAR_GROWTH, growth

FOUND = {
    "email": ("write to jane.doe@acme-corp.io today", "email_address"),
    "email_mailto": ("[mail](mailto:jane@acme.io)", "email_address"),
    "email_plus": ("cc j.smith+skills@mail.co.uk", "email_address"),
    "phone_e164": ("call +44 20 7946 0958 please", "phone_number"),
    "phone_compact": ("call +12025550143 please", "phone_number"),
    "phone_00": ("call 0033 6 12 34 56 78", "phone_number"),
    "phone_nanp": ("call (202) 555-0143", "phone_number"),
    "phone_named": ("Phone: 06 12 34 56 78", "phone_number"),
    "card_visa": ("card 4111 1111 1111 1111 exp", "payment_card"),
    "card_compact": ("card 5555555555554444.", "payment_card"),
    "card_dashes": ("card 4012-8888-8888-1881", "payment_card"),
    "card_amex": ("amex 3782 822463 10005", "payment_card"),
    "iban_gb": ("pay GB82 WEST 1234 5698 7654 32 now", "iban"),
    "iban_de": ("IBAN DE89370400440532013000", "iban"),
    "iban_fr": ("FR14 2004 1010 0505 0001 3M02 606", "iban"),
    "ssn_published": ("SSN 078-05-1120 on file", "us_ssn"),
    "ssn_spaced": ("number 536 90 4399.", "us_ssn"),
    "ssn_named": ("ssn: 536904399", "us_ssn"),
    "address_baker": ("Send it to 221B Baker Street, London.", "postal_address"),
    "address_us": ("at 1600 Pennsylvania Avenue NW, Washington", "postal_address"),
    "address_ordinal": ("the office, 350 5th Ave, New York", "postal_address"),
    "address_abbrev": ("ship to 12-14 St. John's Wood Rd.", "postal_address"),
    "address_fr": ("au 12 rue de la Paix, Paris", "postal_address"),
    "address_de": ("an Hauptstraße 5, Berlin", "postal_address"),
    "address_po_box": ("write to P.O. Box 1234", "postal_address"),
}
NOT_FOUND = [
    "support@example.com and ops@team.example and x@host.test",
    "git@github.com:org/repo.git",
    "postgresql://app:pw@db.internal:5432/x",
    "version 1.2.3, released 2024-01-15, build 1700000000000, port 8765",
    "card 4111 1111 1111 1112 (fails Luhn)",
    "GB82 WEST 1234 5698 7654 33 (fails mod-97)",
    "ids 1234567890123 and 0000 0000 0000 0000",
    "ip 192.168.100.200 and 10.0.0.1",
    "Run the smoke test, then open the dashboard. It takes 12 to 15 minutes.",
    "ids 000-12-3456, 666-12-3456, 900-12-3456, 123-00-4567, 123-45-0000 (never issued)",
    "part 123-45-6789-01 and 123-45-67890",
    "Open 2 Terminal windows, read Section 3 Data Flow, check 3 Docker Compose files.",
    "Take 2 more steps down the road; the 3 main roads are closed.",
]


@pytest.mark.parametrize("name", sorted(FOUND))
def test_each_kind_is_found_naming_rule_and_offset(name: str) -> None:
    text, rule = FOUND[name]
    hits = personal_data(text)
    assert [h.rule for h in hits] == [rule]
    assert 0 <= hits[0].start < len(text)


@pytest.mark.parametrize("text", NOT_FOUND)
def test_near_misses_and_prose_are_not_personal_data(text: str) -> None:
    assert personal_data(text) == []


def _luhn_digit(body: str) -> str:
    """The check digit that makes ``body + digit`` pass Luhn (the definition)."""
    total = 0
    for index, char in enumerate(reversed(body)):
        value = int(char) * (2 if index % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return str((10 - total % 10) % 10)


@given(st.text(alphabet="0123456789", min_size=12, max_size=19))
def test_the_card_check_is_luhn(digits: str) -> None:
    assert LIBRARY_CHECKS.card(digits) is (_luhn_digit(digits[:-1]) == digits[-1])


@given(
    prefix=st.sampled_from(["4", "51", "55", "2221", "2720", "6011", "65", "35"]),
    body=st.text(alphabet="0123456789", min_size=15, max_size=15),
    separator=st.sampled_from([" ", "-", ""]),
    wrong=st.integers(1, 9),
)
def test_generated_card_numbers_are_found_and_a_wrong_check_digit_is_not(
    prefix: str, body: str, separator: str, wrong: int
) -> None:
    head = (prefix + body)[:15]
    good = head + _luhn_digit(head)
    bad = head + str((int(good[-1]) + wrong) % 10)
    written = [separator.join(n[i : i + 4] for i in range(0, 16, 4)) for n in (good, bad)]
    assert [h.rule for h in personal_data(f"card {written[0]} thanks")] == ["payment_card"]
    assert "payment_card" not in {h.rule for h in personal_data(f"card {written[1]} thanks")}


def _iban(country: str, bban: str) -> str:
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    return f"{country}{check:02d}{bban}"


@given(
    bank=st.text(alphabet="0123456789", min_size=8, max_size=8),
    account=st.text(alphabet="0123456789", min_size=10, max_size=10),
    spaced=st.booleans(),
)
def test_generated_ibans_are_found_and_a_changed_digit_is_not(
    bank: str, account: str, spaced: bool
) -> None:
    good = _iban("DE", bank + account)
    bad = good[:-1] + str((int(good[-1]) + 1) % 10)
    for iban, found in ((good, True), (bad, False)):
        written = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if spaced else iban
        rules = {h.rule for h in personal_data(f"pay to {written} monthly")}
        assert ("iban" in rules) is found


_AREAS = st.integers(1, 899).filter(lambda a: a != 666)


@given(
    area=_AREAS,
    group=st.integers(1, 99),
    serial=st.integers(1, 9999),
    separator=st.sampled_from(["-", " "]),
)
# Areas 001-009 begin with the "00" of an international prefix ("0033 6 ..."): an SSN still.
@example(area=3, group=10, serial=1, separator="-")
@example(area=9, group=99, serial=9999, separator=" ")
def test_every_issuable_ssn_is_found(area: int, group: int, serial: int, separator: str) -> None:
    ssn = f"{area:03d}{separator}{group:02d}{separator}{serial:04d}"
    text = f"Employee record: {ssn}, keep private."
    hits = personal_data(text)
    assert [(h.rule, h.start) for h in hits] == [("us_ssn", text.index(ssn))]


@given(
    area=_AREAS,
    group=st.integers(1, 99),
    serial=st.integers(1, 9999),
    separators=st.sampled_from([("-", "-"), ("", ""), ("-", ""), ("", "-")]),
    name=st.sampled_from(["SSN", "ssn:", "Social Security Number #", "social security no."]),
    after=st.sampled_from(["", ".", " 5 days", " 12 34", ", ok"]),
)
@example(area=1, group=1, serial=1, separators=("-", ""), name="SSN", after=".")
@example(area=3, group=10, serial=1, separators=("-", "-"), name="ssn:", after=" 12 34")
def test_every_issuable_ssn_named_as_one_is_found_with_or_without_separators(
    area: int, group: int, serial: int, separators: tuple[str, str], name: str, after: str
) -> None:
    ssn = f"{area:03d}{separators[0]}{group:02d}{separators[1]}{serial:04d}"
    text = f"{name} {ssn}{after}"
    hits = personal_data(text)
    assert [(h.rule, h.start) for h in hits] == [("us_ssn", text.index(ssn))]


@pytest.mark.parametrize(
    "written",
    ["0033 6 12 34 56 78", "0044 20 7946 0958", "001 202 555 0143", "0049 30 901820",
     "+672 10 6609", "00672 10 6609", "+1 202-555-0143"],
)  # fmt: skip
def test_international_numbers_beside_the_ssn_shape_stay_phone_numbers(written: str) -> None:
    text = f"call {written} today"
    assert [(h.rule, h.start) for h in personal_data(text)] == [("phone_number", 5)]


@given(
    area=st.one_of(st.just(0), st.just(666), st.integers(900, 999), _AREAS),
    group=st.integers(0, 99),
    serial=st.integers(0, 9999),
)
def test_an_ssn_that_cannot_be_issued_is_not_one(area: int, group: int, serial: int) -> None:
    issuable = area not in (0, 666) and area < 900 and group != 0 and serial != 0
    rules = {h.rule for h in personal_data(f"ref {area:03d}-{group:02d}-{serial:04d} ok")}
    assert ("us_ssn" in rules) is issuable


_STREET_TYPES = [
    "Street", "St", "street", "Road", "Rd.", "Avenue", "Ave", "Boulevard", "Blvd", "Lane",
    "Drive", "Dr", "Court", "Place", "Square", "Terrace", "Parkway", "Highway", "Way",
    "Crescent", "Close", "Mews", "Grove", "Gardens", "Row", "Alley", "Trail", "Plaza", "STREET",
]  # fmt: skip
_NAMES = st.sampled_from(
    ["Baker", "Oak", "Elm", "Pennsylvania", "Martin Luther King", "St. John's Wood", "Old Kent",
     "Abbey", "Fifth", "5th", "42nd", "North Lake", "Mulholland", "Rue-Royale", "O'Connell"]
)  # fmt: skip


@given(
    number=st.integers(1, 99999),
    letter=st.sampled_from(["", "A", "B", "b"]),
    name=_NAMES,
    kind=st.sampled_from(_STREET_TYPES),
    before=st.sampled_from(["Send it to ", "Office: ", "(", "We met at "]),
    after=st.sampled_from([", London.", " NW", "", ", Springfield 12345", ")"]),
)
def test_generated_street_addresses_are_found_where_they_start(
    number: int, letter: str, name: str, kind: str, before: str, after: str
) -> None:
    address = f"{number}{letter} {name} {kind}"
    text = before + address + after
    hits = personal_data(text)
    assert ("postal_address", len(before)) in [(h.rule, h.start) for h in hits]


@given(
    number=st.integers(1, 9999),
    street=st.sampled_from(["rue de la Paix", "avenue Victor Hugo", "boulevard Saint-Germain"]),
    german=st.sampled_from(["Hauptstraße", "Lindenweg", "Schillerstrasse", "Kastanienallee"]),
)
def test_generated_french_and_german_addresses_are_found(
    number: int, street: str, german: str
) -> None:
    for address in (f"{number} {street}", f"{german} {number}"):
        assert [h.rule for h in personal_data(f"au {address}, ville")] == ["postal_address"]


_REGIONS = sorted(phonenumbers.SUPPORTED_REGIONS)


@given(
    region=st.sampled_from(_REGIONS),
    kind=st.sampled_from(
        [phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE]
    ),
    style=st.sampled_from(
        [phonenumbers.PhoneNumberFormat.INTERNATIONAL, phonenumbers.PhoneNumberFormat.E164]
    ),
)
def test_example_numbers_of_every_region_are_found(region: str, kind: int, style: int) -> None:
    example = phonenumbers.example_number_for_type(region, kind)
    if example is None:
        return  # the region has no number of this kind
    written = phonenumbers.format_number(example, style)
    if not 8 <= sum(c.isdigit() for c in written) <= 15 + 3:
        return  # shorter than any number the scan calls a phone (a few island regions)
    text = f"call {written} now"
    assert ("phone_number", 5) in [(h.rule, h.start) for h in personal_data(text)]


def test_the_patterns_are_bounded() -> None:
    assert [p.pattern for p in PATTERNS if unbounded_quantifier(p.pattern)] == []


#: Adversarial families: ``make(n)`` is about ``2 * n`` characters (``n = 100_000``: the
#: size limit of a skill's text).
HOSTILE: dict[str, Callable[[int], str]] = {
    "at_runs": lambda n: "a@" * n,
    "dotted_local_part": lambda n: ("a" * 64 + ".") * (n // 33) + "@",
    "dotted_domain": lambda n: "x@" + "a." * n,
    "plus_ones": lambda n: "+1" + " 1" * n,
    "digit_runs": lambda n: "1 " * n,
    "card_runs": lambda n: "4111 " * (2 * n // 5),
    "iban_runs": lambda n: "GB82" + " A" * n,
    "phone_keywords": lambda n: "phone: " * (3 * n // 10),
    "zeros": lambda n: "0" * (2 * n),
    "ssn_runs": lambda n: "123-45-" * (2 * n // 7),
    "house_numbers": lambda n: "1 Abc " * (n // 3),
    "capitalised_words": lambda n: "12 " + "Abc " * (n // 2),
    "german_streets": lambda n: "Abcstraße " * (n // 5),
    "po_boxes": lambda n: "p.o. box " * (2 * n // 9),
}


@pytest.mark.parametrize("family", sorted(HOSTILE))
def test_hostile_input_cost_grows_linearly_to_the_size_limit(family: str) -> None:
    """A quarter of the limit against the limit, in CPU time side by side (``tests._cost``)."""
    small, large = HOSTILE[family](100_000 // FACTOR), HOSTILE[family](100_000)
    grown = growth(lambda: personal_data(small), lambda: personal_data(large))
    assert grown <= LINEAR_GROWTH, grown


def test_the_scan_fails_closed_when_decoys_exhaust_its_candidate_budget() -> None:
    decoys = "4111 1111 1111 1112 " * 3000  # card-shaped, failing Luhn
    hits = personal_data(decoys + "mail jane.doe@acme-corp.io")
    assert {h.rule for h in hits} & {"email_address", "too_many_candidates"}
    hidden = personal_data(decoys + " 4111 1111 1111 1111")
    assert hidden, "a card hidden behind decoys must still refuse the text"
