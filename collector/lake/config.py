"""The lake's settings: the collector's ``lake_*`` settings as a ``LakeStore``."""

from __future__ import annotations

from collector.lake.store import LakeStore
from collector.settings import CollectorSettings

__all__ = ["lake_from_settings", "storage_options"]


def storage_options(settings: CollectorSettings) -> dict[str, str]:
    """delta-rs's object-store options from the ``lake_s3_*`` settings (S3 URIs only)."""
    if not (settings.lake_uri or "").startswith("s3://"):
        return {}
    options = {"AWS_REGION": settings.lake_s3_region}
    if settings.lake_s3_endpoint:
        options["AWS_ENDPOINT_URL"] = settings.lake_s3_endpoint
    if settings.lake_s3_key_id:
        options["AWS_ACCESS_KEY_ID"] = settings.lake_s3_key_id
    if settings.lake_s3_secret is not None:
        options["AWS_SECRET_ACCESS_KEY"] = settings.lake_s3_secret.get_secret_value()
    if settings.lake_s3_allow_http:
        options["AWS_ALLOW_HTTP"] = "true"
    return options


def lake_from_settings(settings: CollectorSettings, uri: str | None = None) -> LakeStore:
    """The store of ``uri`` (default: ``lake_uri``), with the S3 settings."""
    target = uri or settings.lake_uri
    if not target:
        raise ValueError("no lake URI (--lake or LMCP_COLLECTOR_LAKE_URI)")
    return LakeStore(target, storage_options(settings.model_copy(update={"lake_uri": target})))
