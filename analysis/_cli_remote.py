"""What every command that reads a running collector shares: its ``--url`` and ``--token``
options and how it tells a person that the collector could not answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from client._console import make_console

if TYPE_CHECKING:
    from analysis._remote import RemoteError

__all__ = ["TokenOpt", "UrlOpt", "not_covered", "remote_failed"]

_err = make_console(stderr=True)

UrlOpt = Annotated[
    str | None, typer.Option("--url", help="A running collector, e.g. http://127.0.0.1:8765.")
]
TokenOpt = Annotated[
    str | None,
    typer.Option("--token", envvar="LMCP_TEAM_TOKEN", help="Team read token (for --url).",
                 show_default=False),
]  # fmt: skip

#: httpx's transport errors (``RemoteError.code`` when the status is 0), in a user's words.
_TRANSPORT_REASONS = {
    "ConnectError": "connection refused or host not found (is the collector running there?)",
    "ConnectTimeout": "no answer to the connection within the timeout",
    "ReadTimeout": "the collector did not answer within the timeout",
    "UnsupportedProtocol": "the URL must start with http:// or https://",
    "RemoteProtocolError": "what answered does not speak HTTP as a collector does",
    "InvalidURL": "the URL is not valid",
}
_STATUS_HINTS = {
    401: "the team token is missing or wrong (--token or LMCP_TEAM_TOKEN)",
    403: "the token has no read access to triage",
    404: "no triage here: is this the collector's base URL?",
}


def not_covered(what: object) -> NoReturn:
    """No release covers the asked days: say which days the releases do cover, then exit 1
    (as for a file: ``analysis._period.NotCovered``'s message, or the collector's)."""
    from rich.markup import escape

    _err.print(f"[red]error:[/red] {escape(str(what))}", soft_wrap=True)
    raise typer.Exit(1)


def remote_failed(url: str, exc: RemoteError) -> NoReturn:
    """Name the URL and the reason, then exit 1 (the token is never printed)."""
    from analysis._period import NOT_COVERED

    if exc.code == NOT_COVERED and exc.detail:
        not_covered(exc.detail)
    if exc.status == 0:
        reason = _TRANSPORT_REASONS.get(exc.code, exc.code)
        _err.print(
            f"[red]error:[/red] cannot reach the collector at {url}: {reason}", soft_wrap=True
        )
    else:
        from rich.markup import escape  # the collector's words, unless a token is wrong

        hint = _STATUS_HINTS.get(exc.status) or exc.detail or exc.code
        _err.print(
            f"[red]error:[/red] the collector at {url} answered HTTP {exc.status} ({exc.code}): "
            f"{escape(hint)}",
            soft_wrap=True,
        )
    raise typer.Exit(1)
