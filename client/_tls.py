"""One certificate store per process for the client's HTTPS: ``tls_context``.

httpx builds a new SSL context for every ``httpx.Client``, parsing the whole CA bundle each
time: the sender makes a client at each start, the Cloud Skills tools one per request. An
``ssl.SSLContext`` may be shared by any number of clients and threads, so each takes this one,
built the way httpx builds its own (``verify=True``).
"""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["tls_context"]


@functools.cache
def tls_context(*, trust_env: bool) -> ssl.SSLContext:
    """httpx's verifying context: certifi's CA bundle, or with ``trust_env`` the bundle named by
    ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set (read at the first use, like every setting
    of the client). Certificates and host names are checked."""
    return httpx.create_ssl_context(trust_env=trust_env)
