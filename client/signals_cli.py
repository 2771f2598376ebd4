"""``lmcp signals``: what users see of anonymous friction signals, and the switch.

Each command reads this process's settings once (``ClientSettings.from_process``) and passes
them down. ``status``, ``on``, ``off`` and ``local`` build only the parts they read (the state
folder, the consent gate, the outbox) and print plain text: they are what a user runs most, and
neither the whole runtime (every tool, the HTTP client), pydantic nor rich is needed to answer
them.
"""

from __future__ import annotations

import errno
import json
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer

from client.collector_url import URL_VARIABLE, url_problem
from client.consent import MODE_ORDER, ConsentGate, ConsentSource, SignalsMode
from client.paths import LmcpHome
from client.settings import ClientSettings

if TYPE_CHECKING:
    from rich.console import Console

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
_URL_VAR = URL_VARIABLE


@cache
def _console() -> Console:
    """The rich console of the commands that print tables or JSON (imported only for them)."""
    from client._console import make_console

    return make_console()


def _home(settings: ClientSettings) -> LmcpHome:
    """The state folder; a file in its place is a mistake to name before anything is read."""
    home = settings.home
    if home.root.exists() and not home.root.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(home.root))
    return home


def _runtime(settings: ClientSettings) -> Runtime:
    from client.runtime import Runtime

    _home(settings)
    return Runtime.from_settings(settings)


def _status(settings: ClientSettings) -> dict[str, Any]:
    """Everything ``status`` reports, as data (``--json`` prints exactly this)."""
    from client.contributions import ContributionBudget, week_of
    from client.outbox import Outbox
    from contract.days import utc_today

    home = _home(settings)
    consent = ConsentGate(home, settings.signals_restriction, account=settings.account_home)
    state = consent.status()
    restriction = consent.restriction
    budget = ContributionBudget(home)
    today = utc_today()
    latest = budget.latest()
    url = settings.collector_url
    account = consent.account_choice()
    return {
        "choice": state.setting.value,
        "choice_source": state.setting_source.value,
        "account_choice": None if account is None else account.mode.value,
        "account_folder": None if consent.account is None else str(consent.account.root),
        "environment_restriction": None if restriction is None else restriction.value,
        "effective_mode": state.mode.value,
        "today": today.isoformat(),
        "weekly_bound": {
            "per_key": budget.per_key,
            "limit": budget.limit,
            "week": week_of(today).isoformat(),
            "used_this_week": budget.used(today),
            "latest_claimed_day": None if latest is None else latest.isoformat(),
        },
        "queued": len(Outbox(home)),
        "collector_url": url,
        "collector_url_problem": url_problem(url),
        "state_folder": str(home.root),
    }


@app.command()
def status(
    raw: Annotated[
        bool, typer.Option("--json", help="Print the status as one JSON object.")
    ] = False,
) -> None:
    """What a server started anywhere would do, why, and what is queued.

    The settings file holds your choice; any LMCP process (an MCP server started by an app, a
    shell) follows it. The environment can only turn signals off, never on.
    """
    report = _status(ClientSettings.from_process())
    if raw:
        typer.echo(json.dumps(report, indent=2))
        return
    choice = SignalsMode(report["choice"])
    bound = report["weekly_bound"]
    bold = typer.style(choice.value, bold=True)
    typer.echo(f"your choice (settings file): {bold}  ({report['choice_source']})")
    typer.echo(f"  {_MEANING[choice]}")
    account = report["account_choice"]
    if account is not None:
        typer.echo(
            f"this account's choice ({report['account_folder']}): "
            f"{typer.style(account, bold=True)}  (a process follows the lower of the two)"
        )
        if MODE_ORDER[SignalsMode(account)] < MODE_ORDER[choice]:
            typer.echo(f"  so a server with this state folder is {account}.")
    restriction = report["environment_restriction"]
    if restriction is None:
        typer.echo("this shell's environment: restricts nothing")
    else:
        typer.echo(f"this shell's environment: {typer.style('off', fg='red')} by {restriction}")
    typer.echo(
        "environment variables (DO_NOT_TRACK, LMCP_ANONYMOUS_SIGNALS) can only turn signals "
        "off: a server started elsewhere does at most what your choice says."
    )
    typer.echo(
        f"weekly bound: at most {bound['per_key']} signal per (tool, error class, friction "
        f"type) and {bound['limit']} in all per UTC week (Monday to Sunday); used this week "
        f"(from {bound['week']}): {bound['used_this_week']} / {bound['limit']}"
    )
    latest = bound["latest_claimed_day"]
    if latest is not None and latest > report["today"]:
        typer.echo(
            f"{typer.style('note:', fg='yellow')} a signal was claimed for {latest}, later "
            "than today: this clock moved back, and no report is accepted before that day."
        )
    typer.echo(f"queued in the outbox: {report['queued']}")
    typer.echo(f"collector: {report['collector_url']}  ({_URL_VAR} sets it)")
    problem = report["collector_url_problem"]
    if problem is not None:
        typer.echo(
            f"{typer.style('warning:', fg='yellow')} {_URL_VAR} is not a usable collector URL: "
            f"{problem}; signals stay queued until it is fixed."
        )
    typer.echo(f"state folder: {report['state_folder']}  (LMCP_HOME sets it)")


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

    settings = ClientSettings.from_process()
    home = _home(settings)
    consent = ConsentGate(home, settings.signals_restriction, account=settings.account_home)
    queued = len(Outbox(home))
    consent.set_mode(mode)
    typer.echo(f"anonymous signals are now {mode.value}: {_MEANING[mode]}")
    if mode is SignalsMode.on:
        typer.echo(
            "what is sent: when a tool fails and the agent reports it, one signal made only of "
            "enums, buckets, a day and catalogue names (no argument value, no path, no text). "
            "See the fields: `lmcp signals catalogue`; the signal your latest failure would send: "
            "`lmcp signals preview`; what was sent: `lmcp signals log`."
        )
    elif queued:
        typer.echo(f"{queued} queued signal(s) were discarded: they will never be sent.")
    else:
        typer.echo("no signal was queued: nothing was discarded.")
    restriction = consent.restriction
    if restriction is not None and mode is not SignalsMode.off:
        note = typer.style("note:", fg="yellow")
        typer.echo(f"{note} {restriction.value} in this shell keeps them off here.")
    held = consent.status()
    if held.source is ConsentSource.account and consent.account is not None:
        note = typer.style("note:", fg="yellow")
        typer.echo(
            f"{note} this account's choice keeps this folder {held.mode.value}: it is recorded "
            f"in {consent.account.root}; run `lmcp signals {mode.value}` without LMCP_HOME to "
            "change it there."
        )


