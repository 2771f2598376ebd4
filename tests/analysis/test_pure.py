"""The pure core: filters, versions, periods and the session cookie (property tests; the
period an answer covers: ``test_period.py``)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis import FilterError, Filters, Period, Version
from analysis._session import SESSION_SECONDS, Revocations, make_session, open_session
from contract.schema import Platform, ToolName

days = st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2030, 12, 31))
versions = st.builds(
    Version,
    st.integers(0, 999),
    st.one_of(st.none(), st.integers(0, 999)),
    st.integers(0, 9999),
).map(lambda v: v if v.minor is not None else Version(v.major))


@st.composite
def filters(draw: st.DrawFn) -> Filters:
    start, end = sorted([draw(days), draw(days)])
    if (end - start).days >= 3000:
        start = end - dt.timedelta(days=draw(st.integers(0, 2999)))
    return Filters(
        start=draw(st.one_of(st.none(), st.just(start))),
        end=draw(st.one_of(st.none(), st.just(end))),
        platform=draw(st.one_of(st.none(), st.sampled_from(Platform))),
        version=draw(st.one_of(st.none(), versions)),
        tool=draw(st.one_of(st.none(), st.sampled_from(ToolName))),
    )


@given(f=filters())
def test_filters_round_trip_through_strings(f: Filters) -> None:
    assert Filters.parse(f.as_strings()) == f


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("start", "2026-02-30"),
        ("start", "yesterday"),
        ("end", "2026-1-1"),
        ("platform", "beos"),
        ("tool", "rm_rf"),
        ("version", "1.2.3.4"),
        ("version", "01.2"),
        ("version", "1.2.3-beta"),
        ("colour", "red"),
    ],
)
def test_bad_filters_name_the_field_never_the_value(field: str, value: str) -> None:
    with pytest.raises(FilterError) as caught:
        Filters.parse({field: value})
    assert value not in str(caught.value)


def test_empty_strings_mean_any() -> None:
    assert Filters.parse({"start": "", "platform": " ", "tool": None}) == Filters()
    assert Version.parse("1.4") == Version(1, 4)
    assert str(Version(1, 4, 2)) == "1.4.2"
    assert Period(dt.date(2026, 1, 1), dt.date(2026, 1, 7)).days == 7
    with pytest.raises(FilterError):
        Filters(start=dt.date(2026, 1, 2), end=dt.date(2026, 1, 1))


@given(
    secret=st.text(min_size=1, max_size=40),
    other=st.text(min_size=1, max_size=40),
    now=st.integers(1_600_000_000, 2_000_000_000),
    later=st.integers(-60, 2 * SESSION_SECONDS),
)
def test_a_session_is_valid_for_its_token_until_it_expires(
    secret: str, other: str, now: int, later: int
) -> None:
    cookie = make_session(secret, now=now)
    opened = open_session(cookie, [secret], now=now + later)
    assert (opened is not None) is (0 <= later < SESSION_SECONDS)  # never before its login
    if opened is not None:
        assert opened.expires == now + SESSION_SECONDS
    if other != secret:
        assert open_session(cookie, [other], now=now) is None
    nonce, stamp, mac = cookie.split(".")
    flipped = ("A" if mac[0] != "A" else "B") + mac[1:]  # the first character: all bits count
    assert open_session(f"{nonce}.{stamp}.{flipped}", [secret], now=now) is None
    assert open_session(f"{nonce[:-1]}.{stamp}.{mac}", [secret], now=now) is None


@given(secret=st.text(min_size=1, max_size=40), now=st.integers(1_600_000_000, 2_000_000_000))
def test_two_logins_in_the_same_second_are_two_sessions(secret: str, now: int) -> None:
    first, second = make_session(secret, now=now), make_session(secret, now=now)
    assert first != second
    opened = [open_session(v, [secret], now=now) for v in (first, second)]
    assert opened[0] is not None and opened[1] is not None
    assert opened[0].nonce != opened[1].nonce
    revocations = Revocations()
    revocations.revoke(opened[0])
    assert revocations.revoked(opened[0]) and not revocations.revoked(opened[1])
