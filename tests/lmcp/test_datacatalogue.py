"""The data catalogue is derived from the code: no section types a count, a bound or a
vocabulary's size by hand, and the client's files it describes are the files the client
writes."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import httpx

from client.runtime import Runtime
from contract.schema import MAX_ARGS, RING_SIZE, SCHEMA_VERSION, ErrorClass, ToolName
from lmcp.datacatalogue import DataFormat, generate

SECTIONS = Path(__file__).resolve().parents[2] / "lmcp" / "datacatalogue"

#: A number written into prose: "24 values", "at most 200", "0..32 items", "1,000 signals".
TYPED_COUNT = re.compile(
    r"\b\d[\d,]*\s+(?:values|items|signals|entries|keys|rows|members)\b"
    r"|\bat most \d|\.\.\d"
)


def _typed_counts(source: str) -> list[str]:
    """Numbers typed into the string literals of a module (f-string parts included)."""
    return [
        found
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for found in TYPED_COUNT.findall(node.value)
    ]


def test_no_section_types_a_count_by_hand() -> None:
    sections = sorted(SECTIONS.glob("*.py"))
    assert len(sections) >= 8  # a moved package must not make this vacuous
    found = {p.name: hits for p in sections if (hits := _typed_counts(p.read_text("utf-8")))}
    assert found == {}


def test_the_count_check_sees_a_typed_count() -> None:
    hand = 'X = ("24 values of `tool_name`", "0..32 items", "at most 1,000", f"0..{n} items")'
    assert _typed_counts(hand) == ["24 values", "..3", "at most 1"]


def _client(key: str) -> DataFormat:
    formats = {fmt.key: fmt for fmt in generate(storage=False).formats}
    return formats[key]


def test_the_latest_failure_is_described_by_the_code() -> None:
    fields = {f.name: f for f in _client("client.last_failure").fields}
    assert fields["tool"].values == f"{len(ToolName)} values of `tool_name`"
    assert fields["error_class"].values == f"{len(ErrorClass)} values of `error_class`"
    assert fields["args"].values == f"0..{MAX_ARGS} items"
    assert fields["ring"].values == f"0..{RING_SIZE} items"


def test_the_client_writes_the_files_the_catalogue_describes(tmp_path: Path) -> None:
    """A real failure reported in local mode: every file the client writes is a format of the
    catalogue, under the name the catalogue gives, and holds exactly its fields."""
    (tmp_path / "settings.json").write_text('{"anonymous_signals": "local"}', encoding="utf-8")
    never = httpx.MockTransport(lambda request: httpx.Response(500))  # local: never called
    with Runtime.from_env({"LMCP_HOME": str(tmp_path)}, transport=never) as runtime:
        runtime.host.dispatch("read_note", {"note_name": "x"})
        answer = runtime.reporter.report({"friction_type": "cannot_complete"})
        assert answer["reason"] == "local_only", answer
    # Lock files are empty: they hold nothing to catalogue.
    files = [p for p in tmp_path.iterdir() if p.is_file() and p.name != "settings.json"]
    assert all(p.stat().st_size == 0 for p in files if p.name.endswith(".lock"))
    written = {p.name for p in files if not p.name.endswith(".lock")}
    catalogued = {
        fmt.title: fmt for fmt in generate(storage=False).formats if fmt.key.startswith("client.")
    }
    assert written and written <= set(catalogued), written - set(catalogued)
    failure = json.loads((tmp_path / "last_failure.json").read_text(encoding="utf-8"))
    assert set(failure) == {f.name for f in catalogued["last_failure.json"].fields}
    sent = json.loads((tmp_path / "sent.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(sent) == {f.name for f in catalogued["sent.jsonl"].fields}


def test_the_wire_format_is_titled_by_the_version_it_sends() -> None:
    """The title names the ``schema_version`` every signal carries, never a version typed by
    hand (it said "version 1" while the client sent 2)."""
    signal = _client("wire.signal")
    fields = {f.name: f for f in signal.fields}
    assert signal.title == f"Friction signal, version {SCHEMA_VERSION}"
    assert fields["schema_version"].example == str(SCHEMA_VERSION)
