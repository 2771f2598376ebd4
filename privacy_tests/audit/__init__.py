"""The privacy audit's toolkit, shared by every ``privacy_tests/test_*.py``.

- ``canaries``: hypothesis strategies of realistic private values, each carrying a unique marker;
- ``scan``: search sink bytes for markers, raw and base64/hex/URL/UTF-16/binary-number encoded;
- ``sockets``: a socket-layer guard counting (and refusing) connections and name lookups;
- ``logs``: capture every log record, including loggers that do not propagate;
- ``otel``: in-memory OpenTelemetry exporters and the attribute rules;
- ``schema``: the model walker, the reviewed data catalogue lint, the DuckDB storage rules.
"""

from privacy_tests.audit.canaries import Canary, CanaryKind, canaries, canary, canary_of
from privacy_tests.audit.logs import LogCapture, capture_logs
from privacy_tests.audit.scan import Leak, ScanStats, assert_no_leaks, find_leaks, forms
from privacy_tests.audit.schema import (
    audit_catalogue,
    audit_model,
    audit_storage,
    load_reviewed,
)
from privacy_tests.audit.sockets import SocketGuard

__all__ = [
    "Canary",
    "CanaryKind",
    "Leak",
    "LogCapture",
    "ScanStats",
    "SocketGuard",
    "assert_no_leaks",
    "audit_catalogue",
    "audit_model",
    "audit_storage",
    "canaries",
    "canary",
    "canary_of",
    "capture_logs",
    "find_leaks",
    "forms",
    "load_reviewed",
]
