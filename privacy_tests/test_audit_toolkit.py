"""The audit's own instruments can fail: the scanner finds a marker in every encoding it claims,
at every offset, and stays quiet on unrelated bytes; canaries carry their marker; the socket guard
sees and refuses real connections; the log capture sees non-propagating loggers without switching
on output the product never produces; the dashboard reader follows what a page links, once,
and sees a value a page shows back."""

from __future__ import annotations

import base64
import binascii
import functools
import json
import logging
import socket
import struct
import urllib.parse
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.catalogue import load_catalogue
from privacy_tests.audit.canaries import Canary, CanaryKind, canaries, canary
from privacy_tests.audit.cases import ENCODINGS, Case, generate_cases, place, positions
from privacy_tests.audit.dashboard import DashboardRead, friction_path, read_dashboard
from privacy_tests.audit.logs import LogCapture, capture_logs
from privacy_tests.audit.scan import (
    NeedleIndex,
    ScanStats,
    alias_forms,
    assert_no_leaks,
    find_leaks,
    forms,
)
from privacy_tests.audit.sockets import SocketGuard
from tests.hypothesis_profiles import at_most

_BYTES = st.binary(max_size=40)


def _encodings(value: str) -> dict[str, bytes]:
    raw = value.encode("utf-8")
    return {
        "raw": raw,
        "base64": base64.b64encode(raw),
        "base64url": base64.urlsafe_b64encode(raw),
        "hex": binascii.hexlify(raw),
        "HEX": binascii.hexlify(raw).upper(),
        "url": urllib.parse.quote(value).encode(),
        "url-plus": urllib.parse.quote_plus(value).encode(),
        "json": json.dumps(value).encode(),
        "json-ascii": json.dumps(value, ensure_ascii=True).encode(),
        "utf-16": value.encode("utf-16-le"),
    }


@given(case=canary(), prefix=st.text(max_size=7), suffix=st.text(max_size=7), before=_BYTES)
def test_the_scanner_finds_a_canary_in_every_encoding_at_any_offset(
    case: Canary, prefix: str, suffix: str, before: bytes
) -> None:
    value = prefix + case.text + suffix
    for name, encoded in _encodings(value).items():
        leaks = find_leaks({"sink": before + encoded + b"tail"}, [case])
        assert leaks, f"the scanner missed a {name}-encoded {case.kind}"
        assert leaks[0].sink == "sink" and leaks[0].kind == case.kind.value


@given(number=st.integers(min_value=10**14, max_value=2**62), before=_BYTES)
def test_the_scanner_finds_numbers_stored_in_binary(number: int, before: bytes) -> None:
    case = Canary(CanaryKind.large_number, number, str(number), number=number)
    for blob in (
        struct.pack("<q", number),
        struct.pack(">q", number),
        struct.pack("<d", float(number)),
    ):
        assert find_leaks({"db": before + blob}, [case])


@given(planted=canaries(), noise=st.binary(min_size=0, max_size=4096))
def test_the_scanner_is_quiet_on_unrelated_bytes(
    planted: dict[CanaryKind, Canary], noise: bytes
) -> None:
    assert find_leaks({"noise": noise}, planted.values()) == []


@given(planted=canaries())
def test_canaries_carry_distinct_markers_in_their_values(
    planted: dict[CanaryKind, Canary],
) -> None:
    assert set(planted) == set(CanaryKind)
    assert len({c.marker for c in planted.values()}) == len(planted)
    for case in planted.values():
        assert case.marker in case.text


def test_one_failure_line_names_the_sink_and_the_kind_never_the_value() -> None:
    case = Canary(CanaryKind.email, "cnryabcdefghijkm.smith@example.com", "cnryabcdefghijkm")
    stats = ScanStats(set())
    with pytest.raises(AssertionError) as info:
        assert_no_leaks(
            {"dashboard HTML": b"<td>cnryabcdefghijkm</td>", "clean": b"ok"}, [case], stats
        )
    message = str(info.value)
    assert "'email address' leaked into sink 'dashboard HTML'" in message
    assert "cnryabcdefghijkm" not in message and "clean" not in message
    assert stats.sinks == {"dashboard HTML", "clean"} and stats.checks == 2


