"""``lmcp signals``: what users see of anonymous friction signals, and the switch."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from client.consent import SignalsMode
from client.runtime import Runtime
from contract.days import utc_today
from contract.privacy import PER_KEY_DAILY_LIMIT

app = typer.Typer(no_args_is_help=True)
console = Console()


def _runtime() -> Runtime:
    return Runtime.from_env()


@app.command()
def status() -> None:
    """What a server started anywhere would do, why, and what is queued.

    The settings file holds your choice; any LMCP process (an MCP server started by an app, a
    shell) follows it. The environment can only turn signals off, never on.
    """
    rt = _runtime()
    state = rt.consent.status()
    why = state.setting_source.value
    console.print(f"your choice (settings file): [bold]{state.setting.value}[/bold]  ({why})")
    console.print(f"  {_MEANING[state.setting]}")
    restriction = rt.consent.restriction
    if restriction is None:
        console.print("this shell's environment: restricts nothing")
    else:
        console.print(f"this shell's environment: [red]off[/red] by {restriction.value}")
    console.print(
        "environment variables (DO_NOT_TRACK, LMCP_ANONYMOUS_SIGNALS) can only turn signals "
        "off: a server started elsewhere does at most what your choice says."
    )
    budget = rt.reporter.budget
    today = utc_today()
    console.print(
        f"daily bound: at most {PER_KEY_DAILY_LIMIT} signal per (tool, error class, friction "
        f"type) and {budget.limit} in all per UTC day; used today: {budget.used(today)}"
    )
    console.print(f"queued in the outbox: {len(rt.outbox)}")
    console.print(f"collector: {rt.sender.endpoint}")
    console.print(f"state folder: {rt.home.root}")


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
    rt = _runtime()
    rt.consent.set_mode(mode)
    console.print(f"anonymous signals are now {mode.value}: {_MEANING[mode]}")
    restriction = rt.consent.restriction
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
    rt = _runtime()
    result = rt.reporter.flush()
    console.print(
        f"delivered {result['delivered']}, refused {result['rejected']}, "
        f"still queued {result['pending']}"
    )
