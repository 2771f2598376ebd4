"""``tests/_once.py``: a file is built once per run, whoever asks, and a failed build is tried
again by the next one to ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._once import built_once


def test_the_first_asker_builds_and_the_others_reuse(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    builds: list[Path] = []

    def build(path: Path) -> None:
        builds.append(path)
        path.write_text("built")

    first = built_once(tmp_path_factory, "once-test.txt", build)
    again = built_once(tmp_path_factory, "once-test.txt", build)
    assert first == again and builds == [first]
    assert first.read_text() == "built"


def test_a_failed_build_is_tried_again(tmp_path_factory: pytest.TempPathFactory) -> None:
    def fail(path: Path) -> None:
        path.write_text("half")
        raise RuntimeError("the build failed")

    with pytest.raises(RuntimeError):
        built_once(tmp_path_factory, "once-retry.txt", fail)
    path = built_once(tmp_path_factory, "once-retry.txt", lambda p: p.write_text("whole"))
    assert path.read_text() == "whole"