# -- the socket guard --------------------------------------------------------------------------


def test_the_socket_guard_sees_and_refuses_a_real_connection() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/"
        with SocketGuard(block=True) as guard, httpx.Client(trust_env=False) as http:
            with pytest.raises(httpx.ConnectError):
                http.get(url)
        assert guard.count >= 1
        assert any("127.0.0.1" in address for _, _, address in guard.attempts)
    # restored: a connection works again outside the guard
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname(), timeout=2):
            pass


def test_the_socket_guard_counts_lookups_and_ignores_local_pairs() -> None:
    with SocketGuard(block=False) as guard:
        socket.getaddrinfo("localhost", 80)
        left, right = socket.socketpair()
        left.close()
        right.close()
    assert [op for op, _, _ in guard.attempts] == ["getaddrinfo"]


# -- the log capture ---------------------------------------------------------------------------


def test_the_log_capture_sees_non_propagating_loggers_that_write() -> None:
    writer = logging.getLogger("audit-selftest.writer")
    writer.propagate = False
    writer.addHandler(logging.NullHandler())
    silent = logging.getLogger("audit-selftest.silent")
    silent.propagate = False  # no handler: writes nothing, and must stay so
    try:
        with capture_logs() as logs:
            writer.debug("writer %s", "cnrywriter000000")
            logging.getLogger("audit-selftest.child").error("boom", exc_info=ValueError("cnryexc"))
            assert not silent.hasHandlers()
        data = logs.data()
        assert b"cnrywriter000000" in data and b"cnryexc" in data
    finally:
        writer.handlers.clear()
        writer.propagate = silent.propagate = True


def test_muting_drops_only_this_threads_records_of_the_named_loggers() -> None:
    logs = LogCapture()
    with capture_logs(logs), logs.muting_this_thread("audit-selftest.client"):
        logging.getLogger("audit-selftest.client").warning("own request cnrymuted0000000")
        logging.getLogger("audit-selftest.server").warning("server cnryheard0000000")
    assert b"cnrymuted" not in logs.data() and b"cnryheard" in logs.data()


# -- generated cases and the index that scans them ------------------------------------------


@functools.cache
def _generated() -> tuple[list[Case], NeedleIndex]:
    cases = generate_cases(seed=15)
    return cases, NeedleIndex([c.canary for c in cases])


def test_the_generator_covers_every_kind_encoding_and_position() -> None:
    cases, _ = _generated()
    assert len(cases) >= 10_000
    assert len({c.canary.marker for c in cases}) == len(cases), "one marker per case"
    assert {c.canary.kind for c in cases} == set(CanaryKind)
    assert {c.encoding for c in cases} == set(ENCODINGS)
    tools = {name.split(".")[0] for name in positions() if "." in name}
    assert tools == {t.name for t in load_catalogue()} - {"recipe_list"}  # it takes no argument
    assert any(isinstance(c.planted, int) for c in cases), "a number where a number belongs"


def test_every_generated_case_is_found_where_it_was_planted_as_passed() -> None:
    """A case the scanner could not find even verbatim would make the audit vacuous."""
    cases, index = _generated()
    missed = []
    for i, case in enumerate(cases):
        tool, args = place(case)
        passed = json.dumps([tool, args], ensure_ascii=False).encode("utf-8", "surrogatepass")
        if i not in index.search(passed):
            missed.append((case.canary.kind.value, case.encoding, case.position))
    assert missed == []


@settings(max_examples=at_most(30))
@given(data=st.data(), noise=st.binary(max_size=2048))
def test_the_index_finds_what_a_naive_search_finds(data: st.DataObject, noise: bytes) -> None:
    cases, index = _generated()
    picked = data.draw(st.lists(st.integers(0, len(cases) - 1), max_size=6))
    sink = bytearray(noise)
    for i in picked:
        c = cases[i].canary
        options = list(forms(c.marker, c.number)) + [f for a in c.aliases for f in alias_forms(a)]
        _, needle = data.draw(st.sampled_from(options))
        at = data.draw(st.integers(0, len(sink)))
        sink[at:at] = needle
    blob = bytes(sink)
    naive = set()
    for i, case in enumerate(cases):
        c = case.canary
        options = list(forms(c.marker, c.number)) + [f for a in c.aliases for f in alias_forms(a)]
        for form, needle in options:
            if needle in (blob.lower() if form in ("hex", "alias-hex") else blob):
                naive.add(i)
                break
    assert set(index.search(blob)) == naive
    assert {i for i in picked if _intact(cases, i, blob)} <= naive


