"""The published privacy parameters, read from the code: a section of ``lmcp signals catalogue``.

- the contribution bound: C signals per installation per UTC day and at most one per
  (tool, error class, friction type) (``contract.privacy``, enforced by the client);
- the releases: epsilon and delta per installation-day and how they are split across the
  cubes, and for each cube its dimensions, what one installation-day can change (l0, linf, l1),
  its Laplace scale and its threshold (``collector.releases``, calibrated with OpenDP);
- the roles: who reads what (``collector.settings``).

Every figure is computed by the code that enforces it, never written here; a test compares the
printed figures with the code. Without the collector extra only the contribution bound is shown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "CubeParams",
    "PrivacyParameters",
    "Role",
    "privacy_json",
    "privacy_markdown",
    "privacy_parameters",
    "print_privacy",
]


@dataclass(frozen=True, slots=True)
class CubeParams:
    """One released cube at the default parameters."""

    cube: str
    dims: tuple[str, ...]
    share: float
    epsilon: float
    delta: float
    l0: int
    linf: int
    l1: int
    scale: float
    threshold: int


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    setting: str
    reads: str


@dataclass(frozen=True, slots=True)
class PrivacyParameters:
    daily_signal_limit: int
    per_key_daily_limit: int
    epsilon_per_day: float | None = None
    delta_per_day: float | None = None
    cubes: tuple[CubeParams, ...] = ()
    roles: tuple[Role, ...] = ()
    omitted: str = ""


def privacy_parameters() -> PrivacyParameters:
    """The parameters at the collector's default settings (the contribution bound always)."""
    from contract.limits import DAILY_SIGNAL_LIMIT, PER_KEY_DAILY_LIMIT

    try:
        from collector.releases.cubes import CUBES
        from collector.releases.store import params_from_settings
        from collector.settings import CollectorSettings
    except ImportError:
        return PrivacyParameters(
            DAILY_SIGNAL_LIMIT,
            PER_KEY_DAILY_LIMIT,
            omitted="releases and roles (install the `collector` extra)",
        )
    params = params_from_settings(CollectorSettings.model_construct())  # defaults, not env
    cubes = []
    for name, cube in CUBES.items():
        cal = params.calibration(name)
        b = cal.bounds
        cubes.append(
            CubeParams(name, cube.dim_names, params.split[name], cal.epsilon, cal.delta,
                       b.l0, b.linf, b.l1, cal.scale, cal.threshold)
        )  # fmt: skip
    fields = CollectorSettings.model_fields
    roles = (
        Role("user", "LMCP_ANONYMOUS_SIGNALS; `lmcp signals on`, `off`, `local`",
             "what the client would send (`lmcp signals preview`, `log`); environment can only "
             "turn signals off"),
        Role("team", "read_tokens", f"releases only: {fields['read_tokens'].description}"),
        Role("steward", "steward_tokens", str(fields["steward_tokens"].description)),
    )  # fmt: skip
    return PrivacyParameters(
        DAILY_SIGNAL_LIMIT,
        PER_KEY_DAILY_LIMIT,
        params.epsilon_per_day,
        params.delta_per_day,
        tuple(cubes),
        roles,
    )


def privacy_json(p: PrivacyParameters) -> dict[str, Any]:
    return asdict(p)


def _g(x: float) -> str:
    return f"{x:.4g}"


def _cube_row(c: CubeParams) -> list[str]:
    return [f"`{c.cube}`", ", ".join(c.dims), _g(c.share), _g(c.epsilon), _g(c.delta),
            str(c.l0), str(c.linf), str(c.l1), _g(c.scale), str(c.threshold)]  # fmt: skip


_CUBE_HEAD = ["cube", "groups by", "share", "ε", "δ", "l0", "l∞", "l1", "Laplace scale",
              "threshold"]  # fmt: skip


def _bound_line(p: PrivacyParameters) -> str:
    return (
        f"Contribution bound (the client, before a signal is built): at most C = "
        f"{p.daily_signal_limit} signals per installation per UTC day, at most "
        f"{p.per_key_daily_limit} per (tool, error class, friction type)."
    )


def _budget_line(p: PrivacyParameters) -> str:
    epsilon = _g(p.epsilon_per_day or 0)
    return (
        f"Releases (per installation per UTC day, default settings): ε = {epsilon}"
        " (`release_epsilon_per_day`), δ = {_g(p.delta_per_day or 0)} (`release_delta_per_day`),"
        " split across the cubes (`release_split`); noise and thresholds by OpenDP."
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
