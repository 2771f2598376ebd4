"""The published privacy parameters, computed by the code (`lmcp signals catalogue`, the API).

- the contribution bound: 8 signals per installation per UTC week and at most one per
  (tool, error class, friction type) (``contract.limits``, enforced by the client);
- the releases: rho (zCDP) over 90 days, per installation-week and per cube, for
  each cube its dimensions, what one installation-week can change (l0, linf, l1, l2), its
  Gaussian sigma and threshold (``collector.releases``, calibrated with OpenDP), and the long-run
  guarantee ``long_run`` (epsilon at delta over the window, ``contract.accountant``);
- the roles: who reads what (``collector.settings``).

Every figure is computed by the code that enforces it, never written here; a test compares the
printed figures with the code. Without the collector extra only the contribution bound is shown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "CubeParams",
    "LongRunJson",
    "PrivacyParameters",
    "Role",
    "privacy_json",
    "privacy_parameters",
]


@dataclass(frozen=True, slots=True)
class CubeParams:
    """One released cube at the given parameters: its rho per period (a daily cube: for its
    week's seven days together), what one installation-week can change, its Gaussian sigma."""

    cube: str
    dims: tuple[str, ...]
    period: str
    share: float
    rho_per_week: float
    delta: float
    l0: int
    linf: int
    l1: int
    l2: float
    scale: float
    threshold: int


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    setting: str
    reads: str


@dataclass(frozen=True, slots=True)
class LongRunJson:
    """The guarantee for one installation active every day over the retention window."""

    days: int
    epsilon: float
    delta: float


@dataclass(frozen=True, slots=True)
class PrivacyParameters:
    weekly_signal_limit: int
    per_key_weekly_limit: int
    rho: float | None = None
    rho_per_week: float | None = None
    long_run: LongRunJson | None = None
    cubes: tuple[CubeParams, ...] = ()
    roles: tuple[Role, ...] = ()
    omitted: str = ""


def privacy_parameters(plan: Any = None) -> PrivacyParameters:
    """The parameters of ``plan`` (a ``ReleasePlan``; default: the collector's default
    settings). The contribution bound is shown always, the releases with the collector extra."""
    from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT

    try:
        from collector.releases.cubes import CUBES
        from collector.releases.store import calibration, params_from_settings
        from collector.settings import CollectorSettings
    except ImportError:
        return PrivacyParameters(
            WEEKLY_SIGNAL_LIMIT,
            PER_KEY_WEEKLY_LIMIT,
            omitted="releases and roles (install the `collector` extra)",
        )
    if plan is None:
        plan = params_from_settings(CollectorSettings.model_construct())  # defaults, not env
    cubes = []
    for name, cube in CUBES.items():
        cal = calibration(name, plan)
        b = cal.bounds
        cubes.append(
            CubeParams(name, cube.dim_names, cube.kind.value, plan.split[name], cal.rho,
                       cal.delta, b.l0, b.linf, b.l1, b.l2, cal.scale, cal.threshold)
        )  # fmt: skip
    fields = CollectorSettings.model_fields
    roles = (
        Role("user", "LMCP_ANONYMOUS_SIGNALS; `lmcp signals on`, `off`, `local`",
             "what the client would send (`lmcp signals preview`, `log`); environment can only "
             "turn signals off"),
        Role("team", "read_tokens", f"releases only: {fields['read_tokens'].description}"),
        Role("steward", "steward_tokens", str(fields["steward_tokens"].description)),
    )  # fmt: skip
    lr = plan.long_run()
    return PrivacyParameters(
        plan.cap,
        plan.per_key,
        plan.rho,
        plan.rho_week,
        LongRunJson(lr.days, lr.epsilon, lr.delta),
        tuple(cubes),
        roles,
    )


def privacy_json(p: PrivacyParameters | Any) -> dict[str, Any]:
    """The parameters as JSON; ``privacy.long_run = {"days", "epsilon", "delta"}``. A
    ``ReleasePlan`` is accepted too (its parameters are computed first)."""
    if not isinstance(p, PrivacyParameters):
        p = privacy_parameters(p)
    return asdict(p)