def _intact(cases: list[Case], i: int, blob: bytes) -> bool:
    """A later insertion may cut an earlier needle in two: only intact ones must be found."""
    c = cases[i].canary
    options = list(forms(c.marker, c.number)) + [f for a in c.aliases for f in alias_forms(a)]
    return any(n in blob or n in blob.lower() for _, n in options)


# -- the dashboard reader ----------------------------------------------------------------------

_FRICTION_PAGE = friction_path("read_note", "not_found", "cannot_complete")


def _fake_dashboard(*, echo: bool = False, accept: bool = False) -> httpx.MockTransport:
    """A dashboard in memory: the overview links a friction page and a download; the friction
    page links its own download and its previous period (itself, with a query). A period that
    is no day is refused (422), shown back when ``echo``; ``accept`` answers it 200."""
    csv = {"text": "n,moe\r\n5,1\r\n", "headers": {"content-type": "text/csv"}}
    top = "/dashboard/export/top.csv?start=2026-01-01&amp;x=1"
    pages: dict[str, dict[str, Any]] = {
        "/dashboard": {"html": f'<a href="{_FRICTION_PAGE}">f</a><a href="{top}">d</a>'},
        "/dashboard/tool/read_note": {"html": "<p>tool</p>"},
        _FRICTION_PAGE: {"html": f'<a href="{_FRICTION_PAGE}?start=2026-01-01">p</a>'
                                 f'<a href="{_FRICTION_PAGE}/export/trend.json">d</a>'},
        "/dashboard/export/top.csv": csv,
        f"{_FRICTION_PAGE}/export/trend.json": {"json": {"rows": [{"n": 5}]}},
    }  # fmt: skip

    def answer(request: httpx.Request) -> httpx.Response:
        sent = [v for k, v in request.url.params.items() if k in ("start", "end")]
        if any(not v.startswith("2026-") for v in sent):
            return httpx.Response(200 if accept else 422, html=f"<p>{sent if echo else ''}</p>")
        page = pages.get(request.url.path)
        return httpx.Response(404) if page is None else httpx.Response(200, **page)

    return httpx.MockTransport(answer)


def _read(transport: httpx.MockTransport, hostile: list[str] = []) -> DashboardRead:  # noqa: B006
    with httpx.Client(transport=transport, base_url="http://dashboard.test") as http:
        return read_dashboard(http, hostile=hostile, tools=["read_note"])


def test_the_dashboard_reader_follows_friction_pages_and_downloads_once() -> None:
    read = _read(_fake_dashboard())
    assert list(read.friction_pages()) == [_FRICTION_PAGE], "one page per friction"
    assert read.downloads_of("csv") == ["/dashboard/export/top.csv?start=2026-01-01&x=1"]
    assert read.downloads_of("json") == [f"{_FRICTION_PAGE}/export/trend.json"]
    assert read.failed() == [] and read.hostile == {}


def test_the_dashboard_reader_finds_a_value_shown_back_and_never_names_it() -> None:
    case = Canary(CanaryKind.email, "cnryabcdefghijkm.smith@example.com", "cnryabcdefghijkm")
    clean = _read(_fake_dashboard(), [case.text])
    # The asks carry the value in their URLs; the sink holds what came back, not what was asked.
    assert find_leaks(clean.sinks(), [case]) == []
    assert all(case.marker not in what for what in clean.hostile)
    assert clean.not_refused() == []
    leaky = _read(_fake_dashboard(echo=True), [case.text])
    leaks = find_leaks(leaky.sinks(), [case])
    assert {leak.sink for leak in leaks} == {"dashboard answers to hostile requests"}
    accepting = _read(_fake_dashboard(accept=True), [case.text])
    assert accepting.not_refused(), "a hostile period answered 200 is no refusal"
