"""Development code of the lake mode: a loopback object store and S3 tools for the tests,
``make demo-lake`` and the benchmarks. Not part of the product (not in the wheel)."""
