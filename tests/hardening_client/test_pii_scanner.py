"""Issue 15 item 9: personal data found (and named, never echoed) in linear time."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contract._linear import unbounded_quantifier
from contract.pii_scan import PATTERNS, find_personal_data, iban_valid, luhn_valid
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
]


@pytest.mark.parametrize("name", sorted(FOUND))
def test_pii_scanner_finds_each_kind_naming_rule_and_offset(name: str) -> None:
    text, rule = FOUND[name]
    hits = find_personal_data(text)
    assert [h.rule for h in hits] == [rule]
    assert 0 <= hits[0].start < len(text)


@pytest.mark.parametrize("text", NOT_FOUND)
def test_pii_scanner_precision(text: str) -> None:
    assert find_personal_data(text) == []


def test_pii_scanner_patterns_are_bounded() -> None:
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
}


@pytest.mark.parametrize("family", sorted(HOSTILE))
def test_pii_scanner_no_redos_cost_grows_linearly_to_the_size_limit(family: str) -> None:
    """A quarter of the limit against the limit, in CPU time side by side: linear (a busy
    machine slows both alike, so cannot fail it)."""
    small, large = HOSTILE[family](100_000 // FACTOR), HOSTILE[family](100_000)
    grown = growth(lambda: find_personal_data(small), lambda: find_personal_data(large))
    assert grown <= LINEAR_GROWTH, grown


@given(st.text(alphabet="0123456789", min_size=12, max_size=19))
def test_luhn_matches_the_definition(digits: str) -> None:
    total = sum(
        (d if i % 2 == 0 else (2 * d - 9 if 2 * d > 9 else 2 * d))
        for i, d in enumerate(int(c) for c in reversed(digits))
    )
    assert luhn_valid(digits) is (total % 10 == 0)


def test_iban_check_digits() -> None:
    assert iban_valid("GB82WEST12345698765432")
    assert not iban_valid("GB82WEST12345698765431")


def test_pii_scanner_fails_closed_when_decoys_exhaust_its_candidate_budget() -> None:
    decoys = "4111 1111 1111 1112 " * 3000  # card-shaped, failing Luhn
    hits = find_personal_data(decoys + "mail jane.doe@acme-corp.io")
    assert {h.rule for h in hits} & {"email_address", "too_many_candidates"}
    hidden = find_personal_data(decoys + " 4111 1111 1111 1111")
    assert hidden, "a card hidden behind decoys must still refuse the text"
