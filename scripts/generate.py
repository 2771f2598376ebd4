"""Regenerate every generated file (``make generate``), or fail when one is stale (``--check``).

Each artefact is a path and the function that renders its whole text from the code: the
reviewed catalogue, the signal model, the data catalogue. ``--check`` renders them all and
writes nothing; it exits 1 naming each file whose text differs, so ``make generate-check``,
the pre-commit hook and CI catch a stale file before a reviewer does. To add a generated file,
add one ``Artefact`` to ``ARTEFACTS`` (and say so in CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.gen_schema import (
    BATCH_SCHEMA,
    BATCH_SCHEMA_V1,
    CATALOGUE,
    NAMES_PY,
    ROOT,
    SIGNAL_SCHEMA,
    SIGNAL_SCHEMA_V1,
    render_batch_schema,
    render_names,
    render_signal_schema,
    render_v1_schemas,
)
from scripts.gen_wire import WIRE_PY, render_wire

DATA_CATALOGUE_MD = ROOT / "docs" / "data-catalogue.md"


@dataclass(frozen=True)
class Artefact:
    path: Path
    render: Callable[[], str]
    source: str  # what it is generated from, for the report


def _names() -> str:
    return render_names(json.loads(CATALOGUE.read_text(encoding="utf-8")))


def _data_catalogue() -> str:
    from lmcp.datacatalogue import generate, render_markdown

    return render_markdown(generate())


ARTEFACTS: tuple[Artefact, ...] = (
    Artefact(NAMES_PY, _names, "contract/catalogue/tools.json"),
    Artefact(SIGNAL_SCHEMA, render_signal_schema, "contract.schema.FrictionSignal"),
    Artefact(BATCH_SCHEMA, render_batch_schema, "contract.schema.SignalBatch"),
    Artefact(
        SIGNAL_SCHEMA_V1, lambda: render_v1_schemas()[SIGNAL_SCHEMA_V1], "the v1 signal model"
    ),
    Artefact(BATCH_SCHEMA_V1, lambda: render_v1_schemas()[BATCH_SCHEMA_V1], "the v1 batch model"),
    Artefact(WIRE_PY, render_wire, "contract.schema.AcceptedBatch (the fast decoder)"),
    Artefact(DATA_CATALOGUE_MD, _data_catalogue, "lmcp.datacatalogue (lmcp signals catalogue)"),
)


def stale(artefacts: Sequence[Artefact] = ARTEFACTS) -> list[Path]:
    """The artefacts whose file differs from what the code renders now."""
    out = []
    for artefact in artefacts:
        try:
            current = artefact.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != artefact.render():
            out.append(artefact.path)
    return out


def write_all(artefacts: Sequence[Artefact] = ARTEFACTS) -> list[Path]:
    """Write every artefact; returns the ones whose text changed."""
    changed = []
    for artefact in artefacts:
        text = artefact.render()
        path = artefact.path
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for path in old:
            sys.stderr.write(f"stale: {path.relative_to(ROOT)} (run `make generate`)\n")
        return 1 if old else 0
    changed = write_all()
    for artefact in ARTEFACTS:
        mark = "wrote" if artefact.path in changed else "unchanged"
        sys.stdout.write(f"{mark}: {artefact.path.relative_to(ROOT)}  <- {artefact.source}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
