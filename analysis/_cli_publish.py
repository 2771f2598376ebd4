"""``lmcp analysis publish``: the released views as a static folder to host publicly.

From a file (``--db``: its stored releases, under the parameters of this machine's collector
settings, checked against the sigma stored with them) or a collector (``--url``: its answers and
its own parameters, from ``GET /v1/triage``). There is no ``--exact``: only releases are public.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from analysis._cli_remote import TokenOpt, UrlOpt, remote_failed
from client._console import make_console

if TYPE_CHECKING:
    from analysis._questions import Answer
    from analysis._rows import Row

__all__ = ["publish_command", "register"]

_console = make_console()
_NO_RELEASES = "--db: no releases in that file (`lmcp analysis release --db FILE` makes them)"


def register(app: typer.Typer) -> None:
    app.command("publish")(publish_command)


def publish_command(
    out: Annotated[Path, typer.Option("--out", help="The folder to write (created if missing).")],
    db: Annotated[
        Path | None, typer.Option("--db", help="A DuckDB file with releases.", dir_okay=False)
    ] = None,
    url: UrlOpt = None,
    token: TokenOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Write into a non-empty folder.")] = False,
    exact: Annotated[
        bool, typer.Option("--exact", hidden=True, help="Refused: only releases are published.")
    ] = False,
) -> None:
    """Write a static site of the released views (charts, tables with their ±, the privacy
    parameters), safe to host publicly: every figure is a differentially private release."""
    from analysis.publish import PublishError, build_site, write_site

    # The option exists only to say no: a public folder never holds an exact figure.
    if exact:
        raise typer.BadParameter("--exact: publish writes released figures only (there is none)")
    if (db is None) == (url is None):
        raise typer.BadParameter("give exactly one of --db and --url")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise typer.BadParameter(f"--out: {out} is not empty (use --force to write into it)")
    if db is not None:
        answers, privacy, through = _from_file(db)
    else:
        if not token:
            raise typer.BadParameter("--url needs a team token (--token or LMCP_TEAM_TOKEN)")
        answers, privacy, through = _from_collector(str(url), token)
    try:
        written = write_site(build_site(answers, privacy, through), out, force=force)
    except PublishError as exc:
        raise typer.BadParameter(str(exc)) from None
    _console.print(f"wrote {len(written)} files into [bold]{out}[/bold]", soft_wrap=True)


def _from_file(db: Path) -> tuple[list[Answer[Row]], dict[str, Any], str | None]:
    """The file's released answers, the parameters it was released under, its last day."""
    import duckdb

    from analysis._api import open_db
    from analysis.publish import PublishError, check_scales, released_through
    from analysis.report import answer_all
    from collector.releases.published import privacy_json
    from collector.settings import CollectorSettings

    try:
        # The plan ``lmcp analysis release`` and the collector release with (its settings).
        privacy = privacy_json(CollectorSettings().checked_release_plan())
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        con = open_db(db)
    except FileNotFoundError:
        raise typer.BadParameter("--db: nothing there") from None
    try:
        check_scales(con, privacy)
        through = released_through(con)
        if through is None:
            raise typer.BadParameter(_NO_RELEASES)
        answers = answer_all(con)
    except duckdb.CatalogException:
        raise typer.BadParameter(_NO_RELEASES) from None
    except PublishError as exc:
        raise typer.BadParameter(str(exc)) from None
    finally:
        con.close()
    return answers, privacy, through


def _from_collector(url: str, token: str) -> tuple[list[Answer[Row]], dict[str, Any], str | None]:
    """The collector's released answers and its own parameters (``GET /v1/triage``)."""
    import httpx

    from analysis._questions import DEFAULT_LIMIT, Question
    from analysis._remote import RemoteError, fetch_answer
    from service.problems import problem_of

    base = url.rstrip("/")
    try:
        with httpx.Client(timeout=30.0) as client:
            response = client.get(f"{base}/v1/triage", headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError as exc:
        remote_failed(url, RemoteError(0, type(exc).__name__))
    if response.status_code != 200:
        remote_failed(url, RemoteError(response.status_code, *problem_of(response.content)))
    doc = response.json()
    answers = []
    for entry in doc["questions"]:
        try:
            answers.append(fetch_answer(url, token, Question(entry["name"]), limit=DEFAULT_LIMIT))
        except RemoteError as exc:
            remote_failed(url, exc)
    return answers, dict(doc["privacy"]), doc.get("released_through")
