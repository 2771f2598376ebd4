"""The published privacy parameters as text: a section of ``lmcp signals catalogue``.

The figures come from ``collector.releases.published`` (computed by the code that enforces
them); this module only writes them as Markdown and to the terminal.
"""

from __future__ import annotations

from collector.releases.published import CubeParams, PrivacyParameters

__all__ = ["privacy_markdown", "print_privacy"]


def _g(x: float) -> str:
    return f"{x:.4g}"


def _cube_row(c: CubeParams) -> list[str]:
    return [f"`{c.cube}`", ", ".join(c.dims), c.period, _g(c.share), _g(c.rho_per_week),
            _g(c.delta), str(c.l0), str(c.linf), str(c.l1), _g(c.l2), _g(c.scale),
            str(c.threshold) if c.threshold else "none (known domain)"]  # fmt: skip


_CUBE_HEAD = ["cube", "groups by", "period", "share", "ρ per week", "δ", "l0", "l∞", "l1", "l2",
              "Gaussian σ", "threshold"]  # fmt: skip


def _bound_line(p: PrivacyParameters) -> str:
    return (
        f"Contribution bound (the client, before a signal is built): at most "
        f"{p.weekly_signal_limit} signals per installation per UTC week, at most "
        f"{p.per_key_weekly_limit} per (tool, error class, friction type)."
    )


def _budget_line(p: PrivacyParameters) -> str:
    lr = p.long_run
    guarantee = "" if lr is None else (
        f" Over {lr.days} days, an installation active every day is protected at "
        f"ε = {_g(lr.epsilon)}, δ = {_g(lr.delta)}."
    )  # fmt: skip
    return (
        f"Releases (default settings): ρ = {_g(p.rho or 0)} over {lr.days if lr else 90} days "
        f"(`release_rho`, zCDP), ρ = {_g(p.rho_per_week or 0)} per installation-week, split "
        f"across the cubes (`release_split`); Gaussian noise and thresholds by OpenDP.{guarantee}"
    )


def privacy_markdown(p: PrivacyParameters) -> list[str]:
    """The section's Markdown lines (``docs/data-catalogue.md``)."""
    lines = ["## Privacy parameters", "", _bound_line(p), ""]
    if p.omitted:
        return [*lines, f"> Omitted here: {p.omitted}.", ""]
    lines += [_budget_line(p), "", "| " + " | ".join(_CUBE_HEAD) + " |",
              "|" + "---|" * len(_CUBE_HEAD)]  # fmt: skip
    lines += ["| " + " | ".join(_cube_row(c)) + " |" for c in p.cubes]
    lines += ["", "| role | setting | reads |", "|---|---|---|"]
    lines += [f"| {r.name} | {r.setting} | {r.reads} |" for r in p.roles]
    return [*lines, ""]


def print_privacy(p: PrivacyParameters) -> None:
    """The section as rich tables (``lmcp signals catalogue``)."""
    from rich.markup import escape
    from rich.table import Table

    from client._console import make_console

    console = make_console()
    console.print(_bound_line(p))
    if p.omitted:
        console.print(f"omitted: {p.omitted}")
        return
    console.print(_budget_line(p))
    cubes = Table(*_CUBE_HEAD, title="Privacy parameters: released cubes")
    for c in p.cubes:
        cubes.add_row(*(escape(cell.strip("`")) for cell in _cube_row(c)))
    console.print(cubes)
    roles = Table("role", "setting", "reads", title="Roles")
    for r in p.roles:
        roles.add_row(escape(r.name), escape(r.setting), escape(r.reads))
    console.print(roles)
