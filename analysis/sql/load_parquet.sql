-- Load a Parquet export (GET /v1/signals/export?format=parquet, collector/sql/export_parquet.sql)
-- into a fresh, migrated in-memory `signals` table. Casting back to the ENUM types refuses any
-- value outside the vocabularies, exactly as ingestion does.
INSERT INTO signals (
    signal_id, schema_version, day, received_day, friction_type, error_category,
    intent_category, tool_attempted, attempts, error_class, args, ring,
    prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
)
SELECT
    CAST(signal_id AS UUID), schema_version, day, received_day, friction_type, error_category,
    intent_category, tool_attempted, attempts, error_class, args, ring,
    prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
FROM read_parquet($path);
