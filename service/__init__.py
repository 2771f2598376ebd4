"""What both HTTP services (the signal collector and Cloud Skills) share, and nothing else.

``service.db`` (DuckDB on one worker thread, migrations from a service's own folder),
``service.errors`` (RFC 9457 problems, the catch-all, the handlers), ``service.auth`` (bearer
tokens), ``service.sql`` (named ``.sql`` files). It sits above ``contract`` and below the
services; it never imports either service (``make check`` enforces the layers).
"""
