"""``lmcp signals``: what users see of anonymous friction signals, and the switch.

``status``, ``on``, ``off`` and ``local`` build only the parts they read (the state folder, the
consent gate, the outbox): they are what a user runs most, and the whole runtime (every tool,
the HTTP client) is not needed to answer them.
"""

from __future__ import annotations

import errno
import json
import os
from typing import TYPE_CHECKING, Annotated

import typer

from client._console import make_console
from client.collector_url import URL_VARIABLE, collector_url, url_problem
from client.consent import ConsentGate, SignalsMode
from client.paths import LmcpHome

if TYPE_CHECKING:
    from client.runtime import Runtime

HELP = (
    "Anonymous friction signals: what is sent, the switch (on, local, off), what was sent.\n\n"
    "Your choice is kept in LMCP_HOME/settings.json (LMCP_HOME: the state folder; default: "
    "the user data folder).\n\n"
    "The environment can only turn signals OFF, never on: DO_NOT_TRACK=1 or "
    "LMCP_ANONYMOUS_SIGNALS=0 keep them off in that shell.\n\n"
    "LMCP_COLLECTOR_URL names the collector (its base URL, e.g. http://127.0.0.1:8765)."
)

app = typer.Typer(no_args_is_help=True, help=HELP, add_completion=False)
console = make_console()
_URL_VAR = URL_VARIABLE


def _home() -> LmcpHome:
    """The state folder; a file in its place is a mistake to name before anything is read."""
    home = LmcpHome.from_env(os.environ)
    if home.root.exists() and not home.root.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(home.root))
    return home


def _runtime() -> Runtime:
    from client.runtime import Runtime

    _home()
    return Runtime.from_env()


def _collector_url() -> str:
    return collector_url(os.environ)


@app.command()
def status() -> None:
    """What a server started anywhere would do, why, and what is queued.

    The settings file holds your choice; any LMCP process (an MCP server started by an app, a
    shell) follows it. The environment can only turn signals off, never on.
    """
    from client.contributions import ContributionBudget
    from client.outbox import Outbox
    from contract.days import utc_today
    from contract.privacy import PER_KEY_DAILY_LIMIT

    home = _home()
    consent = ConsentGate(home, os.environ)
    state = consent.status()
    why = state.setting_source.value
    console.print(f"your choice (settings file): [bold]{state.setting.value}[/bold]  ({why})")
    console.print(f"  {_MEANING[state.setting]}")
    restriction = consent.restriction
    if restriction is None:
        console.print("this shell's environment: restricts nothing")
    else:
        console.print(f"this shell's environment: [red]off[/red] by {restriction.value}")
    console.print(
        "environment variables (DO_NOT_TRACK, LMCP_ANONYMOUS_SIGNALS) can only turn signals "
        "off: a server started elsewhere does at most what your choice says."
    )
    budget = ContributionBudget(home)
    today = utc_today()
    console.print(
        f"daily bound: at most {PER_KEY_DAILY_LIMIT} signal per (tool, error class, friction "
        f"type) and {budget.limit} in all per UTC day; used today: {budget.used(today)}"
    )
    console.print(f"queued in the outbox: {len(Outbox(home))}")
    url = _collector_url()
    console.print(f"collector: {url}  ({_URL_VAR} sets it)")
    problem = url_problem(url)
    if problem is not None:
        console.print(
            f"[yellow]warning:[/yellow] {_URL_VAR} is not a usable collector URL: {problem}; "
            "signals stay queued until it is fixed."
        )
    console.print(f"state folder: {home.root}  (LMCP_HOME sets it)")


_MEANING = {
    SignalsMode.off: "nothing is built, kept or sent.",
    SignalsMode.local: "signals are kept on this machine (preview, log); nothing is uploaded.",
    SignalsMode.on: "signals are uploaded to the collector.",
}


@app.command()
def on() -> None:
    """Turn anonymous signals on: reports are uploaded (each one only when you accept it)."""
    _set(SignalsMode.on)


@app.command()
def off() -> None:
    """Turn anonymous signals off: nothing is built or sent; queued and local signals go."""
    _set(SignalsMode.off)


@app.command()
def local() -> None:
    """Keep signals on this machine only: see them with preview and log; nothing is uploaded."""
    _set(SignalsMode.local)


