"""``lmcp signals``: what users see of anonymous friction signals, and the switch."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from client.runtime import Runtime

app = typer.Typer(no_args_is_help=True)
console = Console()


def _runtime() -> Runtime:
    return Runtime.from_env()


@app.command()
def status() -> None:
    """Whether anonymous signals are on, why, and what is queued."""
    rt = _runtime()
    state = rt.consent.status()
    word = "[green]on[/green]" if state.enabled else "[red]off[/red]"
    console.print(f"anonymous signals: {word}  (decided by: {state.source.value})")
    console.print(f"queued in the outbox: {len(rt.outbox)}")
    console.print(f"collector: {rt.sender.endpoint}")
    console.print(f"state folder: {rt.home.root}")


@app.command()
def on() -> None:
    """Turn anonymous signals on (each report is still sent only when you accept it)."""
    rt = _runtime()
    rt.consent.set_enabled(True)
    _say_effective(rt, True)


@app.command()
def off() -> None:
    """Turn anonymous signals off: nothing is sent, and the outbox is emptied."""
    rt = _runtime()
    rt.consent.set_enabled(False)
    _say_effective(rt, False)


def _say_effective(rt: Runtime, wanted: bool) -> None:
    state = rt.consent.status()
    word = "on" if state.enabled else "off"
    console.print(f"anonymous signals are now {word}.")
    if state.enabled != wanted:
        console.print(f"[yellow]note:[/yellow] {state.source.value} overrides the setting.")


@app.command()
def preview() -> None:
    """Print the exact JSON that would be sent for the latest failure."""
    rt = _runtime()
    if not rt.consent.enabled():
        console.print("anonymous signals are off: nothing would be sent.")
        return
    signal = rt.reporter.preview()
    if signal is None:
        console.print("no failure recorded yet: nothing to send.")
        return
    console.print(
        "friction_type, error_category, intent_category and attempt_count come from the "
        "agent's report; signal_id is new for each signal.",
        style="dim",
    )
    console.print_json(signal.model_dump_json())


@app.command()
def log(
    limit: Annotated[int, typer.Option(min=1, max=200, help="How many entries.")] = 20,
    raw: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """What was sent from this machine (kept locally, bounded)."""
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
    console.print(table if entries else "nothing sent yet.")


@app.command()
def flush() -> None:
    """Deliver the signals waiting in the outbox."""
    rt = _runtime()
    result = rt.reporter.flush()
    console.print(
        f"delivered {result['delivered']}, refused {result['rejected']}, "
        f"still queued {result['pending']}"
    )
