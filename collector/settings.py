"""The collector's settings: values, passed in (``create_app(settings)``), never read at import.

Every field is documented in ``docs/configuration.md`` (a test checks). Environment variables
carry the prefix ``LMCP_COLLECTOR_``; list-valued settings take JSON
(``LMCP_COLLECTOR_READ_TOKENS='["token-a", "token-b"]'``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from contract.accountant import DEFAULT_DELTA, DEFAULT_RHO, DEFAULT_SPLIT, ReleasePlan
from contract.limits import WEEKLY_SIGNAL_LIMIT

__all__ = ["CollectorSettings", "MIB", "StewardToken", "default_db_path"]

MIB = 1024 * 1024


def default_db_path() -> Path:
    """A DuckDB file in the platform's per-user data directory."""
    return platformdirs.user_data_path("lmcp-collector", appauthor=False) / "signals.duckdb"


class StewardToken(BaseModel):
    """A steward's bearer token and the label the audit log records for it (never the token)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,39}$")
    token: SecretStr = Field(min_length=16)


class CollectorSettings(BaseSettings):
    """Everything the collector can be told. Secrets are ``SecretStr``: never printed."""

    model_config = SettingsConfigDict(
        env_prefix="LMCP_COLLECTOR_", extra="forbid", frozen=True, validate_default=True
    )

    # -- where and how it serves
    db_path: Path = Field(
        default_factory=default_db_path,
        description="The DuckDB file the collector owns (created with its folder if missing).",
    )
    host: str = Field(default="127.0.0.1", description="Address `lmcp collector serve` binds.")
    port: int = Field(default=8765, ge=1, le=65535, description="Port `serve` binds.")

    # -- who may read
    read_tokens: list[SecretStr] = Field(
        default_factory=list,
        description="Bearer tokens of the team's read API (several allowed). Empty: reads closed.",
    )

    # -- the steward role and the releases (docs/privacy.md)
    steward_tokens: list[StewardToken] = Field(
        default_factory=list,
        description="Steward bearer tokens with their audit labels: raw rows and exact counts, "
        "every read audited. Empty (the default): every steward route refuses.",
    )
    release_rho: float = Field(
        default=DEFAULT_RHO,
        gt=0.0,
        le=100.0,
        description="zCDP budget per installation over the retention window (90 days by "
        "default), split across the released cubes and their weekly periods.",
    )
    release_delta: float = Field(
        default=DEFAULT_DELTA,
        gt=0.0,
        lt=1e-3,
        description="The delta of the long-run guarantee (epsilon is derived at it).",
    )
    release_contribution_cap: int = Field(
        default=WEEKLY_SIGNAL_LIMIT,
        ge=WEEKLY_SIGNAL_LIMIT,
        le=100,
        description="Most signals one installation sends per UTC week (C, at least the "
        "client's bound): the releases' sensitivity.",
    )
    release_split: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SPLIT),
        description="Share of rho each released cube spends (sums to 1).",
    )
    release_backfill_days: int = Field(
        default=90,
        ge=0,
        description="How far back the release job goes (within the retention window): closed "
        "periods starting at most this many days ago are released, empty ones too.",
    )
    release_epsilon_ceiling: float = Field(
        default=8.5,
        gt=0.0,
        description="The collector refuses to start when the long-run epsilon is above this.",
    )
    release_delta_ceiling: float = Field(
        default=1e-7,
        gt=0.0,
        description="The collector refuses to start when the long-run delta is above this.",
    )

    # -- ingestion limits
    max_body_bytes: int = Field(
        default=1 * MIB, ge=1024, description="Largest request body on the wire (413 above)."
    )
    max_decompressed_bytes: int = Field(
        default=4 * MIB,
        ge=1024,
        description="Largest body after gzip decoding (413 above; a gzip bomb stops here).",
    )

    # -- connection limits (each connection; see docs/operations.md)
    max_header_bytes: int = Field(
        default=32 * 1024,
        ge=1024,
        description="Largest request head (request line and headers); 431 above.",
    )
    header_timeout_s: float = Field(
        default=10.0, gt=0.0, description="Most a client may take to send a request's head."
    )
    body_timeout_s: float = Field(
        default=30.0, gt=0.0, description="Most a client may take to send a request's body."
    )
    keep_alive_timeout_s: float = Field(
        default=5.0, gt=0.0, description="An idle connection between requests closes after this."
    )
    max_connections: int = Field(
        default=4096,
        ge=1,
        description="Most open connections per process (never more than its descriptor limit "
        "allows).",
    )
    max_connections_per_address: int = Field(
        default=256, ge=1, description="Most open connections from one client address."
    )
    response_timeout_s: float = Field(
        default=60.0,
        gt=0.0,
        description="Most an answer may take to leave the process once its request is in.",
    )
    write_timeout_s: float = Field(
        default=10.0,
        gt=0.0,
        description="A connection whose client takes none of its answer for this long closes.",
    )
    max_buffered_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=1024 * 1024,
        description="Most answer bytes all connections together hold unsent in the process.",
    )

    # -- the group-commit writer
    writer_max_rows: int = Field(
        default=10_000, ge=500, description="Most rows written by one flush (one INSERT)."
    )
    writer_linger_ms: float = Field(
        default=5.0,
        ge=0.0,
        le=1000.0,
        description="Most a flush waits for more requests to join it (0: flush at once).",
    )
    writer_quiet_ms: float = Field(
        default=1.0,
        ge=0.0,
        le=1000.0,
        description="A flush starts once no request has joined for this long (or at linger, "
        "or once as many requests wait as were in flight at once lately).",
    )

    duckdb_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="DuckDB worker threads of the collector's connection (1: a flush stays on "
        "one core, beside the event loop's).",
    )

    backup_dir: Path | None = Field(
        default=None,
        description="Folder where `POST /v1/admin/backup` writes consistent copies of the "
        "database while it runs; unset: that route answers 404 `backup_off`.",
    )

    # -- retention
    retention_days: int = Field(
        default=90, ge=1, description="Signals older than this many days are deleted."
    )
    retention_interval_s: float = Field(
        default=3600.0,
        gt=0.0,
        description="How often the retention job runs (the first run: 5 s after start).",
    )
    alert_webhook_url: AnyHttpUrl | None = Field(
        default=None,
        repr=False,  # a webhook URL is a secret (it posts into a channel): never in a log
        description="Where the release job POSTs the alerts of each newly released week "
        "(docs/alerts.md; a Slack incoming webhook takes it). Unset: no alerts are sent.",
    )

    # -- the lake mode (docs/lake-design.md): db_path is the spool, shipped to a Delta table
    lake_uri: str | None = Field(
        default=None,
        description="A Delta table the collector ships its file (db_path, then its spool) to: "
        "a folder or s3://bucket/prefix. Unset: the single DuckDB file.",
    )
    lake_ship_interval_s: float = Field(
        default=60.0,
        gt=0.0,
        description="Lake mode: how often the spool is shipped to the lake, in one commit.",
    )
    lake_ship_rows: int = Field(
        default=250_000,
        ge=1,
        description="Lake mode: ship early once this many rows wait in the spool.",
    )
    lake_s3_endpoint: str | None = Field(
        default=None, description="S3 endpoint URL (unset: AWS's)."
    )
    lake_s3_key_id: str | None = Field(default=None, description="S3 access key id.")
    lake_s3_secret: SecretStr | None = Field(default=None, description="S3 secret access key.")
    lake_s3_region: str = Field(default="us-east-1", description="S3 region.")
    lake_s3_allow_http: bool = Field(
        default=False, description="Allow a plain-HTTP endpoint (loopback test stores only)."
    )

    # -- rate limiting (per client address, in memory only)
    rate_limit_enabled: bool = Field(default=True, description="Token-bucket rate limiting on.")
    rate_limit_per_s: float = Field(
        default=20.0, gt=0.0, description="Requests per second refilled into each address' bucket."
    )
    rate_limit_burst: int = Field(
        default=60, ge=1, description="Bucket size: requests an address may send at once."
    )
    rate_limit_max_clients: int = Field(
        default=100_000,
        ge=1,
        description="Most addresses tracked at once (least recently seen are forgotten first).",
    )

    # -- OpenTelemetry (the collector's own health; never a signal's contents)
    otel_exporter: Literal["none", "console", "otlp"] = Field(
        default="none", description="Where spans and metrics go: nowhere, stdout, or OTLP/HTTP."
    )
    otel_endpoint: str | None = Field(
        default=None,
        description="OTLP/HTTP base URL (e.g. http://127.0.0.1:4318); unset: the SDK default.",
    )
    otel_metric_interval_s: float = Field(
        default=60.0, gt=0.0, description="How often metrics are exported."
    )

    def release_plan(self) -> ReleasePlan:
        """The accountant's plan for these settings (``contract.accountant``)."""
        return ReleasePlan(
            rho=self.release_rho,
            delta=self.release_delta,
            cap=self.release_contribution_cap,
            split_items=tuple(sorted(self.release_split.items())),
        )

    def checked_release_plan(self) -> ReleasePlan:
        """The plan, refused (``ValueError`` naming the setting) when its long-run epsilon is
        above ``release_epsilon_ceiling``: the collector does not start past its ceiling."""
        plan = self.release_plan()
        epsilon = plan.long_run().epsilon
        if epsilon > self.release_epsilon_ceiling:
            raise ValueError(
                f"LMCP_COLLECTOR_RELEASE_RHO={self.release_rho:g} over {plan.window_days} days "
                f"gives epsilon {epsilon:.2f}, above LMCP_COLLECTOR_RELEASE_EPSILON_CEILING="
                f"{self.release_epsilon_ceiling:g}"
            )
        return plan

    @model_validator(mode="after")
    def _split_names_every_cube(self) -> CollectorSettings:
        if set(self.release_split) != set(DEFAULT_SPLIT) or any(
            v <= 0 for v in self.release_split.values()
        ):
            raise ValueError("release_split must give every cube a positive share")
        if abs(sum(self.release_split.values()) - 1.0) > 1e-9:
            raise ValueError("release_split's shares must sum to 1")
        if self.release_delta > self.release_delta_ceiling:
            raise ValueError(
                f"release_delta {self.release_delta:g} is above release_delta_ceiling "
                f"{self.release_delta_ceiling:g}"
            )
        labels = [t.label for t in self.steward_tokens]
        if len(set(labels)) != len(labels):
            raise ValueError("steward token labels must be distinct")
        return self
