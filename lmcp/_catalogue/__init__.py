"""The sections of ``lmcp.datacatalogue``, one module per source: the wire, the client's files,
storage and exports (plus the text helpers they share)."""
