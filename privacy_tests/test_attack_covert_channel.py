"""Attack: a prompt-injected agent moves a secret out through signal fields (for instance a
16-digit card number, two digits at a time, through eight signals' ``attempt_count``s).

- The raw count never leaves the client: two different card numbers encoded in attempt counts
  (or in the shapes of many undeclared argument keys) give the same wire bytes and the same
  stored rows, apart from the random ids.
- Whatever an agent does, every signal it causes lies in the space ``contract.privacy`` counts
  (a property over random agent behaviour), so the documented bound in bits is a real bound;
  ``docs/signal-schema.md`` quotes exactly the computed figures.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from client.runtime import Runtime
from collector.settings import CollectorSettings
from contract.catalogue import load_catalogue
from contract.limits import WEEKLY_SIGNAL_LIMIT
from contract.privacy import channel_fields, covert_channel
from contract.schema import RING_SIZE, ArgName, ArgType, FrictionSignal, SizeBucket
from tests._servers import running_collector

DOC = Path(__file__).resolve().parent.parent / "docs" / "signal-schema.md"
TOOLS = ("read_note", "list_notes", "read_file", "list_files", "send_email", "get_datetime",
         "read_email", "search_files")  # fmt: skip
CARDS = ("4111111111111111", "4111111111111112")  # differ in one digit


def _runtime(home: Path, url: str, transport: httpx.BaseTransport | None = None) -> Runtime:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text('{"anonymous_signals": "on"}')
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}
    return Runtime.from_env(env, transport=transport)


def _exfiltrate_by_counts(rt: Runtime, card: str) -> None:
    """Eight reports, two digits each as attempt_count = 1 + NN (1..100), one per tool."""
    for tool, pair in zip(TOOLS, re.findall("..", card), strict=True):
        rt.host.dispatch(
            "report_friction",
            {"friction_type": "cannot_complete", "tool_attempted": tool,
             "attempt_count": 1 + int(pair)},
        )  # fmt: skip


#: One value shape per digit: v1 kept every undeclared key's type and size, so 16 keys spelled
#: the card out (as a multiset of shapes).
_DIGIT_SHAPES: tuple[Any, ...] = (
    None, True, 7, 1.5, "x", ["x"], {"x": 1}, "x" * 20, ["x"] * 20, {str(i): i for i in range(20)},
)  # fmt: skip


def _exfiltrate_by_keys(rt: Runtime, card: str) -> None:
    """Sixteen undeclared keys, each a value whose shape is one digit of the card."""
    keys = {f"k{i}": _DIGIT_SHAPES[int(d)] for i, d in enumerate(card)}
    rt.host.dispatch("read_note", keys)
    rt.host.dispatch("report_friction", {"friction_type": "other", "tool_attempted": "read_note"})


def _stored(db: Path) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT * EXCLUDE (signal_id, received_day) FROM signals ORDER BY ALL"
        ).fetchall()


@pytest.mark.slow
@pytest.mark.parametrize("channel", [_exfiltrate_by_counts, _exfiltrate_by_keys])
def test_two_secrets_give_the_same_stored_rows(tmp_path: Path, channel: Any) -> None:
    rows = []
    for card in CARDS:
        settings = CollectorSettings(
            db_path=tmp_path / f"{card}.duckdb",
            read_tokens=[SecretStr("covert-token")],
            rate_limit_enabled=False,
        )
        wire: list[bytes] = []
        with running_collector(settings) as url, httpx.HTTPTransport() as real:

            def record(
                request: httpx.Request,
                real: httpx.HTTPTransport = real,
                wire: list[bytes] = wire,
            ) -> httpx.Response:
                wire.append(request.content)
                response = real.handle_request(request)
                response.read()
                return response

            with _runtime(tmp_path / card, url, httpx.MockTransport(record)) as rt:
                channel(rt, card)
        assert wire, "the agent's reports were not sent"
        for body in wire:
            assert b"attempt_count" not in body
            assert card.encode() not in body
        rows.append(_stored(settings.db_path))
    assert rows[0] and rows[0] == rows[1], "the stored rows tell the two card numbers apart"


def _agent_calls() -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=40),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=8,
    )
    names = st.sampled_from([t.name for t in load_catalogue()] + ["no_such_tool"])
    keys = st.sampled_from(["note_name", "path", "limit", "to", "query", "x", "card", "k0"])
    return st.lists(st.tuples(names, st.dictionaries(keys, json_values, max_size=6)), max_size=12)


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("agents")


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    calls=_agent_calls(),
    report=st.fixed_dictionaries(
        {"friction_type": st.sampled_from(["repeated_failure", "other", "cannot_complete"])},
        optional={
            "attempt_count": st.integers(1, 10**9),
            "tool_attempted": st.sampled_from([*TOOLS, "anything at all"]),
            "error_category": st.sampled_from(["timeout", "crash"]),
        },
    ),
)
def test_every_signal_an_agent_causes_lies_in_the_counted_space(
    homes: Path, calls: list[tuple[str, dict[str, Any]]], report: dict[str, Any]
) -> None:
    sent: list[bytes] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(200, json={"accepted": 1, "duplicates": 0})

    home = homes / f"h{len(list(homes.iterdir()))}"
    with _runtime(home, "http://collector.invalid", httpx.MockTransport(answer)) as rt:
        for tool, args in calls:
            rt.host.dispatch(tool, args)
        rt.host.dispatch("report_friction", report)
    catalogue = load_catalogue()
    for body in sent:
        for raw in json.loads(body)["signals"]:
            signal = FrictionSignal.model_validate_json(json.dumps(raw))
            entry = catalogue.get(signal.tool_attempted.value)
            declared = set(entry.arg_names.values()) if entry else set()
            names = [a.name for a in signal.args]
            assert len(names) == len(set(names)), "an argument name twice"
            assert set(names) <= declared | {ArgName.other}
            for shape in signal.args:
                if shape.name is ArgName.other:  # the one folded entry
                    assert shape.type is ArgType.object and shape.size is not SizeBucket.zero
            assert len(signal.ring) <= RING_SIZE


def test_the_documented_bound_is_the_computed_one() -> None:
    doc = DOC.read_text(encoding="utf-8").split("## What an agent can still encode", 1)[-1]
    bound = covert_channel()
    assert bound.signals_per_week == WEEKLY_SIGNAL_LIMIT
    per_signal = re.search(r"\*\*([\d.,]+) bits per signal\*\*", doc)
    per_week = re.search(r"\*\*([\d.,]+) bits per week\*\*", doc)
    assert per_signal and per_week, "docs/signal-schema.md no longer states the bound"
    assert float(per_signal.group(1).replace(",", "")) == round(bound.bits_per_signal, 1)
    assert float(per_week.group(1).replace(",", "")) == round(bound.bits_per_week, 1)
    # Each row of the table: the count (when written out) and its bits.
    for name, values in channel_fields().items():
        row = re.search(rf"\| `{re.escape(name.split()[0])}`[^|]*\|([^|]+)\|([^|]+)\|", doc)
        assert row, f"no row for {name}"
        assert float(row.group(2)) == round(math.log2(values), 1), name
        shown = row.group(1).strip().replace(",", "")
        if shown.isdigit():
            assert int(shown) == values, name
    assert math.isclose(sum(math.log2(v) for v in channel_fields().values()), bound.bits_per_signal)
