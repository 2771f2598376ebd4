"""The ground floor: what the client, the collector, Cloud Skills and analysis all share.

- ``contract.schema``: the friction signal (the wire contract), its enums and names;
- ``contract.catalogue``: the reviewed tool catalogue;
- ``contract.secrets_scan``: the rules that find secret-looking literals;
- ``contract.days``: ``utc_today``, the one clock (a UTC day) of client and collector.

Imports only the standard library and pydantic; nothing here imports a package above it
(``make check`` enforces the layers, see ``docs/architecture.md``).
"""
