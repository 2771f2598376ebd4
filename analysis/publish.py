"""The public friction data: a static folder of the released views, safe to host anywhere.

``build_site`` turns released answers and the privacy parameters they were released under into
``index.html`` (the triage report of ``analysis.report`` plus a privacy section), one JSON and
one CSV file per question under ``data/``, ``privacy.json`` and ``index.json``. Every figure is
post-processing of differentially private releases (``Answer.source == "released"``), so the
folder reveals about one installation no more than the releases already bound (the stated
epsilon at delta over the window); an exact answer is refused, never written. The page loads
nothing: no script, font or URL, and a CSP that forbids any fetch.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from analysis._cells import last_released_day
from analysis._csv import write_csv
from analysis._questions import QUESTIONS, Answer
from analysis._rows import Row
from analysis.report import build_report
from collector.releases.store import last_released, released_scales
from contract.days import utc_today

__all__ = [
    "PublishError",
    "Site",
    "build_site",
    "check_scales",
    "csv_text",
    "fmt",
    "privacy_html",
    "released_through",
    "write_site",
]

_TITLE = "LMCP friction: public data"


class PublishError(ValueError):
    """What cannot be published (an exact answer, parameters without a stated epsilon)."""


@dataclass(frozen=True, slots=True)
class Site:
    """The folder's files: relative path -> text."""

    files: dict[str, str]


def fmt(x: float) -> str:
    """A parameter as the page shows it (four significant digits, as the data catalogue)."""
    return f"{x:.4g}"


def csv_text(answer: Answer[Row]) -> str:
    """An answer's rows as CSV, as ``lmcp analysis QUESTION --format csv`` prints them (every
    field, the margins ``moe`` and ``share_moe`` included)."""
    out = io.StringIO()
    write_csv(answer, out)
    return out.getvalue()


def released_through(con: duckdb.DuckDBPyConnection) -> str | None:
    """The last day of the newest released period, as ``GET /v1/triage`` says it."""
    day = last_released_day(con)
    return None if day is None else day.isoformat()


def check_scales(con: duckdb.DuckDBPyConnection, privacy: Mapping[str, Any]) -> None:
    """Refuse parameters the file was not released under: each cube's newest stored sigma must be
    the one ``privacy`` states, or the stated epsilon would not be the releases' own."""
    for cube in privacy.get("cubes", ()):
        name = str(cube["cube"])
        newest = last_released(con, name)
        if newest is None:
            continue
        stored = released_scales(con, name, newest, newest).get(newest)
        if stored is not None and not math.isclose(stored, float(cube["scale"]), rel_tol=1e-9):
            raise PublishError(
                f"the file's {name} releases have sigma {fmt(stored)}, not the {fmt(cube['scale'])}"
                " of these settings: publish from its collector (--url) or with its settings"
            )


