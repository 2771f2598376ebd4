"""The sign-in form is the one body anyone may send the collector unsigned in, and it costs the
collector a few KiB whatever an attacker sends: a form of a thousand 1 MiB fields is refused
by its length before it is read (the collector's peak memory does not move), a file part is
refused and nothing is written under the collector's temporary folder, and the fields are
parsed within explicit limits.

Against ``lmcp collector serve`` in a child process whose ``TMPDIR`` is a folder of the
test's: a spooled part would be a file there, or one the process holds open (an unnamed
temporary file has no entry in the folder).
"""

from __future__ import annotations

import json
import os
import select
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from collector.settings import CollectorSettings
from tests._raw_http import Answer, Connection, head
from tests._servers import CollectorProcess, collector_process, wait_until
from tests.analysis.conftest import TEAM_TOKEN

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
LOGIN = "/dashboard/login"
FORM = "application/x-www-form-urlencoded"
BOUNDARY = "b0undary"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CollectorProcess, Path]]:
    folder = tmp_path_factory.mktemp("signin")
    tmpdir = folder / "tmp"
    tmpdir.mkdir()
    settings = CollectorSettings(
        db_path=folder / "signals.duckdb",
        read_tokens=[SecretStr(TEAM_TOKEN)],
        rate_limit_enabled=False,
    )
    with collector_process(settings, environment={"TMPDIR": str(tmpdir)}) as collector:
        yield collector, tmpdir


def _spooled(pid: int, tmpdir: Path) -> list[str]:
    """The files under ``tmpdir``: in the folder, or held open by ``pid``."""
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith(str(tmpdir)):
            held.append(target)
    return sorted([*(str(p) for p in tmpdir.iterdir()), *held])


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def _problem(answer: Answer | None, status: int, code: str) -> None:
    assert answer is not None, "the server closed the connection without an answer"
    assert answer.status != 100, "the server asked for a body it must refuse"
    assert answer.status == status, answer
    assert json.loads(answer.body)["code"] == code


def test_a_form_of_a_thousand_large_fields_is_refused_before_it_is_read(
    served: tuple[CollectorProcess, Path],
) -> None:
    collector, _ = served
    field = b"a" * (MIB - 16)
    parts = [b"f%d=" % i + field for i in range(1000)]
    length = sum(map(len, parts)) + len(parts) - 1
    before = _peak_rss_kib(collector.pid)
    with Connection(collector.base_url) as conn:
        # An attacker does not wait to be asked: it sends the whole form at once.
        conn.send(head("POST", LOGIN, {"Content-Type": FORM, "Content-Length": str(length)}))
        sent = 0
        for i, part in enumerate(parts):
            if not conn.send(part + (b"&" if i < len(parts) - 1 else b"")):
                break
            sent += 1
        answer = conn.answer(method="POST")
    # The refusal cost no memory: the peak is what it was, give or take the process's own.
    grown_mib = (_peak_rss_kib(collector.pid) - before) // 1024
    assert grown_mib < 64, f"the collector's peak memory grew by {grown_mib} MiB"
    assert sent < len(parts), "the collector read the whole gigabyte"
    _problem(answer, 413, "body_too_large")


def _multipart(file_bytes: int) -> tuple[bytes, bytes]:
    """A sign-in form as multipart with a file part: (all but the closing boundary, it)."""
    opening = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="token"; filename="t"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return opening + b"z" * file_bytes, f"\r\n--{BOUNDARY}--\r\n".encode()


@pytest.mark.parametrize("file_bytes", [200, 2 * MIB])
def test_a_file_part_is_refused_and_nothing_is_written_to_disk(
    served: tuple[CollectorProcess, Path], file_bytes: int
) -> None:
    """A small part is refused for its type (no multipart at all), a large one first for its
    length. A part larger than Starlette's 1 MiB spool would be a file on disk while the body
    is read: a collector that asks for the body is caught holding one."""
    collector, tmpdir = served
    body, closing = _multipart(file_bytes)
    headers = {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(len(body) + len(closing)),
        "Expect": "100-continue",
    }
    with Connection(collector.base_url) as conn:
        conn.send(head("POST", LOGIN, headers))
        answer = conn.answer(method="POST")
        if answer is not None and answer.status == 100:
            conn.send(body)  # all but the closing boundary: the request stays open

            def spooled_or_answered() -> bool:
                readable, _, _ = select.select([conn.sock], [], [], 0)
                return bool(readable) or bool(_spooled(collector.pid, tmpdir))

            wait_until(spooled_or_answered, what="the collector's answer or its spooled file")
            assert _spooled(collector.pid, tmpdir) == [], "the file part was spooled to disk"
            conn.send(closing)
            answer = conn.answer(method="POST")
        if file_bytes > 4 * 1024:
            _problem(answer, 413, "body_too_large")
        else:
            _problem(answer, 415, "unsupported_media_type")
    assert _spooled(collector.pid, tmpdir) == []


def test_the_form_is_parsed_within_its_limits(served: tuple[CollectorProcess, Path]) -> None:
    collector, _ = served
    for body, status, code in [
        (b"token=a&csrf=b&next=c&more=d", 400, "bad_request"),  # a fourth field
        (b"token=" + b"a" * 513, 422, "invalid_request"),  # longer than any token
        (b"csrf=" + b"c" * 65, 422, "invalid_request"),
    ]:
        with Connection(collector.base_url) as conn:
            headers = {"Content-Type": FORM, "Content-Length": str(len(body))}
            conn.send(head("POST", LOGIN, headers) + body)
            _problem(conn.answer(method="POST"), status, code)


def test_the_sign_in_form_still_signs_in(served: tuple[CollectorProcess, Path]) -> None:
    collector, _ = served
    body = f"token={TEAM_TOKEN}&next=%2Fdashboard%2Ftool%2Fread_note".encode()
    with Connection(collector.base_url) as conn:
        headers = {"Content-Type": FORM, "Content-Length": str(len(body))}
        conn.send(head("POST", LOGIN, headers) + body)
        answer = conn.answer(method="POST")
    # Signed in: sent on to ``next`` (a refused token goes back to the form).
    assert answer is not None and answer.status == 303
    assert answer.headers["location"] == "/dashboard/tool/read_note"
