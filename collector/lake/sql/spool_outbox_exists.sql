-- Whether the outbox table exists yet (1) or not (0).
SELECT count(*) FROM duckdb_tables() WHERE table_name = 'lake_outbox';
