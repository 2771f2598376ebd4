"""Every generated file is what the code renders now (``make generate`` writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.generate import ARTEFACTS, Artefact, main, stale, write_all


def test_a_hand_edit_is_caught_and_regenerated(tmp_path: Path) -> None:
    target = tmp_path / "generated.txt"
    artefact = Artefact(target, lambda: "from the code\n", "a test")
    assert stale([artefact]) == [target]  # missing
    assert write_all([artefact]) == [target]
    assert stale([artefact]) == [] and write_all([artefact]) == []
    target.write_text("from the code\nand a hand edit\n", encoding="utf-8")
    assert stale([artefact]) == [target]


def test_no_generated_file_is_stale_and_the_check_writes_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One rendering of every artefact (the data catalogue writes and releases a lake): the
    # check exits 0 only when nothing is stale, and names what is.
    before = {a.path: a.path.read_bytes() for a in ARTEFACTS}
    assert main(["--check"]) == 0, capsys.readouterr().err + "run `make generate`, review the diff"
    assert {a.path: a.path.read_bytes() for a in ARTEFACTS} == before
