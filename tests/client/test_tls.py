"""The client's HTTPS verifies what httpx verifies, with one certificate store per process
(``client._tls``): the sender and the Cloud Skills tools share it instead of loading the CA
bundle for each client they make."""

from __future__ import annotations

import ssl

import httpx

from client._tls import tls_context


def test_the_shared_context_checks_certificates_and_host_names() -> None:
    for trust_env in (False, True):
        context = tls_context(trust_env=trust_env)
        assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
        assert context.cert_store_stats()["x509_ca"] > 0  # a CA bundle is loaded
        assert tls_context(trust_env=trust_env) is context  # built once


def test_it_trusts_what_httpx_trusts_by_default() -> None:
    ours = tls_context(trust_env=False)
    theirs = httpx.create_ssl_context(trust_env=False)
    assert ours.cert_store_stats() == theirs.cert_store_stats()
    assert (ours.minimum_version, ours.options) == (theirs.minimum_version, theirs.options)