def _set(mode: SignalsMode) -> None:
    from client.outbox import Outbox

    home = _home()
    consent = ConsentGate(home, os.environ)
    queued = len(Outbox(home))
    consent.set_mode(mode)
    console.print(f"anonymous signals are now {mode.value}: {_MEANING[mode]}")
    if mode is SignalsMode.on:
        console.print(
            "what is sent: when a tool fails and the agent reports it, one signal made only of "
            "enums, buckets, a day and catalogue names (no argument value, no path, no text). "
            "See the fields: `lmcp signals catalogue`; the exact JSON for your latest failure: "
            "`lmcp signals preview`; what was sent: `lmcp signals log`."
        )
    elif queued:
        console.print(f"{queued} queued signal(s) were discarded: they will never be sent.")
    else:
        console.print("no signal was queued: nothing was discarded.")
    restriction = consent.restriction
    if restriction is not None and mode is not SignalsMode.off:
        console.print(
            f"[yellow]note:[/yellow] {restriction.value} in this shell keeps them off here."
        )


@app.command()
def preview() -> None:
    """Print the exact JSON that would be sent for the latest failure."""
    rt = _runtime()
    if rt.consent.mode() is SignalsMode.off:
        console.print("anonymous signals are off: nothing would be sent.")
        return
    signal = rt.reporter.preview()
    if signal is None:
        console.print("no failure recorded yet: nothing to send.")
        return
    console.print(
        "friction_type, error_category, intent_category and attempts (a bucket of its count) "
        "come from the agent's report; signal_id is new for each signal.",
        style="dim",
    )
    console.print_json(signal.model_dump_json())


@app.command()
def log(
    limit: Annotated[int, typer.Option(min=1, max=200, help="How many entries.")] = 20,
    raw: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """What was sent from this machine, or kept in local-only mode (kept locally, bounded)."""
    rt = _runtime()
    entries = rt.sent_log.entries(limit)
    if raw:
        for entry in entries:
            typer.echo(json.dumps({"status": entry.status, "signal": entry.signal}))
        return
    from rich.table import Table

    table = Table("day", "status", "tool", "friction", "error class", "args", "ring")
    for entry in entries:
        s = entry.signal
        table.add_row(
            str(s["day"]),
            entry.status,
            str(s["tool_attempted"]),
            str(s["friction_type"]),
            str(s["error_class"]),
            str(len(s["args"])),
            str(len(s["ring"])),
        )
    console.print(table if entries else "nothing sent or kept yet.")


@app.command()
def flush() -> None:
    """Deliver the signals waiting in the outbox."""
    url = _collector_url()
    problem = url_problem(url)
    if problem is not None:
        typer.echo(f"error: {_URL_VAR}={url} is not a usable collector URL: {problem}", err=True)
        raise typer.Exit(1)
    rt = _runtime()
    try:
        if not rt.consent.enabled():
            console.print("anonymous signals are not on: nothing is sent (`lmcp signals status`).")
            return
        result = rt.reporter.flush()
    finally:
        rt.close()
    console.print(
        f"delivered {result['delivered']}, refused {result['rejected']}, "
        f"still queued {result['pending']}"
    )
    if result["pending"]:
        typer.echo(
            f"error: the collector at {url} could not be reached: {_reason(url)}; "
            "the signals stay queued (run `lmcp signals flush` again later)",
            err=True,
        )
        raise typer.Exit(1)


def _reason(url: str) -> str:
    """Why the collector at ``url`` does not take signals now, in a few words."""
    import httpx

    try:
        response = httpx.get(url.rstrip("/") + "/healthz", timeout=2.0, trust_env=False)
    except httpx.ConnectError as exc:
        text = str(exc).lower()
        if "name or service" in text or "nodename" in text or "resolv" in text:
            return "its host name does not resolve"
        return "connection refused (is the collector running?)"
    except httpx.TimeoutException:
        return "no answer within 2 s"
    except httpx.HTTPError as exc:
        return type(exc).__name__
    if response.status_code != 200:
        return f"it answers HTTP {response.status_code}"
    return "it answered too slowly or refused to queue them (HTTP 5xx, 408 or 429)"
