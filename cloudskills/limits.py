"""The limits and closed vocabularies of a Cloud Skill (spec: ``save_cloud_skill``).

The spec's own limits are marked *spec*; the others are LMCP's, documented in
``docs/cloud-skills.md``.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = [
    "COMPONENT_FIELDS",
    "COMPONENT_TYPES",
    "DEFAULT_MIME_BY_SUFFIX",
    "MAX_ARTIFACT_REF_CHARS",
    "MAX_COMPONENTS",
    "MAX_COMPONENT_BYTES",
    "MAX_DESCRIPTION_CHARS",
    "MAX_INSTRUCTIONS_BYTES",
    "MAX_METADATA_BYTES",
    "MAX_NAME_CHARS",
    "MAX_SAVE_BODY_BYTES",
    "MAX_PATH_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_SLUG_CHARS",
    "ROOT_PATH",
    "SCHEMA_VERSION",
    "SCRIPT_INTERPRETERS",
]

SCHEMA_VERSION = "xmemo.cloud_skill.v1"  # spec

MAX_INSTRUCTIONS_BYTES = 64 * 1024  # spec: instructions, UTF-8 bytes
MAX_COMPONENTS = 50  # spec
MAX_COMPONENT_BYTES = 128 * 1024  # spec: each component's content, UTF-8 bytes
MAX_SLUG_CHARS = 64  # spec: slug of 1 to 64 characters
MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 2000
MAX_PATH_CHARS = 512
MAX_METADATA_BYTES = 8 * 1024  # canonical JSON of one component's metadata
MAX_ARTIFACT_REF_CHARS = 1024
MAX_QUERY_CHARS = 256

#: The fixed set of component types (spec: "a type is invalid" otherwise).
COMPONENT_TYPES: frozenset[str] = frozenset(
    {"asset", "example", "reference", "schema", "script", "template"}
)

#: The keys a component object may hold.
COMPONENT_FIELDS: frozenset[str] = frozenset(
    {"type", "logical_path", "content", "artifact_ref", "mime_type", "metadata"}
)

#: The root resource: a skill's instructions, served under this path of its manifest.
ROOT_PATH = "SKILL.md"

#: A script component's ``mime_type`` chooses its interpreter (client side, see execution).
SCRIPT_INTERPRETERS: MappingProxyType[str, str] = MappingProxyType(
    {
        "text/x-python": "python",
        "text/x-shellscript": "sh",
        "application/x-sh": "sh",
    }
)

#: ``mime_type`` when a component gives none: a fixed table (never the host's mimetypes
#: database, so the canonical hash is the same on every machine).
DEFAULT_MIME_BY_SUFFIX: MappingProxyType[str, str] = MappingProxyType(
    {
        ".md": "text/markdown",
        ".txt": "text/plain",
        ".json": "application/json",
        ".yaml": "application/yaml",
        ".yml": "application/yaml",
        ".csv": "text/csv",
        ".html": "text/html",
        ".py": "text/x-python",
        ".sh": "text/x-shellscript",
    }
)

#: The largest save request body: the spec's limits JSON-escaped twice (components_json is a
#: string inside the body) fit, for text without control characters.
MAX_SAVE_BODY_BYTES = 16 * 1024 * 1024

#: A team proposal never approved or rejected is purged this long after it was proposed.
PROPOSAL_RETENTION_DAYS = 30
#: Expired proposals are looked for at most this often (on the requests that read or decide).
PROPOSAL_PURGE_INTERVAL_S = 3600.0
