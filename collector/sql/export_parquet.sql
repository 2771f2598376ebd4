-- The signals table for analysts, as typed columns (Parquet keeps the nested lists).
-- $1: only rows received on or after this day (NULL: all).
SELECT
    CAST(signal_id AS VARCHAR) AS signal_id, schema_version, day, received_day,
    friction_type, error_category, intent_category, tool_attempted, attempts, error_class,
    args, ring, prev1_tool, prev1_outcome, prev2_tool, prev2_outcome,
    app_installed, app_running, app_permitted,
    client_version_major, client_version_minor, client_version_patch, client_platform
FROM signals
WHERE $1::DATE IS NULL OR received_day >= $1::DATE
ORDER BY received_day, signal_id