#: What ``preview`` shows in place of the random id each signal gets (a valid, fixed UUID4).
EXAMPLE_SIGNAL_ID = "00000000-0000-4000-8000-000000000000"
#: The fields the agent's report sets: ``preview`` shows examples of them, not what is sent.
REPORTED_FIELDS = ("friction_type", "error_category", "intent_category", "attempts")
#: The fields that say what the signal is, not what happened: the same in every signal.
ENVELOPE_FIELDS = ("schema_version", "signal_id", "day", "client")


@app.command()
def preview() -> None:
    """Show the signal your latest failure would send: what is fixed, and what is an example.

    The same failure shows the same output on every call: the fields the agent's report sets
    are shown as examples, and the random signal_id as a fixed example id.
    """
    with _runtime(ClientSettings.from_process()) as rt:
        if rt.consent.mode() is SignalsMode.off:
            typer.echo("anonymous signals are off: nothing would be sent.")
            return
        signal = rt.reporter.preview()
    if signal is None:
        typer.echo("no failure recorded yet: nothing to send.")
        return
    doc = json.loads(signal.model_dump_json())
    doc["signal_id"] = EXAMPLE_SIGNAL_ID
    failure = [name for name in doc if name not in REPORTED_FIELDS + ENVELOPE_FIELDS]
    examples = ", ".join(f"{name} (example: {json.dumps(doc[name])})" for name in REPORTED_FIELDS)
    for line in (
        "If the agent reports this failure, this signal is sent (one JSON document):",
        f"  as shown, from the failure: {', '.join(failure)}",
        f"  as shown: schema_version, client, day (the UTC day it is built: {doc['day']})",
        f"  set by the agent's report, shown as examples: {examples}",
        f"  signal_id: a new random id for each signal; shown: the example {EXAMPLE_SIGNAL_ID}",
    ):
        typer.echo(line)
    _console().print_json(json.dumps(doc))


@app.command()
def log(
    limit: Annotated[int, typer.Option(min=1, max=200, help="How many entries.")] = 20,
    raw: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """What was sent from this machine, or kept in local-only mode (kept locally, bounded)."""
    rt = _runtime(ClientSettings.from_process())
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
    _console().print(table if entries else "nothing sent or kept yet.")


@app.command()
def flush() -> None:
    """Deliver the signals waiting in the outbox."""
    settings = ClientSettings.from_process()
    url = settings.collector_url
    problem = url_problem(url)
    if problem is not None:
        typer.echo(f"error: {_URL_VAR}={url} is not a usable collector URL: {problem}", err=True)
        raise typer.Exit(1)
    rt = _runtime(settings)
    try:
        if not rt.consent.enabled():
            typer.echo("anonymous signals are not on: nothing is sent (`lmcp signals status`).")
            return
        result = rt.reporter.flush()
    finally:
        rt.close()
    expired = result.get("expired", 0)
    late = f", dropped {expired} too late for their week's release" if expired else ""
    typer.echo(
        f"delivered {result['delivered']}, refused {result['rejected']}{late}, "
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
