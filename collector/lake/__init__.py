"""The lake mode: many stateless collectors append to one Delta Lake table (delta-rs), on a
folder or S3-compatible storage; DuckDB reads it through a de-duplicating ``signals`` view."""