def _row(cells: Sequence[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"


def privacy_html(privacy: Mapping[str, Any]) -> str:
    """The page's "Privacy" section: the long-run guarantee, rho, each cube's sigma, the bound on
    one installation and why the folder may be published. Needs a stated ``long_run``."""
    lr = privacy.get("long_run")
    if not lr:
        raise PublishError("no long-run guarantee in the privacy parameters: nothing to state")
    days = int(lr["days"])
    eps, delta = fmt(lr["epsilon"]), fmt(lr["delta"])
    cap, per_key = privacy["weekly_signal_limit"], privacy["per_key_weekly_limit"]
    head = _row(
        ["cube", "groups by", "period", "ρ per week", "Gaussian σ (per cell)", "threshold"], "th"
    )
    body = "".join(
        _row([str(c["cube"]), ", ".join(c["dims"]), str(c["period"]), fmt(c["rho_per_week"]),
              fmt(c["scale"]), str(c["threshold"]) if c["threshold"] else "none (known domain)"])
        for c in privacy.get("cubes", ())
    )  # fmt: skip
    return (
        '<section id="privacy"><h2>Privacy</h2>'
        f'<p class="guarantee">Over <span id="days">{days}</span> days, an installation active '
        f'every day is protected at ε = <strong id="epsilon">{eps}</strong>, '
        f'δ = <strong id="delta">{delta}</strong> (differential privacy).</p>'
        f'<p>The releases spend ρ = <span id="rho">{fmt(privacy["rho"])}</span> (zero-concentrated'
        f" differential privacy) over those {days} days, ρ = {fmt(privacy['rho_per_week'])} per "
        "installation-week, split across the cubes below. Every released cell has Gaussian noise "
        "of the σ shown, drawn once when its period closed; a figure's ± is the 95 % margin of "
        "that noise.</p>"
        f'<p id="bound">One installation contributes at most <strong>{cap}</strong> signals a '
        f"week (UTC), at most {per_key} per (tool, error class, friction type): the client "
        "enforces the bound before a signal is built, and the noise is calibrated to it.</p>"
        f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"
        '<p id="why">Why this is safe to publish: every figure here and in <code>data/</code> is '
        "computed only from those differentially private releases (sums, shares, rankings of "
        "released cells). Post-processing cannot weaken differential privacy, so hosting this "
        "folder publicly reveals about any one installation no more than the releases already "
        f"bound, at ε = {eps}, δ = {delta}. No raw signal, exact count or identifier is in "
        "it.</p></section>"
    )


def _data_html(answers: Sequence[Answer[Row]]) -> str:
    items = "".join(
        f"<li>{html.escape(QUESTIONS[a.question].title)}: "
        f'<a href="data/{a.question.value}.json">{a.question.value}.json</a> · '
        f'<a href="data/{a.question.value}.csv">{a.question.value}.csv</a></li>'
        for a in answers
    )
    return (
        '<section id="data"><h2>Data</h2><p class="summary">The released figures of each view, '
        "with their 95 % margins (<code>moe</code>), and the privacy parameters "
        f'(<a href="privacy.json">privacy.json</a>).</p><ul>{items}</ul></section>'
    )


def build_site(
    answers: Sequence[Answer[Row]],
    privacy: Mapping[str, Any],
    through: str | None,
    *,
    generated: dt.date | None = None,
) -> Site:
    """The folder for released ``answers`` under ``privacy`` (``privacy_json``'s shape). Refuses
    any answer that is not a release: the folder is public."""
    if not answers:
        raise PublishError("nothing to publish: no released question")
    exact = [a.question.value for a in answers if a.source != "released"]
    if exact:
        raise PublishError(f"only released figures are published, not: {', '.join(exact)}")
    generated = generated or utc_today()
    page = build_report(answers, title=_TITLE, generated=generated).html
    period = answers[0].period
    stamp = (
        f'<p id="released">Period {period.start.isoformat()} to {period.end.isoformat()}; '
        f"released through {html.escape(through or 'no release yet')}.</p>"
    )
    nav = '<a href="#privacy">Privacy</a><a href="#data">Data</a>'
    # The report's own landmarks: each appears once in its page (one header, nav and main).
    for marker, extra in (
        ("</header>", stamp),
        ("</nav>", nav),
        ("</main>", privacy_html(privacy) + _data_html(answers)),
    ):
        if page.count(marker) != 1:
            raise AssertionError(f"the report's page has no single {marker}")
        page = page.replace(marker, extra + marker)
    files = {"index.html": page}
    for a in answers:
        files[f"data/{a.question.value}.json"] = json.dumps(a.to_json(), indent=2) + "\n"
        files[f"data/{a.question.value}.csv"] = csv_text(a)
    files["privacy.json"] = json.dumps(privacy, indent=2) + "\n"
    index = {
        "title": _TITLE,
        "generated": generated.isoformat(),
        "period": {"start": period.start.isoformat(), "end": period.end.isoformat()},
        "released_through": through,
        "questions": [
            {"name": a.question.value, "title": QUESTIONS[a.question].title,
             "json": f"data/{a.question.value}.json", "csv": f"data/{a.question.value}.csv"}
            for a in answers
        ],
    }  # fmt: skip
    files["index.json"] = json.dumps(index, indent=2) + "\n"
    return Site(files)


def write_site(site: Site, out: Path, *, force: bool = False) -> list[Path]:
    """Write the folder; an existing non-empty ``out`` only with ``force`` (its files named by
    the site are replaced, nothing else is deleted)."""
    if out.exists() and not out.is_dir():
        raise PublishError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise PublishError(f"{out} is not empty (use --force to write into it)")
    written = []
    for rel, text in site.files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
