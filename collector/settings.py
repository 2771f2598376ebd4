"""The collector's settings: values, passed in (``create_app(settings)``), never read at import.

Every field is documented in ``docs/configuration.md`` (a test checks). Environment variables
carry the prefix ``LMCP_COLLECTOR_``; list-valued settings take JSON
(``LMCP_COLLECTOR_READ_TOKENS='["token-a", "token-b"]'``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from cloudskills.principals import SkillPrincipal

__all__ = ["CollectorSettings", "default_db_path"]

MIB = 1024 * 1024


def default_db_path() -> Path:
    """A DuckDB file in the platform's per-user data directory."""
    return platformdirs.user_data_path("lmcp-collector", appauthor=False) / "signals.duckdb"


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
    skill_principals: list[SkillPrincipal] = Field(
        default_factory=list,
        description="Principals of the Cloud Skills API (token, scopes, tier, teams).",
    )
    triage_k: int = Field(
        default=5, ge=2, description="k-anonymity threshold: published groups smaller are hidden."
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

    # -- retention
    retention_days: int = Field(
        default=90, ge=1, description="Signals older than this many days are deleted."
    )
    retention_interval_s: float = Field(
        default=3600.0, gt=0.0, description="How often the retention job runs (and once at start)."
    )

    # -- the lake mode (docs/scaling.md): each flush is one commit to a Delta table
    lake_uri: str | None = Field(
        default=None,
        description="A Delta table the writer appends to instead of db_path: a folder or "
        "s3://bucket/prefix. Unset: the single DuckDB file.",
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
